// The default Metal context of each device ("tessel.default", step 3 of the lookup in
// metal_context.h): what a launch uses when neither its thread nor the tvm-ffi stream slot lends a
// framework's command buffer. Standalone use: the caller orders tessel's work against other
// frameworks itself (their synchronize before, tessel.metal.synchronize() after).
//
// Per device: a tessel-owned MTLCommandQueue and one pending command buffer with one open compute
// encoder that successive launches share (batching as in TVM's Metal stream): a launch does not
// commit. The pending buffer is committed by commit() (tessel.metal.synchronize() /
// tessel.runtime.metal_commit), and on its own after kMaxBatch launches so that it stays bounded;
// until a commit the GPU has not started the work.
//
// Errors of committed command buffers are recorded by their completion handlers and raised by
// the next launch or commit on that device, once each; commit(wait) also reads the status of the
// buffers it waited for, so the error of a waited-for buffer is never missed.
//
// Device ids index MTLCopyAllDevices(); with one device (or none listed, as in headless sessions)
// MTLCreateSystemDefaultDevice() is device 0. Queues are created on first use and live for the
// process.
//
// NOTE: written without a Mac; not compiled or run (docs/metal.md, "Testing on a Mac").
#include <algorithm>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "metal_apple.h"

namespace tessel {
namespace runtime {
namespace metal_apple {

namespace {

// Launches batched into one command buffer before it is committed without being asked.
constexpr int kMaxBatch = 256;

thread_local std::string t_last_error;

// Runs f() for a C entry point of the context: 0, or 1 with the message kept for last_error().
template <typename F>
int Guarded(F&& f) noexcept {
  t_last_error.clear();
  try {
    WithPool("tessel.default Metal context", std::forward<F>(f));
    return 0;
  } catch (const tvm::ffi::Error& e) {
    t_last_error = e.kind() + ": " + e.message();
  } catch (const std::exception& e) {
    t_last_error = e.what();
  } catch (...) {
    t_last_error = "unknown C++ exception";
  }
  return 1;
}

const std::vector<id<MTLDevice>>& Devices() {
  static const std::vector<id<MTLDevice>>* devices = [] {
    auto* list = new std::vector<id<MTLDevice>>();
    @autoreleasepool {
      NSArray<id<MTLDevice>>* all = MTLCopyAllDevices();
      if (all.count > 1) {
        for (id<MTLDevice> device in all) list->push_back(device);
      } else if (id<MTLDevice> device = MTLCreateSystemDefaultDevice()) {
        list->push_back(device);
      }
    }
    return list;
  }();
  return *devices;
}

std::string Describe(id<MTLCommandBuffer> cb) {
  NSError* error = cb.error;
  return "a command buffer of " + ToStd(cb.label) + " on " + ToStd(cb.device.name) +
         " failed: " + (error != nil ? ToStd(error.localizedDescription) : "no error given") +
         " (MTLCommandBufferError " + std::to_string(error != nil ? error.code : 0) + ")";
}

class DeviceQueue {
 public:
  DeviceQueue(int32_t index, id<MTLDevice> device) : index_(index), device_(device) {
    queue_ = [device newCommandQueue];
    if (queue_ == nil) {
      TVM_FFI_THROW(RuntimeError) << "Metal: could not create a command queue on "
                                  << ToStd(device.name);
    }
    queue_.label = @"tessel.default";
    context_.magic = TESSEL_METAL_CONTEXT_MAGIC;
    context_.abi_version = TESSEL_METAL_CONTEXT_ABI_VERSION;
    context_.name = "tessel.default";
    context_.self = this;
    context_.with_encoder = &DeviceQueue::WithEncoder;
    context_.commit = &DeviceQueue::Commit;
    context_.last_error = &DeviceQueue::LastError;
  }

  const TesselMetalContext* context() const { return &context_; }

 private:
  using Committed = std::pair<uint64_t, id<MTLCommandBuffer>>;  // serial, buffer

  static int WithEncoder(void* self, int32_t device_id, TesselMetalEncodeBody body, void* user) {
    auto* q = static_cast<DeviceQueue*>(self);
    int rc = 0;
    int failed = Guarded([&] {
      q->CheckDevice(device_id);
      std::lock_guard<std::mutex> lock(q->mu_);
      q->RaiseRecordedFailure();
      if (q->encoder_ == nil) {
        if (q->pending_ == nil) q->NewCommandBuffer();
        q->encoder_ = [q->pending_ computeCommandEncoder];
        if (q->encoder_ == nil) {
          TVM_FFI_THROW(RuntimeError)
              << "Metal: could not create a compute encoder on " << ToStd(q->device_.name);
        }
      }
      rc = body(user, (__bridge void*)q->pending_, (__bridge void*)q->encoder_);
      if (++q->batched_ >= kMaxBatch) q->FlushLocked();
    });
    return failed ? failed : rc;
  }

  static int Commit(void* self, int32_t device_id, int32_t wait) {
    auto* q = static_cast<DeviceQueue*>(self);
    return Guarded([&] {
      q->CheckDevice(device_id);
      {
        std::lock_guard<std::mutex> lock(q->mu_);
        q->FlushLocked();
      }
      if (wait) q->WaitAll();
      q->RaiseRecordedFailure();
    });
  }

  static const char* LastError(void*) {
    return t_last_error.empty() ? nullptr : t_last_error.c_str();
  }

  void CheckDevice(int32_t device_id) const {
    if (device_id != index_) {
      TVM_FFI_THROW(ValueError) << "the tessel.default context of metal:" << index_
                                << " was asked to encode for metal:" << device_id;
    }
  }

  // Under mu_.
  void NewCommandBuffer() {
    id<MTLCommandBuffer> cb = [queue_ commandBuffer];
    if (cb == nil) {
      TVM_FFI_THROW(RuntimeError) << "Metal: could not create a command buffer on "
                                  << ToStd(device_.name);
    }
    const uint64_t serial = next_serial_++;
    cb.label = [NSString stringWithFormat:@"tessel.default #%llu", (unsigned long long)serial];
    DeviceQueue* q = this;  // queues live for the process
    [cb addCompletedHandler:^(id<MTLCommandBuffer> done) {
      @autoreleasepool {
        q->Completed(serial, done.status == MTLCommandBufferStatusError ? Describe(done) : "");
      }
    }];
    pending_ = cb;
    pending_serial_ = serial;
  }

  // Under mu_: ends the encoder and commits the pending command buffer, if any.
  void FlushLocked() {
    if (encoder_ != nil) {
      [encoder_ endEncoding];
      encoder_ = nil;
    }
    if (pending_ != nil) {
      {
        std::lock_guard<std::mutex> lock(done_mu_);  // before commit: the handler looks for it
        in_flight_.emplace_back(pending_serial_, pending_);
      }
      [pending_ commit];
      pending_ = nil;
      batched_ = 0;
    }
  }

  // Waits for every committed command buffer and records the first failure among them that
  // was not raised yet (its completion handler may not have run when the wait returns).
  void WaitAll() {
    std::vector<Committed> waiting;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      waiting.assign(in_flight_.begin(), in_flight_.end());
    }
    for (const Committed& c : waiting) [c.second waitUntilCompleted];
    std::lock_guard<std::mutex> lock(done_mu_);
    for (const Committed& c : waiting) {
      if (failure_.empty() && c.first > reported_serial_ &&
          c.second.status == MTLCommandBufferStatusError) {
        failure_ = Describe(c.second);
        failure_serial_ = c.first;
      }
    }
  }

  // Called on a Metal thread when command buffer `serial` finished.
  void Completed(uint64_t serial, std::string failure) {
    std::lock_guard<std::mutex> lock(done_mu_);
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                           [serial](const Committed& c) { return c.first == serial; });
    if (it != in_flight_.end()) in_flight_.erase(it);
    if (!failure.empty() && serial > reported_serial_ && failure_.empty()) {
      failure_ = std::move(failure);
      failure_serial_ = serial;
    }
  }

  // Raises the recorded failure, once. Takes done_mu_: callers may hold mu_, never done_mu_.
  void RaiseRecordedFailure() {
    std::string failure;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      failure.swap(failure_);
      if (!failure.empty()) reported_serial_ = std::max(reported_serial_, failure_serial_);
    }
    if (!failure.empty()) {
      TVM_FFI_THROW(RuntimeError) << "an earlier launch on metal:" << index_
                                  << " failed on the GPU: " << failure;
    }
  }

  const int32_t index_;
  id<MTLDevice> device_;
  id<MTLCommandQueue> queue_;
  TesselMetalContext context_{};

  std::mutex mu_;  // the encoding order: pending_, encoder_, batched_, next_serial_
  id<MTLCommandBuffer> pending_;
  id<MTLComputeCommandEncoder> encoder_;
  uint64_t pending_serial_ = 0;
  uint64_t next_serial_ = 1;
  int batched_ = 0;

  // Taken by completion handlers on Metal's threads; after mu_ when both are held.
  std::mutex done_mu_;
  std::deque<Committed> in_flight_;  // committed, completion handler not yet run
  std::string failure_;              // the first failure not yet raised
  uint64_t failure_serial_ = 0;
  uint64_t reported_serial_ = 0;  // failures of buffers up to this one were raised (or skipped)
};

}  // namespace

const TesselMetalContext* DefaultQueueContext(int32_t device_id) {
  const std::vector<id<MTLDevice>>& devices = Devices();
  if (devices.empty()) return nullptr;
  if (device_id < 0 || static_cast<size_t>(device_id) >= devices.size()) {
    TVM_FFI_THROW(ValueError) << "metal:" << device_id << " does not exist: this machine has "
                              << devices.size() << " Metal device"
                              << (devices.size() == 1 ? "" : "s") << " (MTLCopyAllDevices order)";
  }
  static std::mutex mu;
  static std::vector<DeviceQueue*>* queues = new std::vector<DeviceQueue*>(devices.size());
  std::lock_guard<std::mutex> lock(mu);
  DeviceQueue*& q = (*queues)[device_id];
  if (q == nullptr) {
    WithPool("creating the tessel.default Metal context",
             [&] { q = new DeviceQueue(device_id, devices[device_id]); });
  }
  return q->context();
}

}  // namespace metal_apple
}  // namespace runtime
}  // namespace tessel
