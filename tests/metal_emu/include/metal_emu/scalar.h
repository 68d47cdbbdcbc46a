// The stand-in's scalar types: MSL's names for the C++ integer types, half as _Float16, bfloat as
// a 2-byte struct with float arithmetic, the h / bf literal suffixes, and as_type.
//
// Only headers that declare nothing in the global namespace are included (<cmath> and <cstdlib>
// would put ::abs(int) or ::fmin(double, double) there, which `using namespace metal;` makes
// ambiguous with metal's own). Math goes through __builtin_* functions.
#ifndef TESSEL_METAL_EMU_SCALAR_H_
#define TESSEL_METAL_EMU_SCALAR_H_

#pragma GCC system_header  // the h / bf literal operators are reserved names in ISO C++

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

namespace metal {

typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;  // 64-bit, as in MSL (LP64)
typedef _Float16 half;
using ::int16_t;
using ::int32_t;
using ::int64_t;
using ::int8_t;
using ::ptrdiff_t;
using ::size_t;
using ::uint16_t;
using ::uint32_t;
using ::uint64_t;
using ::uint8_t;

// MSL's bfloat (MSL 3.1): the upper 16 bits of a float. Conversion from float rounds to nearest
// even (NaN stays NaN); arithmetic happens in float and rounds back, as on a GPU without native
// bfloat ALUs.
struct bfloat {
  uint16_t bits;

  bfloat() = default;
  bfloat(float f) : bits(FromFloat(f)) {}  // NOLINT: MSL converts implicitly
  bfloat(half h) : bits(FromFloat(static_cast<float>(h))) {}
  bfloat(int i) : bits(FromFloat(static_cast<float>(i))) {}
  bfloat(uint i) : bits(FromFloat(static_cast<float>(i))) {}
  operator float() const {  // NOLINT
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
  }

  static uint16_t FromFloat(float f) {
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }

  bfloat& operator+=(bfloat o) { return *this = bfloat(float(*this) + float(o)); }
  bfloat& operator-=(bfloat o) { return *this = bfloat(float(*this) - float(o)); }
  bfloat& operator*=(bfloat o) { return *this = bfloat(float(*this) * float(o)); }
  bfloat& operator/=(bfloat o) { return *this = bfloat(float(*this) / float(o)); }
  bfloat operator-() const { return bfloat(-float(*this)); }
  bfloat operator+() const { return *this; }

#define TSL_EMU_BF_ARITH(op)                                                             \
  friend bfloat operator op(bfloat a, bfloat b) { return bfloat(float(a) op float(b)); } \
  friend float operator op(bfloat a, float b) { return float(a) op b; }                  \
  friend float operator op(float a, bfloat b) { return a op float(b); }                  \
  friend bfloat operator op(bfloat a, int b) { return bfloat(float(a) op float(b)); }    \
  friend bfloat operator op(int a, bfloat b) { return bfloat(float(a) op float(b)); }
  TSL_EMU_BF_ARITH(+)
  TSL_EMU_BF_ARITH(-)
  TSL_EMU_BF_ARITH(*)
  TSL_EMU_BF_ARITH(/)
#undef TSL_EMU_BF_ARITH
#define TSL_EMU_BF_CMP(op)                                                               \
  friend bool operator op(bfloat a, bfloat b) { return float(a) op float(b); }           \
  friend bool operator op(bfloat a, float b) { return float(a) op b; }                   \
  friend bool operator op(float a, bfloat b) { return a op float(b); }                   \
  friend bool operator op(bfloat a, int b) { return float(a) op static_cast<float>(b); } \
  friend bool operator op(int a, bfloat b) { return static_cast<float>(a) op float(b); }
  TSL_EMU_BF_CMP(<)
  TSL_EMU_BF_CMP(<=)
  TSL_EMU_BF_CMP(>)
  TSL_EMU_BF_CMP(>=)
  TSL_EMU_BF_CMP(==)
  TSL_EMU_BF_CMP(!=)
#undef TSL_EMU_BF_CMP
};
static_assert(sizeof(bfloat) == 2 && alignof(bfloat) == 2, "bfloat is 2 bytes");

// 1.5h is a half, 1.5bf a bfloat (MSL literal suffixes).
constexpr half operator""h(long double v) { return static_cast<half>(v); }
constexpr half operator""h(unsigned long long v) { return static_cast<half>(v); }
inline bfloat operator"" bf(long double v) { return bfloat(static_cast<float>(v)); }
inline bfloat operator"" bf(unsigned long long v) { return bfloat(static_cast<float>(v)); }

// The bits of `x` read as a T of the same size (MSL's reinterpretation).
template <class T, class U>
inline T as_type(const U& x) {
  static_assert(sizeof(T) == sizeof(U), "as_type needs types of the same size");
  T out;
  __builtin_memcpy(static_cast<void*>(&out), static_cast<const void*>(&x), sizeof(T));
  return out;
}

}  // namespace metal

namespace metal_emu {

template <class T>
struct is_float_type : std::false_type {};
template <>
struct is_float_type<float> : std::true_type {};
template <>
struct is_float_type<metal::half> : std::true_type {};
template <>
struct is_float_type<metal::bfloat> : std::true_type {};

template <class T>
struct is_int_type
    : std::integral_constant<bool, std::is_integral<T>::value && !std::is_same<T, bool>::value &&
                                       !std::is_same<T, long long>::value &&
                                       !std::is_same<T, unsigned long long>::value> {};

// An MSL scalar: bool, the integer types, half, bfloat, float (double is not one).
template <class T>
struct is_scalar : std::integral_constant<bool, is_float_type<T>::value || is_int_type<T>::value ||
                                                    std::is_same<T, bool>::value> {};

template <class T>
struct float_rank : std::integral_constant<int, 0> {};
template <>
struct float_rank<metal::bfloat> : std::integral_constant<int, 1> {};
template <>
struct float_rank<metal::half> : std::integral_constant<int, 2> {};
template <>
struct float_rank<float> : std::integral_constant<int, 3> {};

// The type two different scalars meet in for MSL's mixed-argument built-ins (min(x, 0) with a
// float x is a float min): the floating type when one is floating, the wider one when both are,
// the usual arithmetic conversions for integers.
template <class A, class B, class = void>
struct common_scalar {
  using type =
      typename std::conditional<(float_rank<A>::value >= float_rank<B>::value), A, B>::type;
};
template <class A, class B>
struct common_scalar<
    A, B, typename std::enable_if<is_int_type<A>::value && is_int_type<B>::value>::type> {
  using type = typename std::common_type<A, B>::type;
};

template <class A, class B>
using enable_mixed_t = typename std::enable_if<is_scalar<A>::value && is_scalar<B>::value &&
                                                   !std::is_same<A, B>::value,
                                               typename common_scalar<A, B>::type>::type;

}  // namespace metal_emu

#endif  // TESSEL_METAL_EMU_SCALAR_H_
