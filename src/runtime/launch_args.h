// What the launch functions of every GPU module kind share: reading the fixed launch header
// (device id, grid, block, dynamic memory bytes) and converting a scalar kernel argument to the
// bytes of its parameter type, with errors that name the kernel and the argument.
#ifndef TESSEL_SRC_RUNTIME_LAUNCH_ARGS_H_
#define TESSEL_SRC_RUNTIME_LAUNCH_ARGS_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>

#include <cstdint>
#include <ostream>
#include <string>

namespace tessel {
namespace runtime {

constexpr int kNumLaunchHeaderArgs = 8;  // device_id, gx, gy, gz, bx, by, bz, dynamic bytes

// Rounds `v` to nearest-even in a binary format with `mant_bits` fraction bits and `exp_bits`
// exponent bits (float16: 10, 5; bfloat16: 7, 8) and returns its bit pattern.
uint16_t RoundToSmallFloat(double v, int mant_bits, int exp_bits);

// The name a caller knows for the type of `v` ("int", "None", "ffi.Tensor" ...).
std::string ArgTypeName(const tvm::ffi::AnyView& v);
// "int32", "bool", "float16", "bfloat16", "handle".
std::string DTypeName(DLDataType t);

// Where an argument error is: "<kernel>: kernel argument <index>" (built only on error).
struct ArgWhere {
  const char* kernel;
  int index;
};
std::ostream& operator<<(std::ostream& os, const ArgWhere& w);

// Bytes of a scalar parameter of type `t` (bool: 1).
int ScalarBytes(DLDataType t);

// Writes argument `v` as a value of scalar type `t` into `out` (ScalarBytes(t) bytes, little
// endian): ints and bools range-checked against `t`, floats (or ints) rounded to float16 /
// bfloat16 / float32 / float64. TypeError / ValueError naming `where`.
void ConvertScalarArg(const tvm::ffi::AnyView& v, DLDataType t, void* out, ArgWhere where);

// Reads the 8 header arguments of a launch of `kernel` into `header`: all ints, device id in
// [0, max_devices), grid and block dimensions in [1, 2^32-1], dynamic bytes >= 0. `dyn_name`
// names the last one in messages ("dyn_shared_bytes", "dyn_threadgroup_bytes").
void ReadLaunchHeader(const tvm::ffi::AnyView* args, const char* kernel, int64_t max_devices,
                      const char* dyn_name, int64_t header[kNumLaunchHeaderArgs]);

}  // namespace runtime
}  // namespace tessel

#endif  // TESSEL_SRC_RUNTIME_LAUNCH_ARGS_H_
