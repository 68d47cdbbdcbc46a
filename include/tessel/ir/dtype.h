// DataType: a value type over DLDataType (code, bits, lanes) with the predicates the compiler asks
// and the text forms the printer and parser use ("int32", "float16x4", "bool", "handle").
//
// Semantics: integer types wrap modulo 2^bits in generated code; the analyzer reasons about them as
// mathematical integers restricted to the dtype's range. "bool" is uint1. "handle" is an opaque
// 64-bit pointer. lanes > 1 is a fixed-width vector.
#ifndef TESSEL_IR_DTYPE_H_
#define TESSEL_IR_DTYPE_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <optional>
#include <string>

namespace tessel {
namespace ir {

class DataType {
 public:
  enum TypeCode : uint8_t {
    kInt = kDLInt,
    kUInt = kDLUInt,
    kFloat = kDLFloat,
    kHandle = kDLOpaqueHandle,
    kBFloat = kDLBfloat,
    kBool = kDLBool,
  };

  DataType() : dt_{kDLOpaqueHandle, 0, 0} {}  // "void": the type of nothing
  DataType(DLDataType dt) : dt_(dt) {}        // NOLINT(google-explicit-constructor)
  DataType(int code, int bits, int lanes) {
    dt_.code = static_cast<uint8_t>(code);
    dt_.bits = static_cast<uint8_t>(bits);
    dt_.lanes = static_cast<uint16_t>(lanes);
  }

  operator DLDataType() const { return dt_; }  // NOLINT(google-explicit-constructor)

  int code() const { return dt_.code; }
  int bits() const { return dt_.bits; }
  int lanes() const { return dt_.lanes; }
  int bytes() const { return (bits() + 7) / 8; }

  bool is_void() const { return dt_.code == kDLOpaqueHandle && dt_.bits == 0; }
  bool is_handle() const { return dt_.code == kDLOpaqueHandle && dt_.bits != 0; }
  bool is_bool() const { return (code() == kUInt && bits() == 1) || code() == kBool; }
  bool is_int() const { return code() == kInt; }
  bool is_uint() const { return code() == kUInt && bits() != 1; }
  // int or uint (not bool): the types integer arithmetic is defined on.
  bool is_int_or_uint() const { return is_int() || is_uint(); }
  bool is_float() const { return code() == kFloat; }
  bool is_bfloat() const { return code() == kBFloat; }
  bool is_floating() const { return is_float() || is_bfloat(); }
  bool is_scalar() const { return lanes() == 1; }
  bool is_vector() const { return lanes() > 1; }

  DataType with_lanes(int lanes) const { return DataType(code(), bits(), lanes); }
  DataType with_bits(int bits) const { return DataType(code(), bits, lanes()); }
  DataType element_of() const { return with_lanes(1); }

  // Smallest and largest value of an integer type (bool is [0, 1]); undefined for others.
  int64_t min_int() const;
  int64_t max_int() const;  // uint64 reports INT64_MAX: callers must treat it as "at least".

  bool operator==(const DataType& o) const {
    return dt_.code == o.dt_.code && dt_.bits == o.dt_.bits && dt_.lanes == o.dt_.lanes;
  }
  bool operator!=(const DataType& o) const { return !(*this == o); }

  // "int32", "uint8", "float16x4", "bool", "handle", "void".
  std::string str() const;
  // Inverse of str(); nullopt when the text is not a data type.
  static std::optional<DataType> Parse(const std::string& text);

  static DataType Int(int bits, int lanes = 1) { return DataType(kInt, bits, lanes); }
  static DataType UInt(int bits, int lanes = 1) { return DataType(kUInt, bits, lanes); }
  static DataType Float(int bits, int lanes = 1) { return DataType(kFloat, bits, lanes); }
  static DataType BFloat(int bits, int lanes = 1) { return DataType(kBFloat, bits, lanes); }
  static DataType Bool(int lanes = 1) { return DataType(kUInt, 1, lanes); }
  static DataType Handle() { return DataType(kHandle, 64, 1); }
  static DataType Void() { return DataType(); }

 private:
  DLDataType dt_;
};

inline std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.str(); }

}  // namespace ir
}  // namespace tessel

namespace tvm {
namespace ffi {
// DataType crosses the FFI as a DLDataType, so Python sees tvm_ffi.dtype and reflection can
// declare DataType fields directly.
template <>
struct TypeTraits<tessel::ir::DataType> : public TypeTraitsBase {
  static constexpr int32_t field_static_type_index = TypeIndex::kTVMFFIDataType;
  TVM_FFI_INLINE static void CopyToAnyView(const tessel::ir::DataType& src, TVMFFIAny* result) {
    TypeTraits<DLDataType>::CopyToAnyView(src, result);
  }
  TVM_FFI_INLINE static void MoveToAny(tessel::ir::DataType src, TVMFFIAny* result) {
    TypeTraits<DLDataType>::MoveToAny(src, result);
  }
  TVM_FFI_INLINE static bool CheckAnyStrict(const TVMFFIAny* src) {
    return TypeTraits<DLDataType>::CheckAnyStrict(src);
  }
  TVM_FFI_INLINE static tessel::ir::DataType CopyFromAnyViewAfterCheck(const TVMFFIAny* src) {
    return TypeTraits<DLDataType>::CopyFromAnyViewAfterCheck(src);
  }
  TVM_FFI_INLINE static tessel::ir::DataType MoveFromAnyAfterCheck(TVMFFIAny* src) {
    return TypeTraits<DLDataType>::MoveFromAnyAfterCheck(src);
  }
  TVM_FFI_INLINE static std::optional<tessel::ir::DataType> TryCastFromAnyView(
      const TVMFFIAny* src) {
    if (auto v = TypeTraits<DLDataType>::TryCastFromAnyView(src)) return tessel::ir::DataType(*v);
    return std::nullopt;
  }
  TVM_FFI_INLINE static std::string TypeStr() { return TypeTraits<DLDataType>::TypeStr(); }
  TVM_FFI_INLINE static std::string TypeSchema() { return TypeTraits<DLDataType>::TypeSchema(); }
};
}  // namespace ffi
}  // namespace tvm

#endif  // TESSEL_IR_DTYPE_H_
