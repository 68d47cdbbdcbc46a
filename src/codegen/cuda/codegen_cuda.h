// Internals of the CUDA code generator (src/codegen/cuda): the prelude, the dynamic shared memory
// layout, and the emitter of one device kernel. Names, scalar types and scalar expression text are
// the C generator's (src/codegen/c/codegen_c.h), so both backends compute the same values.
#ifndef TESSEL_SRC_CODEGEN_CUDA_CODEGEN_CUDA_H_
#define TESSEL_SRC_CODEGEN_CUDA_CODEGEN_CUDA_H_

#include <tessel/ir/function.h>
#include <tessel/ir/module.h>
#include <tessel/ir/op.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

// "codegen cuda: <what> in <kernel>" as a ValueError.
[[noreturn]] void CudaUnsupported(const std::string& what, const std::string& kernel);

// The fixed start of every CUDA unit; `grid_sync` adds cooperative_groups.
std::string CudaPrelude(bool grid_sync, bool fast_math);

// The text of one `extern "C" __global__` kernel named `name`. *uses_grid_sync is set when the body
// calls grid_sync. Its constant shared memory is held to the limit of `arch` ("sm_90"; "" for
// the most any architecture allows). Its wide loads from pointer parameters test their alignment
// at run time (callers are held only to element alignment); `checked_loads` gets those parameters
// with the bytes they need ({param, bytes}, by increasing param). With `aligned_params` the kernel
// assumes them aligned and loads without the test: the variant that the launch picks when the
// pointers are aligned (include/tessel/runtime/cuda_module.h).
std::string EmitCudaKernel(const ir::PrimFunc& func, const std::string& name,
                           const std::string& arch, bool* uses_grid_sync,
                           bool aligned_params = false,
                           std::vector<std::pair<uint32_t, uint32_t>>* checked_loads = nullptr);

// The CUDA text of a call of a Hopper builtin (cuda_hopper.cc); `arg(i)` is the emitted text of
// argument i. ValueError naming `kernel` for operands PTX needs as constants that are not.
std::string EmitHopperCall(const ir::CallNode* op, const std::function<std::string(size_t)>& arg,
                           const std::string& kernel);
// The device helpers of the Hopper builtins that `mod` calls ("" when none).
std::string HopperPrelude(const ir::IRModule& mod);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_SRC_CODEGEN_CUDA_CODEGEN_CUDA_H_
