// Opening libcuda with dlopen and resolving the driver table
// (include/tessel/runtime/cuda_driver.h).
#include "tessel/runtime/cuda_driver.h"

#include <dlfcn.h>
#include <tvm/ffi/error.h>

#include <cstdlib>
#include <mutex>
#include <sstream>

namespace tessel {
namespace runtime {
namespace cu {

namespace {

// The outcome of the one attempt to open the driver: the table, or the message of the failure.
struct DriverState {
  DriverAPI api{};
  bool ok = false;
  std::string error;
};

template <typename Fn>
bool Resolve(void* lib, const char* symbol, Fn* out, std::string* error) {
  void* addr = dlsym(lib, symbol);
  if (addr == nullptr) {
    *error = std::string("symbol ") + symbol + " missing (driver too old for CUDA 12 launches?)";
    return false;
  }
  *out = reinterpret_cast<Fn>(addr);
  return true;
}

DriverState OpenDriver() {
  DriverState state;
  const std::string path = DriverLibraryPath();
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace of the process.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    state.error = "CUDA driver (" + path + ") not found: " + (why ? why : "dlopen failed") +
                  " (is an NVIDIA driver installed? TESSEL_CUDA_DRIVER_LIBRARY overrides the path)";
    return state;
  }
  DriverAPI& a = state.api;
  std::string missing;
  // The versioned names are those cuda.h maps the plain names to (cuda.h #defines).
  bool ok = Resolve(lib, "cuInit", &a.cuInit, &missing) &&
            Resolve(lib, "cuDriverGetVersion", &a.cuDriverGetVersion, &missing) &&
            Resolve(lib, "cuDeviceGetCount", &a.cuDeviceGetCount, &missing) &&
            Resolve(lib, "cuDeviceGet", &a.cuDeviceGet, &missing) &&
            Resolve(lib, "cuDeviceGetAttribute", &a.cuDeviceGetAttribute, &missing) &&
            Resolve(lib, "cuDevicePrimaryCtxRetain", &a.cuDevicePrimaryCtxRetain, &missing) &&
            Resolve(lib, "cuCtxGetCurrent", &a.cuCtxGetCurrent, &missing) &&
            Resolve(lib, "cuCtxSetCurrent", &a.cuCtxSetCurrent, &missing) &&
            Resolve(lib, "cuModuleLoadData", &a.cuModuleLoadData, &missing) &&
            Resolve(lib, "cuModuleUnload", &a.cuModuleUnload, &missing) &&
            Resolve(lib, "cuModuleGetFunction", &a.cuModuleGetFunction, &missing) &&
            Resolve(lib, "cuFuncGetAttribute", &a.cuFuncGetAttribute, &missing) &&
            Resolve(lib, "cuFuncSetAttribute", &a.cuFuncSetAttribute, &missing) &&
            Resolve(lib, "cuLaunchKernelEx", &a.cuLaunchKernelEx, &missing) &&
            Resolve(lib, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                    &a.cuOccupancyMaxActiveBlocksPerMultiprocessor, &missing) &&
            Resolve(lib, "cuMemAlloc_v2", &a.cuMemAlloc, &missing) &&
            Resolve(lib, "cuMemFree_v2", &a.cuMemFree, &missing) &&
            Resolve(lib, "cuMemcpyHtoD_v2", &a.cuMemcpyHtoD, &missing) &&
            Resolve(lib, "cuMemcpyDtoH_v2", &a.cuMemcpyDtoH, &missing) &&
            Resolve(lib, "cuCtxSynchronize", &a.cuCtxSynchronize, &missing) &&
            Resolve(lib, "cuStreamCreate", &a.cuStreamCreate, &missing) &&
            Resolve(lib, "cuStreamDestroy_v2", &a.cuStreamDestroy, &missing) &&
            Resolve(lib, "cuStreamSynchronize", &a.cuStreamSynchronize, &missing) &&
            Resolve(lib, "cuGetErrorName", &a.cuGetErrorName, &missing) &&
            Resolve(lib, "cuGetErrorString", &a.cuGetErrorString, &missing);
  if (!ok) {
    state.error = "CUDA driver (" + path + ") not usable: " + missing;
    return state;
  }
  // Optional: present from CUDA 12 on.
  a.cuTensorMapEncodeTiled =
      reinterpret_cast<decltype(a.cuTensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
  state.ok = true;
  // The library stays open for the life of the process: launch functions may run until exit.
  return state;
}

const DriverState& State() {
  static const DriverState state = OpenDriver();  // thread-safe one-time initialization
  return state;
}

// cuInit runs once, after the table resolved; its failure (e.g. no device) is remembered too.
const std::string& InitError() {
  static const std::string error = []() -> std::string {
    const DriverState& s = State();
    if (!s.ok) return s.error;
    Result r = s.api.cuInit(0);
    return r == kSuccess ? std::string() : FormatError(r, "cuInit");
  }();
  return error;
}

}  // namespace

std::string DriverLibraryPath() {
  const char* env = std::getenv("TESSEL_CUDA_DRIVER_LIBRARY");
  return (env != nullptr && env[0] != '\0') ? std::string(env) : std::string("libcuda.so.1");
}

const DriverAPI& Driver() {
  const std::string& error = InitError();
  if (!error.empty()) TVM_FFI_THROW(RuntimeError) << error;
  return State().api;
}

std::string FormatError(Result result, const char* call) {
  const char* name = nullptr;
  const char* text = nullptr;
  const DriverState& s = State();
  if (s.ok) {
    if (s.api.cuGetErrorName(result, &name) != kSuccess) name = nullptr;
    if (s.api.cuGetErrorString(result, &text) != kSuccess) text = nullptr;
  }
  std::ostringstream os;
  os << "CUDA: " << call << ": ";
  if (name != nullptr) {
    os << name << ": " << (text != nullptr ? text : "(no description)");
  } else {
    os << "error " << result;
  }
  return os.str();
}

void Check(Result result, const char* call) {
  if (result != kSuccess) TVM_FFI_THROW(RuntimeError) << FormatError(result, call);
}

int DeviceCount() {
  if (!InitError().empty()) return 0;
  int count = 0;
  if (State().api.cuDeviceGetCount(&count) != kSuccess) return 0;
  return count;
}

int DeviceComputeCapability(int device_id) {
  const DriverAPI& d = Driver();
  int count = 0;
  TESSEL_CUDA_CALL(cuDeviceGetCount, &count);
  if (device_id < 0 || device_id >= count) {
    TVM_FFI_THROW(ValueError) << "CUDA device " << device_id << " does not exist (" << count
                              << " device" << (count == 1 ? "" : "s") << ")";
  }
  Device dev = 0;
  TESSEL_CUDA_CALL(cuDeviceGet, &dev, device_id);
  int major = 0, minor = 0;
  Check(d.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, dev), "cuDeviceGetAttribute");
  Check(d.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, dev), "cuDeviceGetAttribute");
  return major * 10 + minor;
}

}  // namespace cu
}  // namespace runtime
}  // namespace tessel
