// The stand-in's synchronization: threadgroup_barrier, simdgroup_barrier, the simd_* operations
// and atomics, on top of the harness's callbacks (abi.h). Each call passes its site: the operation,
// and the MSL line and function it is called from (default arguments are evaluated at the call),
// so that the scheduler can tell threads at the same barrier from threads at different ones.
//
// A SIMD operation gathers every taking part lane's value, then each lane computes its own result
// from the gathered values (MSL semantics). Lanes that did not take part (finished, or past the
// end of a partial SIMD group) read as 0xFF bytes: a NaN or -1, like the undefined value a GPU
// gives; reductions skip them.
#ifndef TESSEL_METAL_EMU_SYNC_H_
#define TESSEL_METAL_EMU_SYNC_H_

#pragma GCC system_header

#include "abi.h"
#include "math.h"

namespace metal_emu {

// Set when the harness loads the library (tessel_metal_emu_kernels); one translation unit per
// library, so a static is enough.
static const TslEmuHost* g_host = nullptr;

inline void* threadgroup_slot(uint32_t slot) { return g_host->threadgroup_slot(slot); }

template <class T>
struct gathered {
  const unsigned char* data;
  uint32_t active;
  uint32_t lane;

  T at(uint32_t l) const {
    T v;
    __builtin_memcpy(static_cast<void*>(&v), data + l * sizeof(T), sizeof(T));
    return v;
  }
  bool on(uint32_t l) const { return l < 32 && ((active >> l) & 1u) != 0; }
};

template <class T>
inline gathered<T> gather(const T& value, const char* what, uint32_t line, const char* function) {
  static_assert(sizeof(T) <= TESSEL_METAL_EMU_MAX_SIMD_BYTES, "simd operand too large");
  TslEmuSite site{what, line, function};
  gathered<T> g;
  g.data = g_host->simd_gather(&value, sizeof(T), &site, &g.active, &g.lane);
  return g;
}

[[noreturn]] inline void fail(const char* message, const char* what, uint32_t line,
                              const char* function) {
  TslEmuSite site{what, line, function};
  g_host->fail(message, &site);
  __builtin_unreachable();
}

// ---- binding a kernel's parameters (used by the generated trampolines) ----

template <class P>
inline P bind_pointer(void* p) {
  return reinterpret_cast<P>(p);
}
template <class R>
inline R bind_reference(void* p) {
  return *reinterpret_cast<typename std::remove_reference<R>::type*>(p);
}
template <class R>
constexpr uint32_t reference_bytes() {
  return std::is_reference<R>::value
             ? static_cast<uint32_t>(sizeof(typename std::remove_reference<R>::type))
             : 0u;
}
template <class V>
struct position_binder {
  static V bind(const uint32_t* v) { return static_cast<V>(v[0]); }
};
template <class U>
struct position_binder<metal::vec<U, 2>> {
  static metal::vec<U, 2> bind(const uint32_t* v) { return metal::vec<U, 2>(U(v[0]), U(v[1])); }
};
template <class U>
struct position_binder<metal::vec<U, 3>> {
  static metal::vec<U, 3> bind(const uint32_t* v) {
    return metal::vec<U, 3>(U(v[0]), U(v[1]), U(v[2]));
  }
};
template <class V>
inline V bind_position(const uint32_t* v) {
  static_assert(std::is_same<V, metal::uint>::value || std::is_same<V, metal::ushort>::value ||
                    std::is_same<V, metal::uint2>::value ||
                    std::is_same<V, metal::ushort2>::value ||
                    std::is_same<V, metal::uint3>::value || std::is_same<V, metal::ushort3>::value,
                "a position attribute is uint, ushort or a 2- or 3-vector of them");
  return position_binder<V>::bind(v);
}
template <class V>
inline V bind_index(uint32_t v) {
  static_assert(std::is_same<V, metal::uint>::value || std::is_same<V, metal::ushort>::value,
                "an index attribute is uint or ushort");
  return static_cast<V>(v);
}

}  // namespace metal_emu

// The site arguments every synchronizing call takes last.
#define TSL_EMU_SITE_PARAMS \
  metal::uint tsl_line = __builtin_LINE(), const char *tsl_function = __builtin_FUNCTION()

namespace metal {

enum class mem_flags : uint {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return static_cast<mem_flags>(static_cast<uint>(a) | static_cast<uint>(b));
}

inline void threadgroup_barrier(mem_flags flags, TSL_EMU_SITE_PARAMS) {
  TslEmuSite site{"threadgroup_barrier", tsl_line, tsl_function};
  metal_emu::g_host->threadgroup_barrier(static_cast<uint>(flags), &site);
}
inline void simdgroup_barrier(mem_flags flags, TSL_EMU_SITE_PARAMS) {
  TslEmuSite site{"simdgroup_barrier", tsl_line, tsl_function};
  uint32_t active, lane;
  metal_emu::g_host->simd_gather(nullptr, 0, &site, &active, &lane);
}

// ---- shuffles ----

template <class T>
inline T simd_shuffle(T data, ushort lane, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_shuffle", tsl_line, tsl_function);
  if (lane >= 32)
    metal_emu::fail("simd_shuffle: lane index >= 32", "simd_shuffle", tsl_line, tsl_function);
  return g.at(lane);
}
template <class T>
inline T simd_broadcast(T data, ushort lane, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_broadcast", tsl_line, tsl_function);
  if (lane >= 32)
    metal_emu::fail("simd_broadcast: lane index >= 32", "simd_broadcast", tsl_line, tsl_function);
  return g.at(lane);
}
template <class T>
inline T simd_shuffle_xor(T data, ushort mask, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_shuffle_xor", tsl_line, tsl_function);
  if (mask >= 32)
    metal_emu::fail("simd_shuffle_xor: mask >= 32", "simd_shuffle_xor", tsl_line, tsl_function);
  return g.at(g.lane ^ mask);
}
// Lane i gets lane i + delta; the upper delta lanes keep their own value.
template <class T>
inline T simd_shuffle_down(T data, ushort delta, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_shuffle_down", tsl_line, tsl_function);
  uint32_t src = g.lane + delta;
  return src < 32 ? g.at(src) : data;
}
// Lane i gets lane i - delta; the lower delta lanes keep their own value.
template <class T>
inline T simd_shuffle_up(T data, ushort delta, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_shuffle_up", tsl_line, tsl_function);
  return g.lane >= delta ? g.at(g.lane - delta) : data;
}
template <class T>
inline T simd_shuffle_rotate_down(T data, ushort delta, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_shuffle_rotate_down", tsl_line, tsl_function);
  return g.at((g.lane + delta) % 32);
}
template <class T>
inline T simd_shuffle_rotate_up(T data, ushort delta, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_shuffle_rotate_up", tsl_line, tsl_function);
  return g.at((g.lane + 32 - delta % 32) % 32);
}
template <class T>
inline T simd_broadcast_first(T data, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(data, "simd_broadcast_first", tsl_line, tsl_function);
  return g.at(static_cast<uint32_t>(__builtin_ctz(g.active)));
}

// ---- reductions and scans over the lanes that take part, in lane order ----

#define TSL_EMU_SIMD_REDUCE(name, combine)                           \
  template <class T>                                                 \
  inline T name(T data, TSL_EMU_SITE_PARAMS) {                       \
    auto g = metal_emu::gather(data, #name, tsl_line, tsl_function); \
    bool first = true;                                               \
    T acc = data;                                                    \
    for (uint32_t l = 0; l < 32; ++l) {                              \
      if (!g.on(l)) continue;                                        \
      T v = g.at(l);                                                 \
      if (first) {                                                   \
        acc = v;                                                     \
        first = false;                                               \
      } else {                                                       \
        acc = combine;                                               \
      }                                                              \
    }                                                                \
    return acc;                                                      \
  }
TSL_EMU_SIMD_REDUCE(simd_sum, acc + v)
TSL_EMU_SIMD_REDUCE(simd_product, acc* v)
TSL_EMU_SIMD_REDUCE(simd_max, max(acc, v))
TSL_EMU_SIMD_REDUCE(simd_min, min(acc, v))
TSL_EMU_SIMD_REDUCE(simd_and, acc& v)
TSL_EMU_SIMD_REDUCE(simd_or, acc | v)
TSL_EMU_SIMD_REDUCE(simd_xor, acc ^ v)
#undef TSL_EMU_SIMD_REDUCE

#define TSL_EMU_SIMD_SCAN(name, identity, combine, inclusive)        \
  template <class T>                                                 \
  inline T name(T data, TSL_EMU_SITE_PARAMS) {                       \
    auto g = metal_emu::gather(data, #name, tsl_line, tsl_function); \
    T acc = static_cast<T>(identity);                                \
    for (uint32_t l = 0; l < g.lane + (inclusive ? 1u : 0u); ++l) {  \
      if (g.on(l)) acc = combine;                                    \
    }                                                                \
    return acc;                                                      \
  }
TSL_EMU_SIMD_SCAN(simd_prefix_inclusive_sum, 0, acc + g.at(l), true)
TSL_EMU_SIMD_SCAN(simd_prefix_exclusive_sum, 0, acc + g.at(l), false)
TSL_EMU_SIMD_SCAN(simd_prefix_inclusive_product, 1, acc* g.at(l), true)
TSL_EMU_SIMD_SCAN(simd_prefix_exclusive_product, 1, acc* g.at(l), false)
#undef TSL_EMU_SIMD_SCAN

inline bool simd_all(bool value, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(value, "simd_all", tsl_line, tsl_function);
  for (uint32_t l = 0; l < 32; ++l)
    if (g.on(l) && !g.at(l)) return false;
  return true;
}
inline bool simd_any(bool value, TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(value, "simd_any", tsl_line, tsl_function);
  for (uint32_t l = 0; l < 32; ++l)
    if (g.on(l) && g.at(l)) return true;
  return false;
}
inline bool simd_is_first(TSL_EMU_SITE_PARAMS) {
  auto g = metal_emu::gather(true, "simd_is_first", tsl_line, tsl_function);
  return g.lane == static_cast<uint32_t>(__builtin_ctz(g.active));
}
inline bool simd_is_helper_thread() { return false; }

// ---- atomics: threads are fibers that switch only at rendezvous, so a plain read-modify-write
// is atomic ----

enum memory_order { memory_order_relaxed, memory_order_seq_cst };

template <class T>
struct atomic {
  static_assert(metal_emu::is_scalar<T>::value, "atomics hold MSL scalars");
  T value;
};
typedef atomic<int> atomic_int;
typedef atomic<uint> atomic_uint;
typedef atomic<bool> atomic_bool;
typedef atomic<float> atomic_float;
typedef atomic<ulong> atomic_ulong;

template <class T>
inline T atomic_load_explicit(const volatile atomic<T>* object, memory_order) {
  return object->value;
}
template <class T, class U>
inline void atomic_store_explicit(volatile atomic<T>* object, U desired, memory_order) {
  object->value = static_cast<T>(desired);
}
template <class T, class U>
inline T atomic_exchange_explicit(volatile atomic<T>* object, U desired, memory_order) {
  T old = object->value;
  object->value = static_cast<T>(desired);
  return old;
}
template <class T, class U>
inline bool atomic_compare_exchange_weak_explicit(volatile atomic<T>* object, T* expected,
                                                  U desired, memory_order, memory_order) {
  T cur = object->value;
  if (cur == *expected) {
    object->value = static_cast<T>(desired);
    return true;
  }
  *expected = cur;
  return false;
}
#define TSL_EMU_ATOMIC_RMW(name, combine)                                                        \
  template <class T, class U>                                                                    \
  inline T atomic_fetch_##name##_explicit(volatile atomic<T>* object, U operand, memory_order) { \
    T old = object->value;                                                                       \
    T arg = static_cast<T>(operand);                                                             \
    object->value = static_cast<T>(combine);                                                     \
    return old;                                                                                  \
  }
TSL_EMU_ATOMIC_RMW(add, old + arg)
TSL_EMU_ATOMIC_RMW(sub, old - arg)
TSL_EMU_ATOMIC_RMW(and, old& arg)
TSL_EMU_ATOMIC_RMW(or, old | arg)
TSL_EMU_ATOMIC_RMW(xor, old ^ arg)
TSL_EMU_ATOMIC_RMW(min, min(old, arg))
TSL_EMU_ATOMIC_RMW(max, max(old, arg))
#undef TSL_EMU_ATOMIC_RMW

}  // namespace metal

#undef TSL_EMU_SITE_PARAMS

#endif  // TESSEL_METAL_EMU_SYNC_H_
