// The stand-in's math library: MSL's float functions for float, half and bfloat scalars and
// vectors (half and bfloat computed in float and rounded back, as precise as a GPU's or more),
// integer functions, MSL's math macros and numeric_limits. `fast::` and `precise::` name the same
// functions: a CPU has one precision.
//
// Arguments of different scalar types (min(x, 0) with a float x) meet in the floating type, like
// the templates of Apple's <metal_math>.
#ifndef TESSEL_METAL_EMU_MATH_H_
#define TESSEL_METAL_EMU_MATH_H_

#pragma GCC system_header

#include <limits>

#include "vector.h"

#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VALF (__builtin_huge_valf())
#define MAXFLOAT 0x1.fffffep+127f
#define FLT_MAX 0x1.fffffep+127f
#define FLT_MIN 0x1p-126f
#define FLT_EPSILON 0x1p-23f
#define HALF_MAX (static_cast<metal::half>(65504.0f))
#define HALF_MIN (static_cast<metal::half>(0x1p-14f))
#define HALF_EPSILON (static_cast<metal::half>(0x1p-10f))
#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define UCHAR_MAX 255
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 4294967295u
#define LONG_MAX 9223372036854775807l
#define LONG_MIN (-9223372036854775807l - 1)
#define ULONG_MAX 18446744073709551615ul
#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f
#define M_PI_H (static_cast<metal::half>(3.14159265358979323846f))

namespace metal {

// ---- float functions: float, then half and bfloat through float ----

#define TSL_EMU_FLOAT_UNARY(name, body)                                                 \
  inline float name(float x) { return body; }                                           \
  inline half name(half x) { return static_cast<half>(name(static_cast<float>(x))); }   \
  inline bfloat name(bfloat x) { return bfloat(name(static_cast<float>(x))); }          \
  template <class T, int N,                                                             \
            typename std::enable_if<metal_emu::is_float_type<T>::value, int>::type = 0> \
  inline vec<T, N> name(const vec<T, N>& v) {                                           \
    vec<T, N> r;                                                                        \
    for (int i = 0; i < N; ++i) r[i] = name(v[i]);                                      \
    return r;                                                                           \
  }
TSL_EMU_FLOAT_UNARY(exp, __builtin_expf(x))
TSL_EMU_FLOAT_UNARY(exp2, __builtin_exp2f(x))
TSL_EMU_FLOAT_UNARY(exp10, __builtin_powf(10.0f, x))
TSL_EMU_FLOAT_UNARY(log, __builtin_logf(x))
TSL_EMU_FLOAT_UNARY(log2, __builtin_log2f(x))
TSL_EMU_FLOAT_UNARY(log10, __builtin_log10f(x))
TSL_EMU_FLOAT_UNARY(sqrt, __builtin_sqrtf(x))
TSL_EMU_FLOAT_UNARY(rsqrt, 1.0f / __builtin_sqrtf(x))
TSL_EMU_FLOAT_UNARY(sin, __builtin_sinf(x))
TSL_EMU_FLOAT_UNARY(cos, __builtin_cosf(x))
TSL_EMU_FLOAT_UNARY(tan, __builtin_tanf(x))
TSL_EMU_FLOAT_UNARY(sinpi, __builtin_sinf(x* M_PI_F))
TSL_EMU_FLOAT_UNARY(cospi, __builtin_cosf(x* M_PI_F))
TSL_EMU_FLOAT_UNARY(tanpi, __builtin_tanf(x* M_PI_F))
TSL_EMU_FLOAT_UNARY(asin, __builtin_asinf(x))
TSL_EMU_FLOAT_UNARY(acos, __builtin_acosf(x))
TSL_EMU_FLOAT_UNARY(atan, __builtin_atanf(x))
TSL_EMU_FLOAT_UNARY(sinh, __builtin_sinhf(x))
TSL_EMU_FLOAT_UNARY(cosh, __builtin_coshf(x))
TSL_EMU_FLOAT_UNARY(tanh, __builtin_tanhf(x))
TSL_EMU_FLOAT_UNARY(asinh, __builtin_asinhf(x))
TSL_EMU_FLOAT_UNARY(acosh, __builtin_acoshf(x))
TSL_EMU_FLOAT_UNARY(atanh, __builtin_atanhf(x))
TSL_EMU_FLOAT_UNARY(fabs, __builtin_fabsf(x))
TSL_EMU_FLOAT_UNARY(floor, __builtin_floorf(x))
TSL_EMU_FLOAT_UNARY(ceil, __builtin_ceilf(x))
TSL_EMU_FLOAT_UNARY(rint, __builtin_rintf(x))
TSL_EMU_FLOAT_UNARY(round, __builtin_roundf(x))
TSL_EMU_FLOAT_UNARY(trunc, __builtin_truncf(x))
TSL_EMU_FLOAT_UNARY(fract, __builtin_fminf(x - __builtin_floorf(x), 0x1.fffffep-1f))
TSL_EMU_FLOAT_UNARY(sign, x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : (x == x ? x : 0.0f))
TSL_EMU_FLOAT_UNARY(saturate, __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f))
#undef TSL_EMU_FLOAT_UNARY

#define TSL_EMU_FLOAT_PREDICATE(name, body)                                             \
  inline bool name(float x) { return body; }                                            \
  inline bool name(half x) { return name(static_cast<float>(x)); }                      \
  inline bool name(bfloat x) { return name(static_cast<float>(x)); }                    \
  template <class T, int N,                                                             \
            typename std::enable_if<metal_emu::is_float_type<T>::value, int>::type = 0> \
  inline vec<bool, N> name(const vec<T, N>& v) {                                        \
    vec<bool, N> r;                                                                     \
    for (int i = 0; i < N; ++i) r[i] = name(v[i]);                                      \
    return r;                                                                           \
  }
TSL_EMU_FLOAT_PREDICATE(isnan, __builtin_isnan(x))
TSL_EMU_FLOAT_PREDICATE(isinf, __builtin_isinf(x))
TSL_EMU_FLOAT_PREDICATE(isfinite, __builtin_isfinite(x))
TSL_EMU_FLOAT_PREDICATE(isnormal, __builtin_isnormal(x))
TSL_EMU_FLOAT_PREDICATE(signbit, __builtin_signbit(x))
#undef TSL_EMU_FLOAT_PREDICATE

// Binary float functions; a scalar operand of a vector call is broadcast.
#define TSL_EMU_FLOAT_BINARY(name, body)                                          \
  inline float name(float x, float y) { return body; }                            \
  inline half name(half x, half y) {                                              \
    return static_cast<half>(name(static_cast<float>(x), static_cast<float>(y))); \
  }                                                                               \
  inline bfloat name(bfloat x, bfloat y) {                                        \
    return bfloat(name(static_cast<float>(x), static_cast<float>(y)));            \
  }                                                                               \
  template <class A, class B>                                                     \
  inline metal_emu::enable_mixed_t<A, B> name(A x, B y) {                         \
    using C = metal_emu::enable_mixed_t<A, B>;                                    \
    return name(static_cast<C>(x), static_cast<C>(y));                            \
  }                                                                               \
  template <class T, int N>                                                       \
  inline vec<T, N> name(const vec<T, N>& a, const vec<T, N>& b) {                 \
    vec<T, N> r;                                                                  \
    for (int i = 0; i < N; ++i) r[i] = name(a[i], b[i]);                          \
    return r;                                                                     \
  }                                                                               \
  template <class T, int N>                                                       \
  inline vec<T, N> name(const vec<T, N>& a, typename vec<T, N>::value_type b) {   \
    return name(a, vec<T, N>(b));                                                 \
  }                                                                               \
  template <class T, int N>                                                       \
  inline vec<T, N> name(typename vec<T, N>::value_type a, const vec<T, N>& b) {   \
    return name(vec<T, N>(a), b);                                                 \
  }
TSL_EMU_FLOAT_BINARY(fmin, __builtin_fminf(x, y))
TSL_EMU_FLOAT_BINARY(fmax, __builtin_fmaxf(x, y))
TSL_EMU_FLOAT_BINARY(pow, __builtin_powf(x, y))
TSL_EMU_FLOAT_BINARY(powr, __builtin_powf(x, y))
TSL_EMU_FLOAT_BINARY(atan2, __builtin_atan2f(x, y))
TSL_EMU_FLOAT_BINARY(fmod, __builtin_fmodf(x, y))
TSL_EMU_FLOAT_BINARY(copysign, __builtin_copysignf(x, y))
TSL_EMU_FLOAT_BINARY(fdim, __builtin_fdimf(x, y))
TSL_EMU_FLOAT_BINARY(step, y < x ? 0.0f : 1.0f)
#undef TSL_EMU_FLOAT_BINARY

inline float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline half fma(half a, half b, half c) {
  return static_cast<half>(
      __builtin_fmaf(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
}
inline bfloat fma(bfloat a, bfloat b, bfloat c) {
  return bfloat(
      __builtin_fmaf(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
}
template <class T, int N>
inline vec<T, N> fma(const vec<T, N>& a, const vec<T, N>& b, const vec<T, N>& c) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = fma(a[i], b[i], c[i]);
  return r;
}

// ---- min, max, abs, clamp: every scalar type (on floats min and max are fmin and fmax) ----

#define TSL_EMU_INT_MINMAX(T)                      \
  inline T min(T a, T b) { return b < a ? b : a; } \
  inline T max(T a, T b) { return a < b ? b : a; } \
  inline T clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }
TSL_EMU_INT_MINMAX(char)
TSL_EMU_INT_MINMAX(signed char)
TSL_EMU_INT_MINMAX(uchar)
TSL_EMU_INT_MINMAX(short)
TSL_EMU_INT_MINMAX(ushort)
TSL_EMU_INT_MINMAX(int)
TSL_EMU_INT_MINMAX(uint)
TSL_EMU_INT_MINMAX(long)
TSL_EMU_INT_MINMAX(ulong)
#undef TSL_EMU_INT_MINMAX
#define TSL_EMU_FLOAT_MINMAX(T)                 \
  inline T min(T a, T b) { return fmin(a, b); } \
  inline T max(T a, T b) { return fmax(a, b); } \
  inline T clamp(T x, T lo, T hi) { return fmin(fmax(x, lo), hi); }
TSL_EMU_FLOAT_MINMAX(float)
TSL_EMU_FLOAT_MINMAX(half)
TSL_EMU_FLOAT_MINMAX(bfloat)
#undef TSL_EMU_FLOAT_MINMAX

template <class A, class B>
inline metal_emu::enable_mixed_t<A, B> min(A a, B b) {
  using C = metal_emu::enable_mixed_t<A, B>;
  return min(static_cast<C>(a), static_cast<C>(b));
}
template <class A, class B>
inline metal_emu::enable_mixed_t<A, B> max(A a, B b) {
  using C = metal_emu::enable_mixed_t<A, B>;
  return max(static_cast<C>(a), static_cast<C>(b));
}
template <
    class A, class B, class C,
    typename std::enable_if<metal_emu::is_scalar<A>::value && metal_emu::is_scalar<B>::value &&
                                metal_emu::is_scalar<C>::value &&
                                !(std::is_same<A, B>::value && std::is_same<A, C>::value),
                            int>::type = 0>
inline typename metal_emu::common_scalar<typename metal_emu::common_scalar<A, B>::type, C>::type
clamp(A x, B lo, C hi) {
  using R =
      typename metal_emu::common_scalar<typename metal_emu::common_scalar<A, B>::type, C>::type;
  return clamp(static_cast<R>(x), static_cast<R>(lo), static_cast<R>(hi));
}

template <class T, int N>
inline vec<T, N> min(const vec<T, N>& a, const vec<T, N>& b) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = min(a[i], b[i]);
  return r;
}
template <class T, int N>
inline vec<T, N> min(const vec<T, N>& a, typename vec<T, N>::value_type b) {
  return min(a, vec<T, N>(b));
}
template <class T, int N>
inline vec<T, N> max(const vec<T, N>& a, const vec<T, N>& b) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = max(a[i], b[i]);
  return r;
}
template <class T, int N>
inline vec<T, N> max(const vec<T, N>& a, typename vec<T, N>::value_type b) {
  return max(a, vec<T, N>(b));
}
template <class T, int N>
inline vec<T, N> clamp(const vec<T, N>& x, const vec<T, N>& lo, const vec<T, N>& hi) {
  return min(max(x, lo), hi);
}
template <class T, int N>
inline vec<T, N> clamp(const vec<T, N>& x, typename vec<T, N>::value_type lo,
                       typename vec<T, N>::value_type hi) {
  return min(max(x, vec<T, N>(lo)), vec<T, N>(hi));
}

#define TSL_EMU_SIGNED_ABS(T) \
  inline T abs(T x) { return static_cast<T>(x < 0 ? -x : x); }
TSL_EMU_SIGNED_ABS(char)
TSL_EMU_SIGNED_ABS(signed char)
TSL_EMU_SIGNED_ABS(short)
TSL_EMU_SIGNED_ABS(int)
TSL_EMU_SIGNED_ABS(long)
#undef TSL_EMU_SIGNED_ABS
inline uchar abs(uchar x) { return x; }
inline ushort abs(ushort x) { return x; }
inline uint abs(uint x) { return x; }
inline ulong abs(ulong x) { return x; }
inline float abs(float x) { return fabs(x); }
inline half abs(half x) { return fabs(x); }
inline bfloat abs(bfloat x) { return fabs(x); }
template <class T, int N>
inline vec<T, N> abs(const vec<T, N>& v) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = abs(v[i]);
  return r;
}

template <class T, int N>
inline vec<T, N> mix(const vec<T, N>& x, const vec<T, N>& y, const vec<T, N>& a) {
  return x + (y - x) * a;
}
template <class T, int N>
inline vec<T, N> mix(const vec<T, N>& x, const vec<T, N>& y, typename vec<T, N>::value_type a) {
  return x + (y - x) * vec<T, N>(a);
}
inline float mix(float x, float y, float a) { return x + (y - x) * a; }
inline half mix(half x, half y, half a) { return static_cast<half>(x + (y - x) * a); }

// ---- integer bit functions: the result has the argument's type; clz(0) and ctz(0) are its width
// ----

template <class T, typename std::enable_if<metal_emu::is_int_type<T>::value, int>::type = 0>
inline T popcount(T x) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(__builtin_popcountll(static_cast<unsigned long long>(static_cast<U>(x))));
}
template <class T, typename std::enable_if<metal_emu::is_int_type<T>::value, int>::type = 0>
inline T clz(T x) {
  using U = typename std::make_unsigned<T>::type;
  constexpr int bits = 8 * sizeof(T);
  U u = static_cast<U>(x);
  if (u == 0) return static_cast<T>(bits);
  return static_cast<T>(__builtin_clzll(static_cast<unsigned long long>(u)) - (64 - bits));
}
template <class T, typename std::enable_if<metal_emu::is_int_type<T>::value, int>::type = 0>
inline T ctz(T x) {
  using U = typename std::make_unsigned<T>::type;
  U u = static_cast<U>(x);
  if (u == 0) return static_cast<T>(8 * sizeof(T));
  return static_cast<T>(__builtin_ctzll(static_cast<unsigned long long>(u)));
}
// The upper half of the full product.
template <class T, typename std::enable_if<metal_emu::is_int_type<T>::value, int>::type = 0>
inline T mulhi(T a, T b) {
  return static_cast<T>((static_cast<__int128>(a) * static_cast<__int128>(b)) >> (8 * sizeof(T)));
}
#define TSL_EMU_INT_VECTOR(name)                                                      \
  template <class T, int N,                                                           \
            typename std::enable_if<metal_emu::is_int_type<T>::value, int>::type = 0> \
  inline vec<T, N> name(const vec<T, N>& v) {                                         \
    vec<T, N> r;                                                                      \
    for (int i = 0; i < N; ++i) r[i] = name(v[i]);                                    \
    return r;                                                                         \
  }
TSL_EMU_INT_VECTOR(popcount)
TSL_EMU_INT_VECTOR(clz)
TSL_EMU_INT_VECTOR(ctz)
#undef TSL_EMU_INT_VECTOR

// ---- geometric functions ----

template <class T, int N>
inline T dot(const vec<T, N>& a, const vec<T, N>& b) {
  T s = a[0] * b[0];
  for (int i = 1; i < N; ++i) s += a[i] * b[i];
  return s;
}
template <class T, int N>
inline T length(const vec<T, N>& a) {
  return sqrt(dot(a, a));
}
template <class T, int N>
inline T distance(const vec<T, N>& a, const vec<T, N>& b) {
  return length(a - b);
}
template <class T, int N>
inline vec<T, N> normalize(const vec<T, N>& a) {
  return a * vec<T, N>(rsqrt(dot(a, a)));
}
template <class T>
inline vec<T, 3> cross(const vec<T, 3>& a, const vec<T, 3>& b) {
  return vec<T, 3>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// ---- numeric_limits, with half and bfloat ----

template <class T>
struct numeric_limits : std::numeric_limits<T> {};
template <>
struct numeric_limits<half> {
  static constexpr bool is_specialized = true;
  static constexpr half min() { return static_cast<half>(0x1p-14f); }
  static constexpr half max() { return static_cast<half>(65504.0f); }
  static constexpr half lowest() { return static_cast<half>(-65504.0f); }
  static constexpr half epsilon() { return static_cast<half>(0x1p-10f); }
  static constexpr half infinity() { return static_cast<half>(__builtin_inff()); }
  static constexpr half quiet_NaN() { return static_cast<half>(__builtin_nanf("")); }
};
template <>
struct numeric_limits<bfloat> {
  static constexpr bool is_specialized = true;
  static bfloat min() { return bfloat(0x1p-126f); }
  static bfloat max() { return as_type<bfloat>(static_cast<ushort>(0x7f7f)); }
  static bfloat lowest() { return as_type<bfloat>(static_cast<ushort>(0xff7f)); }
  static bfloat epsilon() { return bfloat(0x1p-7f); }
  static bfloat infinity() { return bfloat(__builtin_inff()); }
  static bfloat quiet_NaN() { return bfloat(__builtin_nanf("")); }
};

#define TSL_EMU_MATH_NAMES \
  using metal::exp;        \
  using metal::exp2;       \
  using metal::exp10;      \
  using metal::log;        \
  using metal::log2;       \
  using metal::log10;      \
  using metal::sqrt;       \
  using metal::rsqrt;      \
  using metal::sin;        \
  using metal::cos;        \
  using metal::tan;        \
  using metal::sinpi;      \
  using metal::cospi;      \
  using metal::tanpi;      \
  using metal::asin;       \
  using metal::acos;       \
  using metal::atan;       \
  using metal::sinh;       \
  using metal::cosh;       \
  using metal::tanh;       \
  using metal::fabs;       \
  using metal::floor;      \
  using metal::ceil;       \
  using metal::rint;       \
  using metal::round;      \
  using metal::trunc;      \
  using metal::fract;      \
  using metal::fmin;       \
  using metal::fmax;       \
  using metal::pow;        \
  using metal::powr;       \
  using metal::atan2;      \
  using metal::fmod;       \
  using metal::clamp;      \
  using metal::saturate;   \
  using metal::normalize;  \
  using metal::length;     \
  using metal::distance;
namespace fast {
TSL_EMU_MATH_NAMES
}
namespace precise {
TSL_EMU_MATH_NAMES
}
#undef TSL_EMU_MATH_NAMES

}  // namespace metal

#endif  // TESSEL_METAL_EMU_MATH_H_
