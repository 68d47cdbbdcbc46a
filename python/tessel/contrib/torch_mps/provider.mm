// The "torch.mps" Metal context (include/tessel/runtime/metal_context.h): tessel's Metal launches
// encoded into PyTorch's MPS command buffer, in order with torch's own MPS work. The only tessel
// file that includes PyTorch headers; built on first use by tessel.contrib.torch_mps with
// torch.utils.cpp_extension (macOS only), never part of libtessel.
//
// with_encoder, per launch:
//   - the stream is at::mps::getCurrentMPSStream(), the calling thread's current MPS stream, which
//     is where torch's own kernels go (torch::mps::get_command_buffer() and get_dispatch_queue()
//     always name the default stream);
//   - the body runs on that stream's serial dispatch queue (dispatch_sync), or inline when the
//     calling code already runs on it: dispatch_sync onto the current serial queue deadlocks;
//   - the body gets the stream's current command buffer and torch's coalesced compute encoder
//     (stream->commandEncoder()), the way torch's own Metal kernels and AOTInductor's shim_mps
//     encode; tessel sets every binding its kernel reads and never ends the encoder. Both are
//     fetched inside the queue on every launch and never kept: torch's commitAndContinue replaces
//     the command buffer behind them.
// commit(wait) runs stream->synchronize(COMMIT or COMMIT_AND_WAIT) on the stream's queue, as
// torch's synchronizeAllMPSStreams does for each stream.
//
// Nothing here owns an Objective-C object (everything is borrowed for one call), so the file is
// correct with or without ARC; torch.utils.cpp_extension compiles it without.
//
// NOTE: written without a Mac; not compiled or run (docs/metal.md, "Testing on a Mac").
#include <ATen/mps/MPSStream.h>
#include <tessel/runtime/metal_context.h>
#include <torch/extension.h>

#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <dispatch/dispatch.h>

#include <cstdint>
#include <exception>
#include <string>

namespace {

thread_local std::string t_last_error;

// The key of the mark this file puts on torch's serial queues: the queue's own address, set as
// queue-specific data the first time a launch uses the queue. dispatch_get_specific() then says
// whether the calling code runs on that queue (or on one that targets it).
char kQueueMarkKey;

bool OnQueue(dispatch_queue_t queue) {
  void* mark = (__bridge void*)queue;
  if (dispatch_queue_get_specific(queue, &kQueueMarkKey) != mark) {
    dispatch_queue_set_specific(queue, &kQueueMarkKey, mark, nullptr);
  }
  return dispatch_get_specific(&kQueueMarkKey) == mark;
}

// Runs work() on `queue` (inline when already on it). What it throws stays inside the block (an
// exception must not unwind through libdispatch) and comes back as the message; "" on success.
std::string RunOnQueue(dispatch_queue_t queue, void (^work)(void)) {
  __block std::string error;
  void (^guarded)(void) = ^{
    @autoreleasepool {
      try {
        work();
      } catch (const std::exception& e) {
        error = e.what();
        if (error.empty()) error = "C++ exception without a message";
      } catch (...) {
        error = "unknown exception";
      }
    }
  };
  if (OnQueue(queue)) {
    guarded();
  } else {
    dispatch_sync(queue, guarded);
  }
  return error;
}

int Fail(const std::string& message) {
  t_last_error = "torch.mps: " + message;
  return 1;
}

int WithEncoder(void* self, int32_t device_id, TesselMetalEncodeBody body, void* user) {
  t_last_error.clear();
  if (device_id != 0) {
    return Fail("PyTorch has one MPS device (0); the launch is for metal:" +
                std::to_string(device_id));
  }
  __block int rc = 0;
  std::string error;
  try {
    at::mps::MPSStream* stream = at::mps::getCurrentMPSStream();
    error = RunOnQueue(stream->queue(), ^{
      id<MTLComputeCommandEncoder> encoder = stream->commandEncoder();
      id<MTLCommandBuffer> command_buffer = stream->commandBuffer();
      rc = body(user, (__bridge void*)command_buffer, (__bridge void*)encoder);
    });
  } catch (const std::exception& e) {
    error = e.what();
  }
  return error.empty() ? rc : Fail(error);
}

int Commit(void* self, int32_t device_id, int32_t wait) {
  t_last_error.clear();
  if (device_id != 0) {
    return Fail("PyTorch has one MPS device (0); commit was asked for metal:" +
                std::to_string(device_id));
  }
  const at::mps::SyncType type =
      wait ? at::mps::SyncType::COMMIT_AND_WAIT : at::mps::SyncType::COMMIT;
  std::string error;
  try {
    at::mps::MPSStream* stream = at::mps::getCurrentMPSStream();
    error = RunOnQueue(stream->queue(), ^{
      stream->synchronize(type);
    });
  } catch (const std::exception& e) {
    error = e.what();
  }
  return error.empty() ? 0 : Fail(error);
}

const char* LastError(void* self) { return t_last_error.empty() ? nullptr : t_last_error.c_str(); }

const TesselMetalContext kContext = {
    TESSEL_METAL_CONTEXT_MAGIC,
    TESSEL_METAL_CONTEXT_ABI_VERSION,
    "torch.mps",
    nullptr,
    &WithEncoder,
    &Commit,
    &LastError,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const TesselMetalContext*
tessel_torch_mps_context(void) {
  return &kContext;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "The torch.mps Metal context of tessel (python/tessel/contrib/torch_mps/provider.mm)";
  m.def(
      "context_address",
      [] { return reinterpret_cast<std::uintptr_t>(tessel_torch_mps_context()); },
      "The address of the static TesselMetalContext named torch.mps");
}
