// The CUDA driver API, opened at run time with dlopen: tessel never links libcuda, so the compiler,
// the runtime and every kernel library build, load and import on a machine without a GPU or a
// driver. The first use of Driver() opens the library (TESSEL_CUDA_DRIVER_LIBRARY, else
// "libcuda.so.1"), resolves the table below and calls cuInit(0); a missing library or symbol is a
// RuntimeError "CUDA driver (libcuda.so.1) not found: ..." raised at that first use only, i.e. when
// a kernel is loaded or launched.
//
// The few driver types and enum values tessel needs are declared here rather than taken from the
// toolkit's cuda.h, so this header needs no toolkit; they are the driver's stable ABI, and
// src/runtime/cuda/cuda_abi_check.cc static_asserts them against cuda.h when CMake finds it.
#ifndef TESSEL_RUNTIME_CUDA_DRIVER_H_
#define TESSEL_RUNTIME_CUDA_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel {
namespace runtime {
namespace cu {

using Result = int;  // CUresult; 0 = CUDA_SUCCESS
using Device = int;  // CUdevice
using Context = struct CUctx_st*;
using ModuleHandle = struct CUmod_st*;
using Function = struct CUfunc_st*;
using Stream = struct CUstream_st*;
using DevicePtr = unsigned long long;  // CUdeviceptr

constexpr unsigned int kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING

constexpr Result kSuccess = 0;

// CUdevice_attribute values.
enum DeviceAttribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,
  kMaxBlockDimY = 3,
  kMaxBlockDimZ = 4,
  kMaxGridDimX = 5,
  kMaxGridDimY = 6,
  kMaxGridDimZ = 7,
  kMaxSharedMemoryPerBlock = 8,
  kMultiprocessorCount = 16,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kCooperativeLaunch = 95,
  kMaxSharedMemoryPerBlockOptin = 97,
};

// CUfunction_attribute values.
enum FunctionAttribute : int {
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedSizeBytes = 1,
  kFuncMaxDynamicSharedSizeBytes = 8,
};

// CUlaunchAttributeID values.
enum LaunchAttributeID : int {
  kLaunchAttributeCooperative = 2,
  kLaunchAttributeClusterDimension = 4,
  kLaunchAttributeProgrammaticStreamSerialization = 6,
};

// CUlaunchAttributeValue: a 64-byte union; tessel uses three members.
union LaunchAttributeValue {
  char pad[64];
  int cooperative;
  struct {
    unsigned int x, y, z;
  } cluster_dim;
  int programmatic_stream_serialization_allowed;
};

// CUlaunchAttribute.
struct LaunchAttribute {
  LaunchAttributeID id;
  char pad[8 - sizeof(LaunchAttributeID)];
  LaunchAttributeValue value;
};

// CUlaunchConfig.
struct LaunchConfig {
  unsigned int grid_dim_x, grid_dim_y, grid_dim_z;
  unsigned int block_dim_x, block_dim_y, block_dim_z;
  unsigned int shared_mem_bytes;
  Stream stream;
  LaunchAttribute* attrs;
  unsigned int num_attrs;
};

// The resolved driver entry points (the versioned symbol each name maps to in cuda.h).
struct DriverAPI {
  Result (*cuInit)(unsigned int flags);
  Result (*cuDriverGetVersion)(int* version);
  Result (*cuDeviceGetCount)(int* count);
  Result (*cuDeviceGet)(Device* device, int ordinal);
  Result (*cuDeviceGetAttribute)(int* value, int attribute, Device device);
  Result (*cuDevicePrimaryCtxRetain)(Context* ctx, Device device);
  Result (*cuCtxGetCurrent)(Context* ctx);
  Result (*cuCtxSetCurrent)(Context ctx);
  Result (*cuModuleLoadData)(ModuleHandle* module, const void* image);
  Result (*cuModuleUnload)(ModuleHandle module);
  Result (*cuModuleGetFunction)(Function* function, ModuleHandle module, const char* name);
  Result (*cuFuncGetAttribute)(int* value, int attribute, Function function);
  Result (*cuFuncSetAttribute)(Function function, int attribute, int value);
  Result (*cuLaunchKernelEx)(const LaunchConfig* config, Function function, void** kernel_params,
                             void** extra);
  Result (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int* num_blocks, Function function,
                                                        int block_size, size_t dyn_smem_bytes);
  // Memory and streams: not used by launches; for tests and tools that drive a device directly.
  Result (*cuMemAlloc)(DevicePtr* ptr, size_t bytes);
  Result (*cuMemFree)(DevicePtr ptr);
  Result (*cuMemcpyHtoD)(DevicePtr dst, const void* src, size_t bytes);
  Result (*cuMemcpyDtoH)(void* dst, DevicePtr src, size_t bytes);
  Result (*cuCtxSynchronize)();
  Result (*cuStreamCreate)(Stream* stream, unsigned int flags);
  Result (*cuStreamDestroy)(Stream stream);
  Result (*cuStreamSynchronize)(Stream stream);
  Result (*cuGetErrorName)(Result error, const char** name);
  Result (*cuGetErrorString)(Result error, const char** text);
  // CUDA 12 and newer; nullptr on an older driver (a launch that needs a tensor map says so).
  Result (*cuTensorMapEncodeTiled)(void* tensor_map, int data_type, uint32_t rank,
                                   void* global_address, const uint64_t* global_dims,
                                   const uint64_t* global_strides, const uint32_t* box_dims,
                                   const uint32_t* element_strides, int interleave, int swizzle,
                                   int l2_promotion, int oob_fill);
};

// The CUtensorMap enums tessel uses (cuda.h's values).
enum TensorMapEnum : int {
  kTensorMapUInt8 = 0,
  kTensorMapUInt16 = 1,
  kTensorMapUInt32 = 2,
  kTensorMapInt32 = 3,
  kTensorMapUInt64 = 4,
  kTensorMapInt64 = 5,
  kTensorMapFloat16 = 6,
  kTensorMapFloat32 = 7,
  kTensorMapFloat64 = 8,
  kTensorMapBFloat16 = 9,
  kTensorMapInterleaveNone = 0,
  kTensorMapSwizzleNone = 0,
  kTensorMapSwizzle32B = 1,
  kTensorMapSwizzle64B = 2,
  kTensorMapSwizzle128B = 3,
  kTensorMapL2Promotion128B = 2,
  kTensorMapOobFillZero = 0,
};
constexpr size_t kTensorMapBytes = 128;

// The driver table, opened and initialized on first use (thread-safe). Throws RuntimeError when the
// library or one of its symbols is missing, or cuInit fails; the failure is remembered, so every
// later call raises the same error without retrying dlopen.
const DriverAPI& Driver();

// The path Driver() opens: TESSEL_CUDA_DRIVER_LIBRARY when set and non-empty, else "libcuda.so.1".
std::string DriverLibraryPath();

// "CUDA: <call>: <error name>: <error text>" (names from cuGetErrorName/String when they know the
// code, else "error <code>").
std::string FormatError(Result result, const char* call);

// Throws RuntimeError FormatError(result, call) unless result is kSuccess.
void Check(Result result, const char* call);

// The number of CUDA devices; 0 when the driver is missing or finds no device (never throws for
// those two), so callers can ask "is there a GPU?" cheaply.
int DeviceCount();

// Compute capability of device `device_id` as major * 10 + minor (90 for sm_90). Throws like
// Driver(), and ValueError for a device id out of range.
int DeviceComputeCapability(int device_id);

}  // namespace cu
}  // namespace runtime
}  // namespace tessel

// Calls a driver entry point and raises on failure, naming the entry point.
#define TESSEL_CUDA_CALL(name, ...) \
  ::tessel::runtime::cu::Check(::tessel::runtime::cu::Driver().name(__VA_ARGS__), #name)

#endif  // TESSEL_RUNTIME_CUDA_DRIVER_H_
