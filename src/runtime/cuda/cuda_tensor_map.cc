// Tensor maps made at launch: the checks the driver's cuTensorMapEncodeTiled would fail on, said
// with the kernel, the tensor and the value, and the encoding itself (format and contract in
// include/tessel/runtime/cuda_module.h).
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_launcher.h"
#include "runtime/launch_args.h"

namespace tessel {
namespace runtime {

namespace {

// cuda.h's CUtensorMapDataType of `t`, or -1.
int TensorMapDataType(DLDataType t) {
  if (t.lanes != 1) return -1;
  switch (t.code) {
    case kDLUInt:
      return t.bits == 8    ? cu::kTensorMapUInt8
             : t.bits == 16 ? cu::kTensorMapUInt16
             : t.bits == 32 ? cu::kTensorMapUInt32
             : t.bits == 64 ? cu::kTensorMapUInt64
                            : -1;
    case kDLInt:
      return t.bits == 8    ? cu::kTensorMapUInt8
             : t.bits == 16 ? cu::kTensorMapUInt16
             : t.bits == 32 ? cu::kTensorMapInt32
             : t.bits == 64 ? cu::kTensorMapInt64
                            : -1;
    case kDLFloat:
      return t.bits == 16   ? cu::kTensorMapFloat16
             : t.bits == 32 ? cu::kTensorMapFloat32
             : t.bits == 64 ? cu::kTensorMapFloat64
                            : -1;
    case kDLBfloat:
      return t.bits == 16 ? cu::kTensorMapBFloat16 : -1;
    default:
      return -1;
  }
}

int SwizzleEnum(uint32_t bytes) {
  return bytes == 128  ? cu::kTensorMapSwizzle128B
         : bytes == 64 ? cu::kTensorMapSwizzle64B
         : bytes == 32 ? cu::kTensorMapSwizzle32B
                       : cu::kTensorMapSwizzleNone;
}

}  // namespace

std::string TensorMapProblem(const CUDATensorMapParam& spec, const void* addr,
                             const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& strides) {
  std::ostringstream os;
  const size_t rank = spec.box.size();
  const int64_t elem = spec.dtype.bits / 8;
  if (TensorMapDataType(spec.dtype) < 0) {
    os << "element type " << DTypeName(spec.dtype) << " has no TMA form";
    return os.str();
  }
  if (dims.size() != rank || strides.size() != rank) {
    os << "rank " << rank << " needs " << rank << " dims and strides, got " << dims.size()
       << " and " << strides.size();
    return os.str();
  }
  if (reinterpret_cast<uintptr_t>(addr) % 16 != 0) {
    os << "address " << addr << " is not 16-byte aligned";
    return os.str();
  }
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 1 || dims[i] > (int64_t{1} << 32)) {
      os << "dim " << i << " is " << dims[i] << " (TMA takes 1 .. 2^32)";
      return os.str();
    }
  }
  if (strides[rank - 1] != 1) {
    os << "the innermost stride is " << strides[rank - 1]
       << " elements (TMA needs the innermost axis contiguous)";
    return os.str();
  }
  for (size_t i = 0; i + 1 < rank; ++i) {
    int64_t bytes = strides[i] * elem;
    if (strides[i] < 1 || bytes % 16 != 0 || bytes >= (int64_t{1} << 40)) {
      os << "stride " << i << " is " << strides[i] << " elements = " << strides[i] * elem
         << " bytes (TMA needs a positive multiple of 16 bytes below 2^40)";
      return os.str();
    }
  }
  int64_t inner = int64_t{spec.box[rank - 1]} * elem;
  if (inner % 16 != 0) {
    os << "the innermost box size " << spec.box[rank - 1] << " is " << inner
       << " bytes (TMA needs a multiple of 16)";
    return os.str();
  }
  if (spec.swizzle != 0 && inner > spec.swizzle) {
    os << "the innermost box size " << spec.box[rank - 1] << " is " << inner
       << " bytes, wider than the " << spec.swizzle << "-byte swizzle";
    return os.str();
  }
  return "";
}

void EncodeTensorMap(const CUDATensorMapParam& spec, void* addr, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& strides, void* out, const char* kernel) {
  std::string problem = TensorMapProblem(spec, addr, dims, strides);
  if (!problem.empty()) {
    TVM_FFI_THROW(ValueError) << kernel << ": tensor " << spec.tensor
                              << " cannot be described by a TMA tensor map: " << problem;
  }
  const cu::DriverAPI& d = cu::Driver();
  if (d.cuTensorMapEncodeTiled == nullptr) {
    TVM_FFI_THROW(RuntimeError) << kernel << ": the CUDA driver has no cuTensorMapEncodeTiled "
                                << "(a CUDA 12 driver is needed for TMA)";
  }
  // The driver lists axes innermost first and leaves out the innermost stride.
  const size_t rank = spec.box.size();
  const int64_t elem = spec.dtype.bits / 8;
  uint64_t g_dims[5], g_strides[5];
  uint32_t box[5], elem_strides[5];
  for (size_t i = 0; i < rank; ++i) {
    g_dims[i] = static_cast<uint64_t>(dims[rank - 1 - i]);
    box[i] = spec.box[rank - 1 - i];
    elem_strides[i] = 1;
    if (i + 1 < rank) g_strides[i] = static_cast<uint64_t>(strides[rank - 2 - i] * elem);
  }
  cu::Result r = d.cuTensorMapEncodeTiled(
      out, TensorMapDataType(spec.dtype), static_cast<uint32_t>(rank), addr, g_dims, g_strides, box,
      elem_strides, cu::kTensorMapInterleaveNone, SwizzleEnum(spec.swizzle),
      cu::kTensorMapL2Promotion128B, cu::kTensorMapOobFillZero);
  if (r != cu::kSuccess) {
    TVM_FFI_THROW(RuntimeError) << kernel << ": tensor " << spec.tensor << ": "
                                << cu::FormatError(r, "cuTensorMapEncodeTiled");
  }
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  // For tests without a GPU: what a launch would say about a tensor map (dtype as a DLDataType
  // string, address as an integer).
  refl::GlobalDef().def(
      "tessel.runtime.TensorMapProblem",
      [](tvm::ffi::String dtype, int64_t swizzle, tvm::ffi::Array<int64_t> box, int64_t addr,
         tvm::ffi::Array<int64_t> dims, tvm::ffi::Array<int64_t> strides) -> tvm::ffi::String {
        CUDATensorMapParam spec;
        spec.dtype = tvm::ffi::StringToDLDataType(dtype);
        spec.swizzle = static_cast<uint32_t>(swizzle);
        for (int64_t b : box) spec.box.push_back(static_cast<uint32_t>(b));
        return TensorMapProblem(spec, reinterpret_cast<const void*>(static_cast<uintptr_t>(addr)),
                                std::vector<int64_t>(dims.begin(), dims.end()),
                                std::vector<int64_t>(strides.begin(), strides.end()));
      });
}

}  // namespace runtime
}  // namespace tessel
