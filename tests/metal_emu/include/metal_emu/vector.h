// The stand-in's vector types with MSL's layouts: vec<T, N> (T2, T3, T4) is aligned to its size,
// a 3-vector padded to 4 components (float3 is 16 bytes); packed_vec<T, N> (packed_T2..4) has no
// padding and the element's alignment. Components are .x .y .z .w and [i]; swizzles (.xy) are not
// provided.
//
// Operators are hidden friends, so a scalar operand converts by broadcast (MSL's implicit scalar to
// vector conversion) while two vectors of different element types do not mix (MSL needs an
// explicit conversion, float4(i4)). A packed vector converts to and from its unpacked form (by
// vec's constructor only: a conversion operator as well would make `float4 v = p;` ambiguous) and
// takes part in arithmetic as the unpacked form.
#ifndef TESSEL_METAL_EMU_VECTOR_H_
#define TESSEL_METAL_EMU_VECTOR_H_

#pragma GCC system_header  // anonymous structs in the component unions

#include "scalar.h"

namespace metal {

template <class T, int N>
struct vec;
template <class T, int N>
struct packed_vec;

namespace emu_detail {

// Components as named members and as an array, in one union (GCC and Clang define reading one
// member of a union after writing another).
template <class T, int N, size_t Align>
struct alignas(Align) components;
template <class T, size_t Align>
struct alignas(Align) components<T, 2, Align> {
  union {
    struct {
      T x, y;
    };
    T e_[2];
  };
};
template <class T, size_t Align>
struct alignas(Align) components<T, 3, Align> {
  union {
    struct {
      T x, y, z;
    };
    T e_[3];
  };
};
template <class T, size_t Align>
struct alignas(Align) components<T, 4, Align> {
  union {
    struct {
      T x, y, z, w;
    };
    T e_[4];
  };
};

// How many components an argument of a component constructor (float4(a.x, v2, 1.0f)) gives.
template <class A, class = void>
struct component_count : std::integral_constant<int, 1> {};
template <class U, int M>
struct component_count<vec<U, M>> : std::integral_constant<int, M> {};
template <class U, int M>
struct component_count<packed_vec<U, M>> : std::integral_constant<int, M> {};

template <class... A>
struct total_components : std::integral_constant<int, 0> {};
template <class A, class... R>
struct total_components<A, R...>
    : std::integral_constant<int, component_count<typename std::decay<A>::type>::value +
                                      total_components<R...>::value> {};

template <class T, class A>
inline void put(T* out, int& i, const A& a) {
  out[i++] = static_cast<T>(a);
}
template <class T, class U, int M>
inline void put(T* out, int& i, const vec<U, M>& v) {
  for (int k = 0; k < M; ++k) out[i++] = static_cast<T>(v[k]);
}
template <class T, class U, int M>
inline void put(T* out, int& i, const packed_vec<U, M>& v) {
  for (int k = 0; k < M; ++k) out[i++] = static_cast<T>(v[k]);
}

constexpr size_t vec_align(size_t elem, int n) { return elem * (n == 3 ? 4 : n); }

}  // namespace emu_detail

template <class T, int N>
struct vec : emu_detail::components<T, N, emu_detail::vec_align(sizeof(T), N)> {
  static_assert(metal_emu::is_scalar<T>::value, "vector elements are MSL scalars");
  static_assert(N >= 2 && N <= 4, "MSL vectors have 2 to 4 components");
  using value_type = T;
  using emu_detail::components<T, N, emu_detail::vec_align(sizeof(T), N)>::e_;

  vec() = default;
  vec(T s) {  // NOLINT: MSL broadcasts a scalar implicitly
    for (int i = 0; i < N; ++i) e_[i] = s;
  }
  template <class... A, typename std::enable_if<(sizeof...(A) >= 2), int>::type = 0>
  vec(const A&... a) {  // NOLINT
    static_assert(emu_detail::total_components<A...>::value == N,
                  "a vector constructor needs exactly as many components as the vector has");
    int i = 0;
    (emu_detail::put(e_, i, a), ...);
  }
  template <class U, typename std::enable_if<!std::is_same<U, T>::value, int>::type = 0>
  explicit vec(const vec<U, N>& o) {
    for (int i = 0; i < N; ++i) e_[i] = static_cast<T>(o[i]);
  }
  vec(const packed_vec<T, N>& p) {  // NOLINT
    for (int i = 0; i < N; ++i) e_[i] = p[i];
  }

  T& operator[](int i) { return e_[i]; }
  const T& operator[](int i) const { return e_[i]; }

#define TSL_EMU_VEC_ASSIGN(op)                            \
  vec& operator op##=(const vec& o) {                     \
    for (int i = 0; i < N; ++i) e_[i] = e_[i] op o.e_[i]; \
    return *this;                                         \
  }
  TSL_EMU_VEC_ASSIGN(+)
  TSL_EMU_VEC_ASSIGN(-)
  TSL_EMU_VEC_ASSIGN(*)
  TSL_EMU_VEC_ASSIGN(/)
  TSL_EMU_VEC_ASSIGN(%)
  TSL_EMU_VEC_ASSIGN(&)
  TSL_EMU_VEC_ASSIGN(|)
  TSL_EMU_VEC_ASSIGN(^)
  TSL_EMU_VEC_ASSIGN(<<)
  TSL_EMU_VEC_ASSIGN(>>)
#undef TSL_EMU_VEC_ASSIGN

#define TSL_EMU_VEC_BINARY(op)                                                \
  friend vec operator op(const vec& a, const vec& b) {                        \
    vec r;                                                                    \
    for (int i = 0; i < N; ++i) r.e_[i] = static_cast<T>(a.e_[i] op b.e_[i]); \
    return r;                                                                 \
  }
  TSL_EMU_VEC_BINARY(+)
  TSL_EMU_VEC_BINARY(-)
  TSL_EMU_VEC_BINARY(*)
  TSL_EMU_VEC_BINARY(/)
  TSL_EMU_VEC_BINARY(%)
  TSL_EMU_VEC_BINARY(&)
  TSL_EMU_VEC_BINARY(|)
  TSL_EMU_VEC_BINARY(^)
  TSL_EMU_VEC_BINARY(<<)
  TSL_EMU_VEC_BINARY(>>)
#undef TSL_EMU_VEC_BINARY

#define TSL_EMU_VEC_COMPARE(op)                                 \
  friend vec<bool, N> operator op(const vec& a, const vec& b) { \
    vec<bool, N> r;                                             \
    for (int i = 0; i < N; ++i) r[i] = a.e_[i] op b.e_[i];      \
    return r;                                                   \
  }
  TSL_EMU_VEC_COMPARE(==)
  TSL_EMU_VEC_COMPARE(!=)
  TSL_EMU_VEC_COMPARE(<)
  TSL_EMU_VEC_COMPARE(<=)
  TSL_EMU_VEC_COMPARE(>)
  TSL_EMU_VEC_COMPARE(>=)
  TSL_EMU_VEC_COMPARE(&&)
  TSL_EMU_VEC_COMPARE(||)
#undef TSL_EMU_VEC_COMPARE

  friend vec operator-(const vec& a) {
    vec r;
    for (int i = 0; i < N; ++i) r.e_[i] = static_cast<T>(-a.e_[i]);
    return r;
  }
  friend vec operator+(const vec& a) { return a; }
  friend vec operator~(const vec& a) {
    vec r;
    for (int i = 0; i < N; ++i) r.e_[i] = static_cast<T>(~a.e_[i]);
    return r;
  }
  friend vec<bool, N> operator!(const vec& a) {
    vec<bool, N> r;
    for (int i = 0; i < N; ++i) r[i] = !a.e_[i];
    return r;
  }
};

template <class T, int N>
struct packed_vec : emu_detail::components<T, N, alignof(T)> {
  static_assert(metal_emu::is_scalar<T>::value, "vector elements are MSL scalars");
  using value_type = T;
  using emu_detail::components<T, N, alignof(T)>::e_;

  packed_vec() = default;
  explicit packed_vec(T s) {
    for (int i = 0; i < N; ++i) e_[i] = s;
  }
  template <class... A, typename std::enable_if<(sizeof...(A) >= 2), int>::type = 0>
  packed_vec(const A&... a) {  // NOLINT
    static_assert(emu_detail::total_components<A...>::value == N,
                  "a vector constructor needs exactly as many components as the vector has");
    int i = 0;
    (emu_detail::put(e_, i, a), ...);
  }
  packed_vec(const vec<T, N>& v) {  // NOLINT: MSL converts between packed and unpacked
    for (int i = 0; i < N; ++i) e_[i] = v[i];
  }

  T& operator[](int i) { return e_[i]; }
  const T& operator[](int i) const { return e_[i]; }

#define TSL_EMU_PACKED_ASSIGN(op)                     \
  packed_vec& operator op##=(const vec<T, N>& o) {    \
    return *this = packed_vec(vec<T, N>(*this) op o); \
  }
  TSL_EMU_PACKED_ASSIGN(+)
  TSL_EMU_PACKED_ASSIGN(-)
  TSL_EMU_PACKED_ASSIGN(*)
  TSL_EMU_PACKED_ASSIGN(/)
  TSL_EMU_PACKED_ASSIGN(%)
  TSL_EMU_PACKED_ASSIGN(&)
  TSL_EMU_PACKED_ASSIGN(|)
  TSL_EMU_PACKED_ASSIGN(^)
#undef TSL_EMU_PACKED_ASSIGN

  // Exact-match overloads for every packed / unpacked / scalar pairing, so that none of them is
  // ambiguous with vec's own operators.
#define TSL_EMU_PACKED_BINARY(op, R)                                                          \
  friend R operator op(const packed_vec& a, const packed_vec& b) {                            \
    return vec<T, N>(a) op vec<T, N>(b);                                                      \
  }                                                                                           \
  friend R operator op(const packed_vec& a, const vec<T, N>& b) { return vec<T, N>(a) op b; } \
  friend R operator op(const vec<T, N>& a, const packed_vec& b) { return a op vec<T, N>(b); } \
  friend R operator op(const packed_vec& a, T b) { return vec<T, N>(a) op vec<T, N>(b); }     \
  friend R operator op(T a, const packed_vec& b) { return vec<T, N>(a) op vec<T, N>(b); }
  using unpacked = vec<T, N>;
  using mask = vec<bool, N>;
  TSL_EMU_PACKED_BINARY(+, unpacked)
  TSL_EMU_PACKED_BINARY(-, unpacked)
  TSL_EMU_PACKED_BINARY(*, unpacked)
  TSL_EMU_PACKED_BINARY(/, unpacked)
  TSL_EMU_PACKED_BINARY(%, unpacked)
  TSL_EMU_PACKED_BINARY(&, unpacked)
  TSL_EMU_PACKED_BINARY(|, unpacked)
  TSL_EMU_PACKED_BINARY(^, unpacked)
  TSL_EMU_PACKED_BINARY(==, mask)
  TSL_EMU_PACKED_BINARY(!=, mask)
  TSL_EMU_PACKED_BINARY(<, mask)
  TSL_EMU_PACKED_BINARY(<=, mask)
  TSL_EMU_PACKED_BINARY(>, mask)
  TSL_EMU_PACKED_BINARY(>=, mask)
#undef TSL_EMU_PACKED_BINARY
  friend vec<T, N> operator-(const packed_vec& a) { return -vec<T, N>(a); }
};

#define TSL_EMU_VECTOR_NAMES(T, name)        \
  typedef vec<T, 2> name##2;                 \
  typedef vec<T, 3> name##3;                 \
  typedef vec<T, 4> name##4;                 \
  typedef packed_vec<T, 2> packed_##name##2; \
  typedef packed_vec<T, 3> packed_##name##3; \
  typedef packed_vec<T, 4> packed_##name##4;
TSL_EMU_VECTOR_NAMES(bool, bool)
TSL_EMU_VECTOR_NAMES(char, char)
TSL_EMU_VECTOR_NAMES(uchar, uchar)
TSL_EMU_VECTOR_NAMES(short, short)
TSL_EMU_VECTOR_NAMES(ushort, ushort)
TSL_EMU_VECTOR_NAMES(int, int)
TSL_EMU_VECTOR_NAMES(uint, uint)
TSL_EMU_VECTOR_NAMES(long, long)
TSL_EMU_VECTOR_NAMES(ulong, ulong)
TSL_EMU_VECTOR_NAMES(half, half)
TSL_EMU_VECTOR_NAMES(bfloat, bfloat)
TSL_EMU_VECTOR_NAMES(float, float)
#undef TSL_EMU_VECTOR_NAMES

static_assert(sizeof(float3) == 16 && alignof(float3) == 16, "MSL: float3 is 16 bytes");
static_assert(sizeof(packed_float3) == 12 && alignof(packed_float3) == 4, "packed_float3: 12");
static_assert(sizeof(half3) == 8 && sizeof(float4) == 16 && alignof(long2) == 16, "MSL layouts");

template <int N>
inline bool all(const vec<bool, N>& v) {
  for (int i = 0; i < N; ++i)
    if (!v[i]) return false;
  return true;
}
template <int N>
inline bool any(const vec<bool, N>& v) {
  for (int i = 0; i < N; ++i)
    if (v[i]) return true;
  return false;
}
inline bool all(bool b) { return b; }
inline bool any(bool b) { return b; }

// select(a, b, c): c ? b : a, per component for vectors.
template <class T, int N>
inline vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, const vec<bool, N>& c) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r[i] = c[i] ? b[i] : a[i];
  return r;
}
template <class T, int N>
inline vec<T, N> select(const vec<T, N>& a, const vec<T, N>& b, bool c) {
  return c ? b : a;
}
template <class T, typename std::enable_if<metal_emu::is_scalar<T>::value, int>::type = 0>
inline T select(T a, T b, bool c) {
  return c ? b : a;
}
template <class A, class B>
inline metal_emu::enable_mixed_t<A, B> select(A a, B b, bool c) {
  using C = metal_emu::enable_mixed_t<A, B>;
  return c ? static_cast<C>(b) : static_cast<C>(a);
}

}  // namespace metal

#endif  // TESSEL_METAL_EMU_VECTOR_H_
