// Internals of the Metal code generator (src/codegen/metal): the MSL prelude and the emitter of
// one kernel. Integer expression text is the C generator's (wrapping helpers), so the backends
// compute the same values.
#ifndef TESSEL_SRC_CODEGEN_METAL_CODEGEN_METAL_H_
#define TESSEL_SRC_CODEGEN_METAL_CODEGEN_METAL_H_

#include <tessel/codegen/codegen_metal.h>
#include <tessel/ir/function.h>

#include <string>

namespace tessel {
namespace codegen {

// "codegen metal: <what> in <kernel>" as a ValueError.
[[noreturn]] void MetalUnsupported(const std::string& what, const std::string& kernel);

// The fixed start of every MSL unit.
std::string MetalPrelude(const MetalOptions& options);

// The text of one `kernel void` function named `name` (its argument struct first, when it has
// scalars); fills `info` with how to bind it.
std::string EmitMetalKernel(const ir::PrimFunc& func, const std::string& name,
                            const MetalOptions& options, runtime::MetalKernelInfo* info);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_SRC_CODEGEN_METAL_CODEGEN_METAL_H_
