// The MetalExecutor of Apple platforms ("metal"), installed when libtessel_runtime loads: encodes a
// launch plan as one dispatchThreadgroups on the compute encoder a framework context lends (or on
// an encoder it makes on the lent command buffer and ends), and offers tessel's own queue as the
// default context. Loading the library touches no Metal API; the first launch does.
//
// NOTE: written without a Mac; not compiled or run (docs/metal.md, "Testing on a Mac").
#include <algorithm>

#include "metal_apple.h"

namespace tessel {
namespace runtime {
namespace metal_apple {

namespace {

// Checks what Metal would otherwise catch only with its validation layer (or not at all), naming
// the kernel: the pipeline's thread limit, threadgroup memory, and each buffer's device and
// offset. Runs before an encoder is made, so a failed check leaves nothing half-encoded.
void CheckPlan(const MetalLaunchPlan& plan, id<MTLComputePipelineState> pipeline,
               id<MTLDevice> device, NSUInteger threadgroup_dynamic) {
  const MetalKernelInfo& info = plan.info();
  const NSUInteger max_threads = pipeline.maxTotalThreadsPerThreadgroup;
  if (plan.threads() > static_cast<int64_t>(max_threads)) {
    TVM_FFI_THROW(ValueError) << info.name << ": " << plan.threads() << " threads per threadgroup ("
                              << plan.group[0] << " x " << plan.group[1] << " x " << plan.group[2]
                              << ") exceed its pipeline's maxTotalThreadsPerThreadgroup of "
                              << max_threads << " on " << ToStd(device.name)
                              << " (the limit depends on the registers the kernel uses)";
  }
  const NSUInteger threadgroup_bytes = pipeline.staticThreadgroupMemoryLength + threadgroup_dynamic;
  if (threadgroup_bytes > device.maxThreadgroupMemoryLength) {
    TVM_FFI_THROW(ValueError) << info.name << ": needs " << threadgroup_bytes
                              << " bytes of threadgroup memory (" << threadgroup_dynamic
                              << " dynamic + " << pipeline.staticThreadgroupMemoryLength
                              << " static), more than the " << device.maxThreadgroupMemoryLength
                              << " bytes of " << ToStd(device.name);
  }
  for (const MetalBufferBinding& b : plan.buffers) {
    if (b.buffer == nullptr) continue;
    id<MTLBuffer> buffer = (__bridge id<MTLBuffer>)b.buffer;
    if (buffer.device.registryID != device.registryID) {
      TVM_FFI_THROW(ValueError) << info.name << ": the buffer at [[buffer(" << b.index
                                << ")]] belongs to " << ToStd(buffer.device.name)
                                << ", the launch encodes on " << ToStd(device.name);
    }
    if (b.offset > buffer.length) {
      TVM_FFI_THROW(ValueError) << info.name << ": the buffer at [[buffer(" << b.index
                                << ")]] has byte offset " << b.offset << " past its end ("
                                << buffer.length << " bytes)";
    }
  }
}

class AppleMetalExecutor final : public MetalExecutor {
 public:
  const char* name() const override { return "metal"; }

  void Encode(const MetalLaunchPlan& plan, void* command_buffer, void* encoder) override {
    WithPool(plan.info().name.c_str(), [&] {
      const MetalKernelInfo& info = plan.info();
      id<MTLComputeCommandEncoder> enc = (__bridge id<MTLComputeCommandEncoder>)encoder;
      id<MTLCommandBuffer> cb = (__bridge id<MTLCommandBuffer>)command_buffer;
      if (enc == nil && cb == nil) {
        TVM_FFI_THROW(RuntimeError) << info.name << ": the Metal context lent neither a command "
                                    << "buffer nor a compute encoder";
      }
      id<MTLDevice> device = enc != nil ? enc.device : cb.device;
      id<MTLComputePipelineState> pipeline = GetPipeline(plan, device);
      // Metal wants threadgroup memory lengths in multiples of 16 bytes (the plan's are), and a
      // kernel that declares [[threadgroup(0)]] gets at least one such block.
      const NSUInteger dynamic =
          info.threadgroup_dynamic ? std::max<NSUInteger>(plan.threadgroup_dynamic_bytes, 16) : 0;
      CheckPlan(plan, pipeline, device, dynamic);

      const bool own_encoder = enc == nil;
      if (own_encoder) {
        enc = [cb computeCommandEncoder];
        if (enc == nil) {
          TVM_FFI_THROW(RuntimeError) << info.name << ": could not create a compute encoder on "
                                      << "the lent command buffer (is another encoder still open "
                                      << "on it?)";
        }
      }
      [enc setComputePipelineState:pipeline];
      for (const MetalBufferBinding& b : plan.buffers) {
        // A NULL handle unbinds the slot, so a borrowed encoder's earlier binding is not read.
        [enc setBuffer:(__bridge id<MTLBuffer>)b.buffer offset:b.offset atIndex:b.index];
      }
      if (!plan.arg_bytes.empty()) {
        [enc setBytes:plan.arg_bytes.data() length:plan.arg_bytes.size() atIndex:info.args_index];
      }
      if (info.threadgroup_dynamic) [enc setThreadgroupMemoryLength:dynamic atIndex:0];
      [enc dispatchThreadgroups:MTLSizeMake(plan.grid[0], plan.grid[1], plan.grid[2])
          threadsPerThreadgroup:MTLSizeMake(plan.group[0], plan.group[1], plan.group[2])];
      if (own_encoder) [enc endEncoding];
    });
  }

  const TesselMetalContext* DefaultContext(int32_t device_id) override {
    return DefaultQueueContext(device_id);
  }
};

// Installs the executor when libtessel_runtime is loaded. SetMetalExecutor only swaps a
// constant-initialized atomic, so the order of static initializers does not matter. The executor
// is never destroyed: kernels may still launch while the process exits.
[[maybe_unused]] const bool kInstalled = [] {
  SetMetalExecutor(new AppleMetalExecutor());
  return true;
}();

}  // namespace

}  // namespace metal_apple
}  // namespace runtime
}  // namespace tessel
