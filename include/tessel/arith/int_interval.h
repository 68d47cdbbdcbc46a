// Exact interval arithmetic over mathematical integers, the engine under ConstIntBound and the
// overflow checks of every later simplifier ("is this rewrite valid for int32 here?").
//
// An IntInterval [lo, hi] holds __int128 endpoints, wide enough for any 64-bit value and any sum
// or product of two of them; multiplication saturates at +/-kIntervalInf, a magnitude no dtype
// reaches, so a saturated result simply fails the FitsIn check. lo > hi is the empty set (facts
// that contradict each other): every claim about it is vacuously true.
#ifndef TESSEL_ARITH_INT_INTERVAL_H_
#define TESSEL_ARITH_INT_INTERVAL_H_

#include <tessel/ir/dtype.h>

#include <cstdint>
#include <optional>

namespace tessel {
namespace arith {

using i128 = __int128;

// Larger than any value of any dtype; the range of a non-integer dtype is [-kInf, kInf].
constexpr i128 kIntervalInf = static_cast<i128>(1) << 100;

struct IntInterval {
  i128 lo;
  i128 hi;
  bool is_empty() const { return lo > hi; }
  bool is_point() const { return lo == hi; }
  bool contains(i128 v) const { return lo <= v && v <= hi; }
};

// The small operations are inline: the simplifiers apply them to nearly every node they see.

// The values of a scalar dtype: [min, max] for integers (uint64 up to 2^64 - 1, bool [0, 1]),
// [-kIntervalInf, kIntervalInf] for floats and handles.
inline IntInterval DTypeRange(ir::DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_uint()) {
    return {0, t.bits() >= 64 ? (static_cast<i128>(1) << 64) - 1
                              : (static_cast<i128>(1) << t.bits()) - 1};
  }
  if (t.is_int()) return {t.min_int(), t.max_int()};
  return {-kIntervalInf, kIntervalInf};
}
inline bool FitsIn(const IntInterval& x, ir::DataType t) {
  if (x.is_empty()) return true;
  IntInterval r = DTypeRange(t);
  return x.lo >= r.lo && x.hi <= r.hi;
}
// x when it fits in t, else t's whole range: the result of an operation whose exact value is x
// and which wraps modulo 2^bits on overflow.
inline IntInterval FitOrFull(const IntInterval& x, ir::DataType t) {
  return FitsIn(x, t) ? x : DTypeRange(t);
}

// The dtypes whose + - * / % an analyzer in assume_no_overflow mode treats as the mathematical
// operations (no wrap-around), as TVM, Halide and C do for index arithmetic: signed integers of 32
// bits and wider (docs/arith.md, "Two overflow semantics"). Narrower and unsigned integers wrap
// in either mode, and so do casts.
inline bool NoOverflowDType(ir::DataType t) { return t.is_int() && t.bits() >= 32; }
// FitsIn, or a dtype whose values the assume_no_overflow mode takes as exact (never wrapped).
inline bool FitsOrAssumed(const IntInterval& x, ir::DataType t, bool assume_no_overflow) {
  return FitsIn(x, t) || (assume_no_overflow && NoOverflowDType(t));
}
// The interval of an operation's result whose exact value lies in x: x when it fits in t; under
// assume_no_overflow, for a NoOverflowDType, x itself (the value is the mathematical one, which
// may lie outside t's range: a bound must hold for operations a simplification creates too, not
// only for the input's, whose values the mode takes to fit); an end at or past +-kIntervalInf
// (a saturated product) makes it [-kIntervalInf, kIntervalInf], "anything": two saturated ends
// are not numbers (Inf - Inf would read as the point 0); otherwise t's whole range (it wraps).
inline IntInterval FitOrExact(const IntInterval& x, ir::DataType t, bool assume_no_overflow) {
  if (FitsIn(x, t)) return x;
  if (assume_no_overflow && NoOverflowDType(t)) {
    if (x.lo <= -kIntervalInf || x.hi >= kIntervalInf) return {-kIntervalInf, kIntervalInf};
    return x;
  }
  return DTypeRange(t);
}
inline IntInterval Intersect(const IntInterval& a, const IntInterval& b) {
  return {a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi};
}
inline IntInterval Union(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty()) return b;
  if (b.is_empty()) return a;
  return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
}

i128 SatMul(i128 a, i128 b);

// Exact integer division of 128-bit values (b != 0). Inline, with a 64-bit path: the analyzer's
// values nearly always fit in 64 bits, and a 128-bit division is a libgcc call several times
// slower than the hardware's.
namespace detail {
inline bool Fits64(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }
// a / b and a % b can use int64 (INT64_MIN / -1 overflows int64).
inline bool Small(i128 a, i128 b) { return Fits64(a) && Fits64(b) && b != -1; }
}  // namespace detail
inline i128 TruncDivI128(i128 a, i128 b) {
  if (detail::Small(a, b)) return static_cast<int64_t>(a) / static_cast<int64_t>(b);
  return a / b;
}
inline i128 TruncModI128(i128 a, i128 b) {
  if (detail::Small(a, b)) return static_cast<int64_t>(a) % static_cast<int64_t>(b);
  return a % b;
}
inline i128 FloorDivI128(i128 a, i128 b) {
  i128 q = TruncDivI128(a, b);
  if (q * b != a && ((a < 0) != (b < 0))) --q;
  return q;
}
inline i128 FloorModI128(i128 a, i128 b) { return a - FloorDivI128(a, b) * b; }
// The greatest common divisor of |a| and |b| (0 when both are 0).
inline i128 GcdI128(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    i128 t = TruncModI128(a, b);
    a = b;
    b = t;
  }
  return a;
}

namespace detail {
inline i128 Clamp(i128 v) {
  return v < -kIntervalInf ? -kIntervalInf : v > kIntervalInf ? kIntervalInf : v;
}
}  // namespace detail
inline IntInterval AddInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  return {detail::Clamp(a.lo + b.lo), detail::Clamp(a.hi + b.hi)};
}
inline IntInterval SubInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  return {detail::Clamp(a.lo - b.hi), detail::Clamp(a.hi - b.lo)};
}
IntInterval MulInterval(const IntInterval& a, const IntInterval& b);
// Quotients and remainders over every non-zero divisor in b; nullopt when b is exactly {0}
// (always a division by zero: nothing is known).
std::optional<IntInterval> FloorDivInterval(const IntInterval& a, const IntInterval& b);
std::optional<IntInterval> TruncDivInterval(const IntInterval& a, const IntInterval& b);
std::optional<IntInterval> FloorModInterval(const IntInterval& a, const IntInterval& b);
std::optional<IntInterval> TruncModInterval(const IntInterval& a, const IntInterval& b);
IntInterval MinInterval(const IntInterval& a, const IntInterval& b);
IntInterval MaxInterval(const IntInterval& a, const IntInterval& b);
// Two's-complement bitwise operations on exact values (no dtype: results never overflow).
IntInterval BitAndInterval(const IntInterval& a, const IntInterval& b);
IntInterval BitOrInterval(const IntInterval& a, const IntInterval& b);
IntInterval BitXorInterval(const IntInterval& a, const IntInterval& b);

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_INT_INTERVAL_H_
