// The launch-argument helpers shared by the CUDA and Metal launch functions (launch_args.h).
#include "runtime/launch_args.h"

#include <tvm/ffi/error.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <sstream>

namespace tessel {
namespace runtime {

namespace {

constexpr const char* kHeaderNames[kNumLaunchHeaderArgs - 1] = {
    "device_id", "grid x", "grid y", "grid z", "block x", "block y", "block z"};

}  // namespace

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

std::string ArgTypeName(const tvm::ffi::AnyView& v) {
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

std::string DTypeName(DLDataType t) {
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

std::ostream& operator<<(std::ostream& os, const ArgWhere& w) {
  return os << w.kernel << ": kernel argument " << w.index;
}

int ScalarBytes(DLDataType t) {
  if (t.code == kDLBool || (t.code == kDLUInt && t.bits == 1)) return 1;
  return t.bits / 8;
}

void ConvertScalarArg(const tvm::ffi::AnyView& v, DLDataType t, void* out, ArgWhere where) {
  using tvm::ffi::TypeIndex;
  int32_t ti = v.type_index();
  if (t.code == kDLFloat || t.code == kDLBfloat) {
    double d = 0;
    if (ti == TypeIndex::kTVMFFIFloat) {
      d = v.cast<double>();
    } else if (ti == TypeIndex::kTVMFFIInt) {
      d = static_cast<double>(v.cast<int64_t>());
    } else {
      TVM_FFI_THROW(TypeError) << where << ": expected float, got " << ArgTypeName(v);
    }
    if (t.code == kDLBfloat) {
      uint16_t h = RoundToSmallFloat(d, 7, 8);
      std::memcpy(out, &h, sizeof(h));
    } else if (t.bits == 16) {
      uint16_t h = RoundToSmallFloat(d, 10, 5);
      std::memcpy(out, &h, sizeof(h));
    } else if (t.bits == 32) {
      float f = static_cast<float>(d);
      std::memcpy(out, &f, sizeof(f));
    } else {
      std::memcpy(out, &d, sizeof(d));
    }
    return;
  }
  // Integers and bool.
  if (ti != TypeIndex::kTVMFFIInt && ti != TypeIndex::kTVMFFIBool) {
    TVM_FFI_THROW(TypeError) << where << ": expected int, got " << ArgTypeName(v);
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
    TVM_FFI_THROW(ValueError) << where << ": expected "
                              << (is_bool ? "a bool" : "an " + DTypeName(t)) << " value, got " << x;
  }
  // Little endian: the low bytes of x hold the narrower value.
  std::memcpy(out, &x, bits / 8);
}

void ReadLaunchHeader(const tvm::ffi::AnyView* args, const char* kernel, int64_t max_devices,
                      const char* dyn_name, int64_t header[kNumLaunchHeaderArgs]) {
  for (int i = 0; i < kNumLaunchHeaderArgs; ++i) {
    int32_t ti = args[i].type_index();
    const char* what = i < kNumLaunchHeaderArgs - 1 ? kHeaderNames[i] : dyn_name;
    if (ti != tvm::ffi::TypeIndex::kTVMFFIInt && ti != tvm::ffi::TypeIndex::kTVMFFIBool) {
      TVM_FFI_THROW(TypeError) << kernel << ": " << what << ": expected int, got "
                               << ArgTypeName(args[i]);
    }
    header[i] = args[i].cast<int64_t>();
  }
  if (header[0] < 0 || header[0] >= max_devices) {
    TVM_FFI_THROW(ValueError) << kernel << ": device_id " << header[0] << " is out of range [0, "
                              << max_devices << ")";
  }
  for (int i = 1; i <= 6; ++i) {
    if (header[i] < 1 || header[i] > UINT_MAX) {
      TVM_FFI_THROW(ValueError) << kernel << ": " << kHeaderNames[i] << " = " << header[i]
                                << ": launch dimensions must be at least 1";
    }
  }
}

}  // namespace runtime
}  // namespace tessel
