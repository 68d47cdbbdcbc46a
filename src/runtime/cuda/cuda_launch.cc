// Launching the kernels of a tessel_cuda module: argument conversion, the checks a launch gets
// before it reaches the driver, lazy per-device loading, the dynamic shared memory opt-in and
// cuLaunchKernelEx with the launch attributes each kernel needs.
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <sstream>

#include "cuda_launcher.h"
#include "runtime/launch_args.h"

namespace tessel {
namespace runtime {

namespace {

constexpr const char* kFixedArgNames[kNumLaunchHeaderArgs] = {
    "device_id", "grid x", "grid y", "grid z", "block x", "block y", "block z", "dyn_shared_bytes"};
constexpr int kMaxStackArgs = 32;

void ConvertArg(const tvm::ffi::AnyView& v, DLDataType t, uint64_t* slot, ArgWhere where) {
  using tvm::ffi::TypeIndex;
  int32_t ti = v.type_index();
  *slot = 0;
  if (t.code == kDLOpaqueHandle) {
    void* p = nullptr;
    if (ti == TypeIndex::kTVMFFIOpaquePtr) {
      p = v.cast<void*>();
    } else if (ti == TypeIndex::kTVMFFINone) {
      p = nullptr;
    } else if (ti == TypeIndex::kTVMFFIDLTensorPtr || ti == TypeIndex::kTVMFFITensor) {
      const TVMFFIAny* raw = reinterpret_cast<const TVMFFIAny*>(&v);
      DLTensor* t = ti == TypeIndex::kTVMFFIDLTensorPtr ? static_cast<DLTensor*>(raw->v_ptr)
                                                        : TVMFFITensorGetDLTensorPtr(raw->v_obj);
      p = static_cast<char*>(t->data) + t->byte_offset;
    } else {
      TVM_FFI_THROW(TypeError) << where << ": expected a pointer or tensor, got " << ArgTypeName(v);
    }
    std::memcpy(slot, &p, sizeof(p));
    return;
  }
  ConvertScalarArg(v, t, slot, where);
}

// Makes the device's primary context current for one launch and restores the caller's after, so a
// launch on device 1 does not move a framework's notion of the current device.
class ScopedContext {
 public:
  explicit ScopedContext(cu::Context ctx) {
    const cu::DriverAPI& d = cu::Driver();
    cu::Check(d.cuCtxGetCurrent(&saved_), "cuCtxGetCurrent");
    if (saved_ != ctx) {
      cu::Check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
      switched_ = true;
    }
  }
  ~ScopedContext() {
    if (switched_) cu::Driver().cuCtxSetCurrent(saved_);
  }

 private:
  cu::Context saved_ = nullptr;
  bool switched_ = false;
};

}  // namespace

CUDALauncher::CUDALauncher(CUDAModuleData data) : data_(std::move(data)) {
  const auto& kernels = data_.kernels;
  variant_.resize(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    variant_[i] = i;
    for (size_t j = 0; j < kernels.size(); ++j) {
      if (!kernels[i].aligned_variant.empty() && kernels[j].name == kernels[i].aligned_variant) {
        variant_[i] = j;
      }
    }
  }
}

CUDALauncher::~CUDALauncher() {
  // Unloading at process exit may find the driver shut down already; nothing to do about it then.
  for (auto& dev : owned_) {
    if (dev->module == nullptr) continue;
    const cu::DriverAPI& d = cu::Driver();
    cu::Context saved = nullptr;
    if (d.cuCtxGetCurrent(&saved) != cu::kSuccess) continue;
    if (d.cuCtxSetCurrent(dev->context) != cu::kSuccess) continue;
    d.cuModuleUnload(dev->module);
    d.cuCtxSetCurrent(saved);
  }
}

tvm::ffi::Function CUDALauncher::LaunchFunction(size_t index) {
  std::shared_ptr<CUDALauncher> self = shared_from_this();
  return tvm::ffi::Function::FromPacked(
      [self, index](tvm::ffi::PackedArgs args, tvm::ffi::Any* rv) { self->Launch(index, args); });
}

std::unique_ptr<CUDALauncher::DeviceState> CUDALauncher::LoadOnDevice(int device_id,
                                                                      const char* kernel_name) {
  const cu::DriverAPI& d = cu::Driver();
  int count = 0;
  TESSEL_CUDA_CALL(cuDeviceGetCount, &count);
  if (device_id >= count) {
    TVM_FFI_THROW(ValueError) << kernel_name << ": CUDA device " << device_id << " does not exist ("
                              << count << " device" << (count == 1 ? "" : "s") << ")";
  }
  auto dev = std::make_unique<DeviceState>();
  dev->device_id = device_id;
  TESSEL_CUDA_CALL(cuDeviceGet, &dev->device, device_id);
  auto attr = [&](int which) {
    int v = 0;
    cu::Check(d.cuDeviceGetAttribute(&v, which, dev->device), "cuDeviceGetAttribute");
    return v;
  };
  dev->max_grid = {attr(cu::kMaxGridDimX), attr(cu::kMaxGridDimY), attr(cu::kMaxGridDimZ)};
  dev->max_block = {attr(cu::kMaxBlockDimX), attr(cu::kMaxBlockDimY), attr(cu::kMaxBlockDimZ)};
  dev->max_threads_per_block = attr(cu::kMaxThreadsPerBlock);
  dev->max_smem_optin =
      std::max(attr(cu::kMaxSharedMemoryPerBlockOptin), attr(cu::kMaxSharedMemoryPerBlock));
  dev->sm_count = attr(cu::kMultiprocessorCount);
  dev->cooperative = attr(cu::kCooperativeLaunch) != 0;
  // The primary context is the one CUDA runtime users (PyTorch) share; it is retained for the life
  // of the process.
  TESSEL_CUDA_CALL(cuDevicePrimaryCtxRetain, &dev->context, dev->device);
  ScopedContext scope(dev->context);
  cu::Result r = d.cuModuleLoadData(&dev->module, data_.image.c_str());
  if (r != cu::kSuccess) {
    int cc = attr(cu::kComputeCapabilityMajor) * 10 + attr(cu::kComputeCapabilityMinor);
    TVM_FFI_THROW(RuntimeError) << cu::FormatError(r, "cuModuleLoadData") << " (image built for "
                                << (data_.arch.empty() ? "an unknown arch" : data_.arch)
                                << ", device " << device_id << " is sm_" << cc << ")";
  }
  const auto& kernels = data_.kernels;
  dev->kernels.reset(new KernelState[kernels.size()]);
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelState& k = dev->kernels[i];
    r = d.cuModuleGetFunction(&k.function, dev->module, kernels[i].name.c_str());
    if (r != cu::kSuccess) {
      TVM_FFI_THROW(RuntimeError) << cu::FormatError(r, "cuModuleGetFunction") << " (kernel "
                                  << kernels[i].name << " is not in the image)";
    }
    int dyn_limit = 0;
    cu::Check(d.cuFuncGetAttribute(&k.static_smem, cu::kFuncSharedSizeBytes, k.function),
              "cuFuncGetAttribute");
    cu::Check(d.cuFuncGetAttribute(&k.max_threads, cu::kFuncMaxThreadsPerBlock, k.function),
              "cuFuncGetAttribute");
    cu::Check(d.cuFuncGetAttribute(&dyn_limit, cu::kFuncMaxDynamicSharedSizeBytes, k.function),
              "cuFuncGetAttribute");
    k.dyn_smem_limit.store(dyn_limit);
  }
  return dev;
}

CUDALauncher::DeviceState& CUDALauncher::Device(int device_id, const char* kernel_name) {
  DeviceState* dev = devices_[device_id].load(std::memory_order_acquire);
  if (dev != nullptr) return *dev;
  std::lock_guard<std::mutex> lock(load_mutex_);
  dev = devices_[device_id].load(std::memory_order_relaxed);
  if (dev != nullptr) return *dev;
  owned_.push_back(LoadOnDevice(device_id, kernel_name));
  dev = owned_.back().get();
  devices_[device_id].store(dev, std::memory_order_release);
  return *dev;
}

void CUDALauncher::RaiseDynSmemLimit(KernelState& k, int bytes, const char* kernel_name) {
  std::lock_guard<std::mutex> lock(k.smem_mutex);
  // Another thread may have raised it past `bytes` meanwhile; the limit never goes down.
  if (k.dyn_smem_limit.load(std::memory_order_relaxed) >= bytes) return;
  cu::Result r =
      cu::Driver().cuFuncSetAttribute(k.function, cu::kFuncMaxDynamicSharedSizeBytes, bytes);
  if (r != cu::kSuccess) {
    TVM_FFI_THROW(RuntimeError) << kernel_name << ": " << cu::FormatError(r, "cuFuncSetAttribute")
                                << " (raising the dynamic shared memory limit to " << bytes
                                << " bytes)";
  }
  k.dyn_smem_limit.store(bytes, std::memory_order_release);
}

void CUDALauncher::Launch(size_t index, tvm::ffi::PackedArgs args) {
  const CUDAKernelInfo& info = data_.kernels[index];
  const char* name = info.name.c_str();
  const int nargs = static_cast<int>(info.arg_types.size());
  // A tensor-map parameter takes its tensor's address, dims and strides (cuda_module.h).
  int nvalues = nargs;
  for (const CUDATensorMapParam& m : info.tensor_maps)
    nvalues += 2 * static_cast<int>(m.box.size());
  if (args.size() != kNumLaunchHeaderArgs + nvalues) {
    TVM_FFI_THROW(TypeError) << name << ": expected " << kNumLaunchHeaderArgs + nvalues
                             << " launch arguments (device_id, grid x/y/z, block x/y/z, "
                                "dyn_shared_bytes, then "
                             << nvalues << " kernel argument value" << (nvalues == 1 ? "" : "s")
                             << "), got " << args.size();
  }
  int64_t fixed[kNumLaunchHeaderArgs];
  ReadLaunchHeader(args.data(), name, kMaxDevices, "dyn_shared_bytes", fixed);
  const int64_t device_id = fixed[0];
  const int64_t dyn_smem = fixed[7];
  if (dyn_smem < 0 || dyn_smem > INT_MAX) {
    TVM_FFI_THROW(ValueError) << name << ": dyn_shared_bytes = " << dyn_smem
                              << " is not a valid shared memory size";
  }
  const auto& cl = info.cluster_dims;
  bool cluster = cl[0] != 0;
  if (cluster) {
    for (int i = 0; i < 3; ++i) {
      if (fixed[1 + i] % cl[i] != 0) {
        TVM_FFI_THROW(ValueError) << name << ": " << kFixedArgNames[1 + i] << " = " << fixed[1 + i]
                                  << " is not a multiple of the cluster dim " << cl[i];
      }
    }
  }

  uint64_t stack_slots[kMaxStackArgs];
  void* stack_ptrs[kMaxStackArgs];
  std::vector<uint64_t> heap_slots;
  std::vector<void*> heap_ptrs;
  uint64_t* slots = stack_slots;
  void** ptrs = stack_ptrs;
  if (nargs > kMaxStackArgs) {
    heap_slots.resize(nargs);
    heap_ptrs.resize(nargs);
    slots = heap_slots.data();
    ptrs = heap_ptrs.data();
  }
  struct alignas(64) MapSlot {
    unsigned char bytes[cu::kTensorMapBytes];
  };
  std::vector<MapSlot> maps(info.tensor_maps.size());
  size_t next_map = 0;
  int pos = kNumLaunchHeaderArgs;
  for (int i = 0; i < nargs; ++i) {
    ConvertArg(args[pos], info.arg_types[i], &slots[i], ArgWhere{name, i});
    ptrs[i] = &slots[i];
    ++pos;
    if (next_map < info.tensor_maps.size() && info.tensor_maps[next_map].param == uint32_t(i)) {
      const CUDATensorMapParam& m = info.tensor_maps[next_map];
      std::vector<int64_t> dims(m.box.size()), strides(m.box.size());
      for (std::vector<int64_t>* out : {&dims, &strides}) {
        for (int64_t& v : *out) {
          ConvertScalarArg(args[pos], DLDataType{kDLInt, 64, 1}, &v, ArgWhere{name, i});
          ++pos;
        }
      }
      void* addr = nullptr;
      std::memcpy(&addr, &slots[i], sizeof(addr));
      EncodeTensorMap(m, addr, dims, strides, maps[next_map].bytes, name);
      ptrs[i] = maps[next_map].bytes;
      ++next_map;
    }
  }

  // The variant that assumes aligned pointers when they are: the general kernel tests the
  // alignment of each wide load, which costs issue slots and orders the loads (cuda_module.h).
  size_t run = index;
  if (variant_[index] != index) {
    run = variant_[index];
    for (auto [param, bytes] : info.aligned_params) {
      uintptr_t p = 0;
      std::memcpy(&p, &slots[param], sizeof(void*));
      if (p % bytes != 0) run = index;
    }
  }
  DeviceState& dev = Device(static_cast<int>(device_id), name);
  KernelState& k = dev.kernels[run];
  for (int i = 0; i < 3; ++i) {
    if (fixed[1 + i] > dev.max_grid[i] || fixed[4 + i] > dev.max_block[i]) {
      bool grid = fixed[1 + i] > dev.max_grid[i];
      TVM_FFI_THROW(ValueError) << name << ": " << kFixedArgNames[grid ? 1 + i : 4 + i] << " = "
                                << fixed[grid ? 1 + i : 4 + i] << " exceeds the maximum "
                                << (grid ? dev.max_grid[i] : dev.max_block[i]) << " of device "
                                << device_id;
    }
  }
  int64_t threads = fixed[4] * fixed[5] * fixed[6];
  int max_threads = std::min(dev.max_threads_per_block, k.max_threads);
  if (threads > max_threads) {
    TVM_FFI_THROW(ValueError) << name << ": " << threads << " threads per block (" << fixed[4]
                              << " x " << fixed[5] << " x " << fixed[6]
                              << ") exceed the kernel's limit of " << max_threads << " on device "
                              << device_id;
  }
  if (dyn_smem + k.static_smem > dev.max_smem_optin) {
    TVM_FFI_THROW(ValueError) << name << ": needs " << dyn_smem
                              << " bytes of dynamic shared memory (+ " << k.static_smem
                              << " static), more than the " << dev.max_smem_optin
                              << " bytes per block device " << device_id << " allows";
  }
  if (dyn_smem > k.dyn_smem_limit.load(std::memory_order_acquire)) {
    RaiseDynSmemLimit(k, static_cast<int>(dyn_smem), name);
  }
  ScopedContext scope(dev.context);
  const cu::DriverAPI& d = cu::Driver();
  if (info.use_grid_sync) {
    if (!dev.cooperative) {
      TVM_FFI_THROW(RuntimeError) << name << ": device " << device_id
                                  << " does not support cooperative launches (grid_sync)";
    }
    int per_sm = 0;
    cu::Check(d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                  &per_sm, k.function, static_cast<int>(threads), static_cast<size_t>(dyn_smem)),
              "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    int64_t blocks = fixed[1] * fixed[2] * fixed[3];
    int64_t resident = static_cast<int64_t>(per_sm) * dev.sm_count;
    if (blocks > resident) {
      TVM_FFI_THROW(ValueError) << name << ": cooperative grid of " << blocks
                                << " blocks exceeds the " << resident
                                << " blocks that can be co-resident on device " << device_id << " ("
                                << per_sm << " per SM x " << dev.sm_count << " SMs at " << threads
                                << " threads, " << dyn_smem << " bytes dynamic shared memory)";
    }
  }

  cu::LaunchAttribute attrs[3];
  std::memset(attrs, 0, sizeof(attrs));
  unsigned num_attrs = 0;
  if (info.use_pdl) {
    attrs[num_attrs].id = cu::kLaunchAttributeProgrammaticStreamSerialization;
    attrs[num_attrs].value.programmatic_stream_serialization_allowed = 1;
    ++num_attrs;
  }
  if (info.use_grid_sync) {
    attrs[num_attrs].id = cu::kLaunchAttributeCooperative;
    attrs[num_attrs].value.cooperative = 1;
    ++num_attrs;
  }
  if (cluster) {
    attrs[num_attrs].id = cu::kLaunchAttributeClusterDimension;
    attrs[num_attrs].value.cluster_dim.x = cl[0];
    attrs[num_attrs].value.cluster_dim.y = cl[1];
    attrs[num_attrs].value.cluster_dim.z = cl[2];
    ++num_attrs;
  }
  cu::LaunchConfig config;
  config.grid_dim_x = static_cast<unsigned>(fixed[1]);
  config.grid_dim_y = static_cast<unsigned>(fixed[2]);
  config.grid_dim_z = static_cast<unsigned>(fixed[3]);
  config.block_dim_x = static_cast<unsigned>(fixed[4]);
  config.block_dim_y = static_cast<unsigned>(fixed[5]);
  config.block_dim_z = static_cast<unsigned>(fixed[6]);
  config.shared_mem_bytes = static_cast<unsigned>(dyn_smem);
  config.stream =
      static_cast<cu::Stream>(TVMFFIEnvGetStream(kDLCUDA, static_cast<int32_t>(device_id)));
  config.attrs = num_attrs ? attrs : nullptr;
  config.num_attrs = num_attrs;
  cu::Result r = d.cuLaunchKernelEx(&config, k.function, ptrs, nullptr);
  if (r != cu::kSuccess) {
    TVM_FFI_THROW(RuntimeError) << name << ": " << cu::FormatError(r, "cuLaunchKernelEx")
                                << " (grid " << fixed[1] << "x" << fixed[2] << "x" << fixed[3]
                                << ", block " << fixed[4] << "x" << fixed[5] << "x" << fixed[6]
                                << ", " << dyn_smem << " bytes dynamic shared memory"
                                << (info.use_pdl ? ", PDL" : "")
                                << (info.use_grid_sync ? ", cooperative" : "")
                                << (cluster ? ", cluster" : "") << ")";
  }
}

}  // namespace runtime
}  // namespace tessel
