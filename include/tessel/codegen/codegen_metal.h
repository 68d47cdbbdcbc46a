// The Metal code generator: the device kernels of a lowered, split module (the functions with
// attrs["tessel.device_kernel"], the same IR the CUDA generator takes) to one MSL translation
// unit, plus the table that says how to bind each kernel (include/tessel/runtime/metal_module.h).
//
// Each kernel becomes `kernel void <global_symbol>(...)`: buffer parameters as `device T*` at
// [[buffer(i)]] in parameter order, scalar parameters packed into one `constant <name>_args_t&`
// struct at the next buffer index (sent with setBytes), dynamic threadgroup memory as a
// `threadgroup uchar*` at [[threadgroup(0)]], thread and group indices from
// [[thread_position_in_threadgroup]] and [[threadgroup_position_in_grid]]. Scalar semantics equal
// the C backend's (wrapping integer helpers, floor division; float16/bfloat16 computed in float and
// rounded once). Anything Metal cannot do, or this generator cannot translate exactly, is a
// ValueError "codegen metal: <what> in <kernel>" that the build prefixes with the statement's
// file:line:col: float64, atomics other than atomic_add_at of float32/int32/uint32, more than 32 KB
// of threadgroup memory, more than 1024 threads per threadgroup, more than 31 buffers, a barrier
// under a condition that depends on the thread, bfloat below MSL 3.1, CUDA-only builtins
// (grid_sync, ldmatrix).
#ifndef TESSEL_CODEGEN_CODEGEN_METAL_H_
#define TESSEL_CODEGEN_CODEGEN_METAL_H_

#include <tessel/ir/module.h>
#include <tessel/runtime/metal_module.h>
#include <tessel/target/target.h>

#include <string>

namespace tessel {
namespace codegen {

struct MetalOptions {
  std::string msl_version = "3.1";  // -msl=2.4|3.0|3.1|3.2|4.0
  bool fast_math = false;           // -fast-math; safe math (IEEE inf/NaN) by default

  // The options of a "metal ..." target.
  static MetalOptions FromTarget(const target::Target& target);
};

// The MSL source and kernel table of the device kernels of `mod` (functions without
// "tessel.device_kernel" are skipped). Also the Python global "tessel.codegen.GenerateMetal"
// (module, target string) -> source.
runtime::MetalModuleData GenerateMetal(const ir::IRModule& mod, const MetalOptions& options);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_CODEGEN_CODEGEN_METAL_H_
