// Shared by the Objective-C++ files of the Metal runtime on Apple (metal_pipelines.mm,
// metal_default_queue.mm, metal_executor.mm; built by cmake/TesselMetal.cmake, never elsewhere).
//
// Ownership: ARC. Metal objects that cross the C ABI travel as void* through __bridge casts
// (borrowed, never retained past the call); everything tessel keeps is held by __strong members.
//
// NOTE: this code was written without a Mac and has not been compiled or run (docs/metal.md,
// "Testing on a Mac").
#ifndef TESSEL_RUNTIME_METAL_METAL_APPLE_H_
#define TESSEL_RUNTIME_METAL_METAL_APPLE_H_

#if !__has_feature(objc_arc)
#error "the Metal runtime is written for ARC: compile it with -fobjc-arc (cmake/TesselMetal.cmake)"
#endif

// The C++ headers first: Apple's headers define macros (YES, NO, nil, ...) that they never need.
#include <tessel/runtime/metal_module.h>
#include <tvm/ffi/error.h>

#include <exception>
#include <string>

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

// The SDK a file is compiled against (not the OS it runs on, which @available checks): newer
// symbols exist only in newer SDKs.
#if defined(__MAC_OS_X_VERSION_MAX_ALLOWED) && __MAC_OS_X_VERSION_MAX_ALLOWED >= 150000
#define TESSEL_METAL_SDK_MACOS_15 1  // mathMode, mathFloatingPointFunctions, MSL 3.2
#endif
#if defined(__MAC_OS_X_VERSION_MAX_ALLOWED) && __MAC_OS_X_VERSION_MAX_ALLOWED >= 260000
#define TESSEL_METAL_SDK_MACOS_26 1  // MSL 4.0, MTLGPUFamilyMetal4
#endif

namespace tessel {
namespace runtime {
namespace metal_apple {

// The UTF-8 text of `s` ("" for nil).
inline std::string ToStd(NSString* s) {
  const char* p = s != nil ? s.UTF8String : nullptr;
  return p != nullptr ? std::string(p) : std::string();
}

// Runs f() inside an @autoreleasepool and rethrows what it throws after the pool is drained: an
// exception that leaves an @autoreleasepool skips its pop. A C++ exception is rethrown as is; an
// Objective-C exception (NSException) becomes a RuntimeError that names `what`, so none reaches
// the C ABI of tvm-ffi or of a framework context.
template <typename F>
void WithPool(const char* what, F&& f) {
  std::exception_ptr error;
  std::string objc_error;
  @autoreleasepool {
    try {
      @try {
        f();
      } @catch (NSException* e) {
        objc_error = ToStd(e.name) + ": " + ToStd(e.reason);
      } @catch (id e) {
        objc_error = "(not an NSException) " + ToStd([e description]);
      }
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  if (!objc_error.empty()) {
    TVM_FFI_THROW(RuntimeError) << what << ": Objective-C exception " << objc_error;
  }
}

// The lines of `source` that a Metal compiler message points at ("program_source:LINE:COL: ..."),
// each as "  LINE | text", in the order the message first names them (at most 8). Empty when the
// message names none.
std::string QuoteSourceLines(const std::string& message, const std::string& source);

// The compute pipeline of `plan`'s kernel on `device`: compiled on first use from the module's
// MSL (one MTLLibrary per device and source), cached for the process. Thread-safe. A compile
// error is a RuntimeError with the compiler's message and the MSL lines it points at.
id<MTLComputePipelineState> GetPipeline(const MetalLaunchPlan& plan, id<MTLDevice> device);

// The tessel-owned context of Metal device `device_id` (MTLCopyAllDevices order): a command queue
// with one pending command buffer that successive launches share. NULL when the machine has no
// Metal device; ValueError for an id past the last device.
const TesselMetalContext* DefaultQueueContext(int32_t device_id);

}  // namespace metal_apple
}  // namespace runtime
}  // namespace tessel

#endif  // TESSEL_RUNTIME_METAL_METAL_APPLE_H_
