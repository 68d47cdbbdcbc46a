// Internals of the CUDA code generator (src/codegen/cuda): the prelude, the dynamic shared memory
// layout, and the emitter of one device kernel. Names, scalar types and scalar expression text are
// the C generator's (src/codegen/c/codegen_c.h), so both backends compute the same values.
#ifndef TESSEL_SRC_CODEGEN_CUDA_CODEGEN_CUDA_H_
#define TESSEL_SRC_CODEGEN_CUDA_CODEGEN_CUDA_H_

#include <tessel/ir/function.h>

#include <string>
#include <vector>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

// "codegen cuda: <what> in <kernel>" as a ValueError.
[[noreturn]] void CudaUnsupported(const std::string& what, const std::string& kernel);

// The fixed start of every CUDA unit; `grid_sync` adds cooperative_groups.
std::string CudaPrelude(bool grid_sync);

// The text of one `extern "C" __global__` kernel named `name`. *uses_grid_sync is set when the body
// calls grid_sync.
std::string EmitCudaKernel(const ir::PrimFunc& func, const std::string& name, bool* uses_grid_sync);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_SRC_CODEGEN_CUDA_CODEGEN_CUDA_H_
