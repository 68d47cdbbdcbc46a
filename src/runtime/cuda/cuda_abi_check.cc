// Compile-time proof that the driver declarations in cuda_driver.h match the toolkit's cuda.h.
// CMake compiles it with TESSEL_HAVE_CUDA_H when it finds cuda.h; elsewhere it is empty, and the
// declarations rely on the driver ABI being stable (it is versioned by symbol, never changed).
#ifdef TESSEL_HAVE_CUDA_H
#include <cuda.h>

#include <cstddef>

#include "tessel/runtime/cuda_driver.h"

namespace tessel {
namespace runtime {
namespace cu {

static_assert(CUDA_SUCCESS == kSuccess, "CUresult");
static_assert(sizeof(CUdevice) == sizeof(Device), "CUdevice");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == int(kMaxThreadsPerBlock), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X) == int(kMaxBlockDimX), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y) == int(kMaxBlockDimY), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z) == int(kMaxBlockDimZ), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X) == int(kMaxGridDimX), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y) == int(kMaxGridDimY), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z) == int(kMaxGridDimZ), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) == int(kMaxSharedMemoryPerBlock),
              "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) == int(kMultiprocessorCount), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) == int(kComputeCapabilityMajor),
              "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) == int(kComputeCapabilityMinor),
              "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) == int(kCooperativeLaunch), "attr");
static_assert(int(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) ==
                  int(kMaxSharedMemoryPerBlockOptin),
              "attr");
static_assert(int(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == int(kFuncMaxThreadsPerBlock),
              "func attr");
static_assert(int(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == int(kFuncSharedSizeBytes), "func attr");
static_assert(int(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) ==
                  int(kFuncMaxDynamicSharedSizeBytes),
              "func attr");
static_assert(int(CU_LAUNCH_ATTRIBUTE_COOPERATIVE) == int(kLaunchAttributeCooperative),
              "launch attr");
static_assert(int(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) == int(kLaunchAttributeClusterDimension),
              "launch attr");
static_assert(int(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) ==
                  int(kLaunchAttributeProgrammaticStreamSerialization),
              "launch attr");

static_assert(sizeof(CUtensorMap) == kTensorMapBytes, "CUtensorMap");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_UINT8) == int(kTensorMapUInt8), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_UINT16) == int(kTensorMapUInt16), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_UINT32) == int(kTensorMapUInt32), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_INT32) == int(kTensorMapInt32), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_UINT64) == int(kTensorMapUInt64), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_INT64) == int(kTensorMapInt64), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_FLOAT16) == int(kTensorMapFloat16), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_FLOAT32) == int(kTensorMapFloat32), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_FLOAT64) == int(kTensorMapFloat64), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16) == int(kTensorMapBFloat16), "tensor map dtype");
static_assert(int(CU_TENSOR_MAP_INTERLEAVE_NONE) == int(kTensorMapInterleaveNone), "interleave");
static_assert(int(CU_TENSOR_MAP_SWIZZLE_NONE) == int(kTensorMapSwizzleNone), "swizzle");
static_assert(int(CU_TENSOR_MAP_SWIZZLE_32B) == int(kTensorMapSwizzle32B), "swizzle");
static_assert(int(CU_TENSOR_MAP_SWIZZLE_64B) == int(kTensorMapSwizzle64B), "swizzle");
static_assert(int(CU_TENSOR_MAP_SWIZZLE_128B) == int(kTensorMapSwizzle128B), "swizzle");
static_assert(int(CU_TENSOR_MAP_L2_PROMOTION_L2_128B) == int(kTensorMapL2Promotion128B), "l2");
static_assert(int(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == int(kTensorMapOobFillZero), "oob fill");

static_assert(sizeof(CUdeviceptr) == sizeof(DevicePtr), "CUdeviceptr");
static_assert(int(CU_STREAM_NON_BLOCKING) == int(kStreamNonBlocking), "stream flag");
static_assert(sizeof(CUlaunchAttributeValue) == sizeof(LaunchAttributeValue), "value size");
static_assert(sizeof(CUlaunchAttribute) == sizeof(LaunchAttribute), "attribute size");
static_assert(offsetof(CUlaunchAttribute, value) == offsetof(LaunchAttribute, value), "value");
static_assert(offsetof(CUlaunchAttributeValue, clusterDim) == 0, "clusterDim");
static_assert(sizeof(CUlaunchConfig) == sizeof(LaunchConfig), "config size");
static_assert(offsetof(CUlaunchConfig, sharedMemBytes) == offsetof(LaunchConfig, shared_mem_bytes),
              "sharedMemBytes");
static_assert(offsetof(CUlaunchConfig, hStream) == offsetof(LaunchConfig, stream), "hStream");
static_assert(offsetof(CUlaunchConfig, attrs) == offsetof(LaunchConfig, attrs), "attrs");
static_assert(offsetof(CUlaunchConfig, numAttrs) == offsetof(LaunchConfig, num_attrs), "numAttrs");

}  // namespace cu
}  // namespace runtime
}  // namespace tessel
#endif  // TESSEL_HAVE_CUDA_H
