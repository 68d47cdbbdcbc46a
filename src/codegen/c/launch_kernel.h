// Host-side kernel launches in the C code generator (launch_kernel.cc): the `launch_kernel` builtin
// becomes a tvm-ffi call of the launch function exported by the library's imported tessel_cuda
// module (include/tessel/runtime/cuda_module.h).
#ifndef TESSEL_SRC_CODEGEN_C_LAUNCH_KERNEL_H_
#define TESSEL_SRC_CODEGEN_C_LAUNCH_KERNEL_H_

#include <string>
#include <vector>

#include "codegen/c/codegen_c.h"

namespace tessel {
namespace codegen {

// Whether `node` is a Call of the launch_kernel op.
bool IsLaunchCall(const tvm::ffi::ObjectRef& node);

// Whether the body of `func` calls launch_kernel.
bool LaunchesKernels(const ir::PrimFunc& func);

// The GPU `func`'s tensors live on: "metal" when its attr "target" is "metal" (or "metal
// <options>"), "cuda" when it is "cuda ..." or the function launches kernels, else "" (the CPU).
// For a GPU the host wrapper requires tensors of that device type, all on one device, and passes
// that device's id to the kernel as `tsl_device_id`. For metal it also passes each buffer as a
// TesselMetalBufferRef (include/tessel/runtime/metal_context.h): the tensor's MTLBuffer handle
// and byte offset, never an address computed from the handle.
std::string TargetGPU(const ir::PrimFunc& func);

// The unit-level part a translation unit with launches needs once, after the prelude: the
// definition of __tvm_ffi__library_ctx and the tsl_launch helpers.
const char* LaunchSection();

// One launch statement: C statements of the block that prepares it (`setup`, in order, each one
// line) and `call`, a C expression that performs it and is nonzero when it failed (the error is
// then in tsl_err; the caller jumps to its cleanup).
struct LaunchCode {
  std::vector<std::string> setup;
  std::string call;
};
LaunchCode EmitLaunch(CEmitter* cg, const ir::CallNode* call);

}  // namespace codegen
}  // namespace tessel

#endif  // TESSEL_SRC_CODEGEN_C_LAUNCH_KERNEL_H_
