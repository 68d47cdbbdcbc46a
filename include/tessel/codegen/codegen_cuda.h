// The CUDA device code generator: the device kernels of a lowered, split module (the functions
// with attrs["tessel.device_kernel"], see docs/codegen.md "CUDA") to one CUDA C++ translation unit.
//
// Each kernel becomes `extern "C" __global__ void <global_symbol>(params)`, with
// __launch_bounds__ when its block size is constant and __cluster_dims__ when the function has
// attrs["tessel.cluster_dims"]. Thread indices come from the body's "thread_extent" attributes,
// whose variable is named after its thread tag (threadIdx.x, or threadIdx_x as the text format
// spells it). Scalar semantics equal the C backend's (shared helpers: wrapping integer arithmetic,
// floor division, float16/bfloat16 computed in float with one rounding). The same module always
// gives byte-identical text; anything it cannot translate exactly is a ValueError naming the
// construct and the kernel.
#ifndef TESSEL_CODEGEN_CODEGEN_CUDA_H_
#define TESSEL_CODEGEN_CODEGEN_CUDA_H_

#include <tessel/ir/module.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace codegen {

// The CUDA source of the device kernels of `mod` (functions without "tessel.device_kernel" are
// skipped) for `arch` ("sm_90", as CUDAArch gives it): a kernel whose constant shared memory is
// more than that architecture allows a block is a ValueError naming the limit and the arch; ""
// holds kernels to the most that any architecture allows. Also the Python global
// "tessel.codegen.GenerateCUDA" (without an arch). Compile it with CompileCUDA. With `fast_math`
// (the target's -fast-math) float max and min are fmaxf and fminf (one instruction; the non-NaN
// operand when one is NaN) instead of the selects that match the C backend; compile such source
// with CUDACompileOptions::fast_math.
//
// A kernel whose wide loads from pointer parameters test their alignment at run time (callers
// are held only to element alignment) is followed by a variant that loads without the test,
// `<symbol>_aligned`: the launch picks it when those pointers are aligned. The test's scalar
// fallback is predicated into the load stream by ptxas and the wide loads wait behind it
// (LayerNorm over 2048 rows of 32768 float16 on the H200: 99.5 us, 76.6 us without the test;
// docs/performance.md). Stores keep their test in both: unchecked, nvcc computed outputs ahead of
// their stores (bfloat16 softmax at 32768 x 512 threads: 80 registers, not 61). `variants` gets,
// by kernel symbol, each variant's name and the parameters it assumes aligned.
struct CudaAlignedVariant {
  std::string name;
  std::vector<std::pair<uint32_t, uint32_t>> params;  // {param, bytes}, by increasing param
};
std::string GenerateCUDA(const ir::IRModule& mod, const std::string& arch = "",
                         bool fast_math = false,
                         std::map<std::string, CudaAlignedVariant>* variants = nullptr);

// Whether `func` is a device kernel (attrs["tessel.device_kernel"] is true).
bool IsDeviceKernel(const ir::PrimFunc& func);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_CODEGEN_CODEGEN_CUDA_H_
