// Internal to src/runtime/cuda: the launch side of a tessel_cuda module. A CUDALauncher owns the
// module's data and its per-device state (the image loaded into each device's primary context, the
// kernel handles, the raised dynamic shared memory limits); the module and every launch Function it
// hands out share it, so a Function stays valid after the module object is dropped.
#ifndef TESSEL_SRC_RUNTIME_CUDA_CUDA_LAUNCHER_H_
#define TESSEL_SRC_RUNTIME_CUDA_CUDA_LAUNCHER_H_

#include <tvm/ffi/function.h>

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "tessel/runtime/cuda_driver.h"
#include "tessel/runtime/cuda_module.h"

namespace tessel {
namespace runtime {

// Encodes the tensor map `spec` over the tensor at `addr` (dims and strides in elements, outermost
// first) into `out` (cu::kTensorMapBytes, 64-byte aligned). ValueError naming `kernel` and the
// tensor when TensorMapProblem finds something; RuntimeError when the driver refuses.
void EncodeTensorMap(const CUDATensorMapParam& spec, void* addr, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& strides, void* out, const char* kernel);

class CUDALauncher : public std::enable_shared_from_this<CUDALauncher> {
 public:
  // `data`'s table must be valid (ValidateTable): every aligned variant names a kernel of it.
  explicit CUDALauncher(CUDAModuleData data);
  ~CUDALauncher();

  const CUDAModuleData& data() const { return data_; }

  // The packed launch function of kernel `index` (see cuda_module.h for its signature).
  tvm::ffi::Function LaunchFunction(size_t index);

  // Launches kernel `index`; `args` are the packed launch arguments.
  void Launch(size_t index, tvm::ffi::PackedArgs args);

  // Devices above this id are refused (a fixed table keeps the launch path lock-free).
  static constexpr int kMaxDevices = 64;

 private:
  struct KernelState {
    cu::Function function = nullptr;
    int static_smem = 0;  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
    int max_threads = 0;  // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (launch bounds, registers)
    // The current CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; only grows, under smem_mutex.
    std::atomic<int> dyn_smem_limit{0};
    std::mutex smem_mutex;
  };
  struct DeviceState {
    int device_id = 0;
    cu::Device device = 0;
    cu::Context context = nullptr;
    cu::ModuleHandle module = nullptr;
    std::array<int, 3> max_grid{}, max_block{};
    int max_threads_per_block = 0;
    int max_smem_optin = 0;  // the per-block shared memory limit a kernel may opt in to
    int sm_count = 0;
    bool cooperative = false;
    std::unique_ptr<KernelState[]> kernels;
  };

  // The state of `device_id`, loading the image there on first use.
  DeviceState& Device(int device_id, const char* kernel_name);
  std::unique_ptr<DeviceState> LoadOnDevice(int device_id, const char* kernel_name);
  void RaiseDynSmemLimit(KernelState& k, int bytes, const char* kernel_name);

  CUDAModuleData data_;
  std::vector<size_t> variant_;  // by kernel: the index of its aligned variant, or its own
  std::mutex load_mutex_;
  std::array<std::atomic<DeviceState*>, kMaxDevices> devices_{};
  std::vector<std::unique_ptr<DeviceState>> owned_;  // under load_mutex_
};

}  // namespace runtime
}  // namespace tessel

#endif  // TESSEL_SRC_RUNTIME_CUDA_CUDA_LAUNCHER_H_
