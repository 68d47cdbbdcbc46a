// The "tessel_cuda" tvm-ffi module: a compiled CUDA image (cubin, or NUL-terminated PTX) plus the
// table of kernels it holds, and the launch functions it hands out.
//
// A kernel library built for target cuda carries one such module as an import of its host library
// (tvm-ffi's __tvm_ffi__library_bin); the host C code finds a kernel's launch function through
// TVMFFIEnvModLookupFromImports and calls it with the packed launch signature:
//
//   (device_id: int, gx, gy, gz, bx, by, bz: int, dyn_shared_bytes: int, kernel args...)
//
// Kernel args are converted to the kernel's parameter types recorded in the table: handle
// parameters take opaque pointers, None (NULL) or tensors (their data pointer + byte_offset), int
// parameters take int/bool, float parameters take float/int. The launch goes to the stream
// TVMFFIEnvGetStream(kDLCUDA, device_id) (NULL = the legacy default stream). The image is loaded
// into the device's primary context on the first launch on that device; nothing touches the CUDA
// driver before that, so a library loads on a machine without a GPU and only a launch fails.
//
// Bytes format (SaveToBytes; loaded by the global "ffi.Module.load_from_bytes.tessel_cuda"), all
// integers little endian, strings as <u64 length><bytes>:
//
//   magic      8 bytes  "TSLCUDA\0"
//   version    u32      kCUDAModuleFormatVersion (a loader refuses any other version)
//   image      string   the cubin / PTX given to cuModuleLoadData
//   arch       string   e.g. "sm_90" ("" = unknown); informational, named in load errors
//   source     string   the CUDA C++ source ("" = not kept); InspectSource returns it
//   nkernels   u32
//   kernel * nkernels:
//     name       string  the extern "C" symbol in the image
//     nargs      u32
//     arg types  nargs * (u8 code, u8 bits, u16 lanes)   DLDataType of each kernel parameter
//     flags      u32     bit 0: use_pdl, bit 1: use_grid_sync (other bits must be 0)
//     cluster    3 * u32 cluster dims; 0,0,0 = no cluster launch attribute
//     nmaps      u32     tensor-map parameters (version 2)
//     map * nmaps:
//       param    u32     index of the kernel parameter (its arg type is a handle)
//       dtype    u8 code, u8 bits, u16 lanes   the element type
//       swizzle  u32     0, 32, 64 or 128 (bytes)
//       rank     u32     1..5
//       box      rank * u32, outermost first
//       tensor   string  the tensor's name, for messages
//     aligned    string  (version 3) the kernel specialized on aligned pointers ("" = none)
//     nalign     u32     (version 3) pointer parameters that specialization assumes aligned
//     align * nalign:
//       param    u32     index of the kernel parameter (a handle, not a tensor map)
//       bytes    u32     the alignment it assumes: 2, 4, 8 or 16
//
// A kernel with an aligned variant launches that variant instead when every listed pointer
// (after a tensor's byte_offset) is a multiple of its bytes; the variant has the same parameters
// and is launched with the same checks. Code generators make the variant where the general kernel
// tests the alignment of wide loads at run time (docs/codegen.md).
//
// A tensor-map parameter takes 1 + 2 * rank launch arguments in place of one: the tensor's address
// (pointer or tensor), its rank dims and its rank strides in elements, outermost first. The launch
// checks them (address 16-byte aligned, strides but the innermost multiples of 16 bytes, the
// innermost stride 1, dims in [1, 2^32]) and encodes the CUtensorMap through the driver's
// cuTensorMapEncodeTiled (zero fill out of bounds, 128-byte L2 promotion); the kernel receives it
// as a `const __grid_constant__` parameter.
//
// The bytes end exactly after the last kernel; trailing bytes are an error.
#ifndef TESSEL_RUNTIME_CUDA_MODULE_H_
#define TESSEL_RUNTIME_CUDA_MODULE_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/extra/module.h>
#include <tvm/ffi/string.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace runtime {

constexpr uint32_t kCUDAModuleFormatVersion = 3;
constexpr const char* kCUDAModuleKind = "tessel_cuda";

// A kernel parameter that is a CUtensorMap made at launch (see the format above).
struct CUDATensorMapParam {
  uint32_t param = 0;
  DLDataType dtype{kDLFloat, 16, 1};
  uint32_t swizzle = 0;
  std::vector<uint32_t> box;  // outermost first; its size is the rank
  std::string tensor;

  bool operator==(const CUDATensorMapParam& o) const;
};

// What is wrong with a tensor map of `spec` over the tensor at `addr` with `dims` and `strides`
// (elements, outermost first), as the launch would say it; "" when the driver can encode it.
std::string TensorMapProblem(const CUDATensorMapParam& spec, const void* addr,
                             const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);

// One __global__ function of the image.
struct CUDAKernelInfo {
  std::string name;
  // The kernel's parameters in order: {kDLOpaqueHandle, 64, 1} for pointers, else the scalar type
  // (int8..int64, uint8..uint64, bool as {kDLBool, 8, 1}, float16/32/64, bfloat16).
  std::vector<DLDataType> arg_types;
  bool use_pdl = false;        // programmatic stream serialization (griddepcontrol)
  bool use_grid_sync = false;  // cooperative launch (grid-wide barrier)
  std::array<uint32_t, 3> cluster_dims = {0, 0, 0};  // {0,0,0}: no cluster attribute
  std::vector<CUDATensorMapParam> tensor_maps;       // by increasing param index
  // The variant of this kernel to launch when the pointers of `aligned_params` ({param, bytes},
  // by increasing param) are aligned; "" = none.
  std::string aligned_variant;
  std::vector<std::pair<uint32_t, uint32_t>> aligned_params;

  bool operator==(const CUDAKernelInfo& other) const;
  bool operator!=(const CUDAKernelInfo& other) const { return !(*this == other); }
};

// Everything a tessel_cuda module holds.
struct CUDAModuleData {
  std::string image;   // cubin (or PTX with a trailing NUL)
  std::string arch;    // "sm_90"; "" = unknown
  std::string source;  // CUDA source for InspectSource; "" = not kept
  std::vector<CUDAKernelInfo> kernels;
};

// Serializes to the bytes format above. ValueError on an invalid table (empty or duplicate kernel
// name, a cluster dim of 0 next to non-zero ones).
tvm::ffi::Bytes SaveCUDAModuleBytes(const CUDAModuleData& data);
// Shorthand: no arch, no source.
tvm::ffi::Bytes SaveCUDAModuleBytes(const std::string& image,
                                    const std::vector<CUDAKernelInfo>& kernels);

// Parses the bytes format; ValueError naming what is wrong (bad magic, unsupported version,
// truncated at <field>, trailing bytes, invalid flags).
CUDAModuleData ParseCUDAModuleBytes(const char* data, size_t size);

// A module of kind "tessel_cuda". Validates the table like SaveCUDAModuleBytes. Does not touch the
// CUDA driver.
tvm::ffi::Module CreateCUDAModule(CUDAModuleData data);

}  // namespace runtime
}  // namespace tessel

#endif  // TESSEL_RUNTIME_CUDA_MODULE_H_
