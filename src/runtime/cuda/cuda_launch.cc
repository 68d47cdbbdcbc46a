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

namespace tessel {
namespace runtime {

namespace {

constexpr int kNumFixedArgs = 8;  // device_id, gx, gy, gz, bx, by, bz, dyn_shared_bytes
constexpr const char* kFixedArgNames[kNumFixedArgs] = {
    "device_id", "grid x", "grid y", "grid z", "block x", "block y", "block z", "dyn_shared_bytes"};
constexpr int kMaxStackArgs = 32;

// Rounds `v` to nearest-even in a binary format with `mant_bits` fraction bits and `exp_bits`
// exponent bits (float16: 10, 5; bfloat16: 7, 8) and returns its bit pattern.
uint16_t RoundToSmallFloat(double v, int mant_bits, int exp_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int max_biased = (1 << exp_bits) - 1;
  uint16_t sign = std::signbit(v) ? static_cast<uint16_t>(1u << (mant_bits + exp_bits)) : 0;
  if (std::isnan(v))
    return sign | static_cast<uint16_t>(max_biased << mant_bits) | (1u << (mant_bits - 1));
  double a = std::fabs(v);
  if (std::isinf(a)) return sign | static_cast<uint16_t>(max_biased << mant_bits);
  // Subnormal range: the value in units of the smallest subnormal, rounded (exact scaling by 2^k);
  // a result of 2^mant_bits is the smallest normal, which the encoding continues into.
  if (a < std::ldexp(1.0, 1 - bias)) {
    double q = std::nearbyint(std::ldexp(a, bias - 1 + mant_bits));
    return sign | static_cast<uint16_t>(q);
  }
  int ex = 0;
  std::frexp(a, &ex);                                       // a = m * 2^ex, m in [0.5, 1)
  int e = ex - 1;                                           // a = s * 2^e, s in [1, 2)
  double q = std::nearbyint(std::ldexp(a, mant_bits - e));  // in [2^mant_bits, 2^(mant_bits+1)]
  if (q >= std::ldexp(1.0, mant_bits + 1)) {
    q = std::ldexp(1.0, mant_bits);
    ++e;
  }
  int biased = e + bias;
  if (biased >= max_biased) return sign | static_cast<uint16_t>(max_biased << mant_bits);
  uint32_t frac = static_cast<uint32_t>(q) - (1u << mant_bits);
  return sign | static_cast<uint16_t>((static_cast<uint32_t>(biased) << mant_bits) | frac);
}

std::string TypeName(const tvm::ffi::AnyView& v) {
  switch (v.type_index()) {
    case tvm::ffi::TypeIndex::kTVMFFINone:
      return "None";
    case tvm::ffi::TypeIndex::kTVMFFIInt:
      return "int";
    case tvm::ffi::TypeIndex::kTVMFFIBool:
      return "bool";
    case tvm::ffi::TypeIndex::kTVMFFIFloat:
      return "float";
    case tvm::ffi::TypeIndex::kTVMFFIOpaquePtr:
      return "opaque pointer";
    default:
      return v.GetTypeKey();
  }
}

std::string TypeStr(DLDataType t) {
  std::ostringstream os;
  switch (t.code) {
    case kDLInt:
      os << "int" << int(t.bits);
      break;
    case kDLUInt:
      os << (t.bits == 1 ? "bool" : "uint" + std::to_string(t.bits));
      break;
    case kDLBool:
      os << "bool";
      break;
    case kDLFloat:
      os << "float" << int(t.bits);
      break;
    case kDLBfloat:
      os << "bfloat16";
      break;
    case kDLOpaqueHandle:
      os << "handle";
      break;
    default:
      os << "type code " << int(t.code);
  }
  return os.str();
}

// Stores argument `v` into `slot` as kernel parameter type `t`; errors name kernel argument `index`
// of `kernel` (the text is built only on error: this runs for every argument of every launch).
struct ArgWhere {
  const char* kernel;
  int index;
};
std::ostream& operator<<(std::ostream& os, const ArgWhere& w) {
  return os << w.kernel << ": kernel argument " << w.index;
}

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
      TVM_FFI_THROW(TypeError) << where << ": expected a pointer or tensor, got " << TypeName(v);
    }
    std::memcpy(slot, &p, sizeof(p));
    return;
  }
  if (t.code == kDLFloat || t.code == kDLBfloat) {
    double d = 0;
    if (ti == TypeIndex::kTVMFFIFloat) {
      d = v.cast<double>();
    } else if (ti == TypeIndex::kTVMFFIInt) {
      d = static_cast<double>(v.cast<int64_t>());
    } else {
      TVM_FFI_THROW(TypeError) << where << ": expected float, got " << TypeName(v);
    }
    if (t.code == kDLBfloat) {
      uint16_t h = RoundToSmallFloat(d, 7, 8);
      std::memcpy(slot, &h, sizeof(h));
    } else if (t.bits == 16) {
      uint16_t h = RoundToSmallFloat(d, 10, 5);
      std::memcpy(slot, &h, sizeof(h));
    } else if (t.bits == 32) {
      float f = static_cast<float>(d);
      std::memcpy(slot, &f, sizeof(f));
    } else {
      std::memcpy(slot, &d, sizeof(d));
    }
    return;
  }
  // Integers and bool.
  if (ti != TypeIndex::kTVMFFIInt && ti != TypeIndex::kTVMFFIBool) {
    TVM_FFI_THROW(TypeError) << where << ": expected int, got " << TypeName(v);
  }
  int64_t x = v.cast<int64_t>();
  bool is_bool = t.code == kDLBool || (t.code == kDLUInt && t.bits == 1);
  int bits = is_bool ? 8 : t.bits;
  bool in_range;
  if (is_bool) {
    in_range = x == 0 || x == 1;
  } else if (t.code == kDLInt) {
    in_range = bits == 64 || (x >= -(int64_t{1} << (bits - 1)) && x < (int64_t{1} << (bits - 1)));
  } else {
    in_range = x >= 0 && (bits == 64 || x < (int64_t{1} << bits));
  }
  if (!in_range) {
    TVM_FFI_THROW(ValueError) << where << ": expected " << (is_bool ? "a bool" : "an " + TypeStr(t))
                              << " value, got " << x;
  }
  // Little endian: the low bytes of the 64-bit slot hold the narrower value.
  std::memcpy(slot, &x, bits / 8);
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
  if (args.size() != kNumFixedArgs + nargs) {
    TVM_FFI_THROW(TypeError) << name << ": expected " << kNumFixedArgs + nargs
                             << " launch arguments (device_id, grid x/y/z, block x/y/z, "
                                "dyn_shared_bytes, then "
                             << nargs << " kernel argument" << (nargs == 1 ? "" : "s") << "), got "
                             << args.size();
  }
  int64_t fixed[kNumFixedArgs];
  for (int i = 0; i < kNumFixedArgs; ++i) {
    int32_t ti = args[i].type_index();
    if (ti != tvm::ffi::TypeIndex::kTVMFFIInt && ti != tvm::ffi::TypeIndex::kTVMFFIBool) {
      TVM_FFI_THROW(TypeError) << name << ": " << kFixedArgNames[i] << ": expected int, got "
                               << TypeName(args[i]);
    }
    fixed[i] = args[i].cast<int64_t>();
  }
  const int64_t device_id = fixed[0];
  if (device_id < 0 || device_id >= kMaxDevices) {
    TVM_FFI_THROW(ValueError) << name << ": device_id " << device_id << " is out of range [0, "
                              << kMaxDevices << ")";
  }
  for (int i = 1; i <= 6; ++i) {
    if (fixed[i] < 1 || fixed[i] > UINT_MAX) {
      TVM_FFI_THROW(ValueError) << name << ": " << kFixedArgNames[i] << " = " << fixed[i]
                                << ": launch dimensions must be at least 1";
    }
  }
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
  for (int i = 0; i < nargs; ++i) {
    ConvertArg(args[kNumFixedArgs + i], info.arg_types[i], &slots[i], ArgWhere{name, i});
    ptrs[i] = &slots[i];
  }

  DeviceState& dev = Device(static_cast<int>(device_id), name);
  KernelState& k = dev.kernels[index];
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
