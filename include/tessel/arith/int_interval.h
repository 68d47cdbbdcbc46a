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

// The values of a scalar dtype: [min, max] for integers (uint64 up to 2^64 - 1, bool [0, 1]),
// [-kIntervalInf, kIntervalInf] for floats and handles.
IntInterval DTypeRange(ir::DataType t);
bool FitsIn(const IntInterval& x, ir::DataType t);
// x when it fits in t, else t's whole range: the result of an operation whose exact value is x
// and which wraps modulo 2^bits on overflow.
IntInterval FitOrFull(const IntInterval& x, ir::DataType t);
IntInterval Intersect(const IntInterval& a, const IntInterval& b);
IntInterval Union(const IntInterval& a, const IntInterval& b);

i128 SatMul(i128 a, i128 b);
i128 FloorDivI128(i128 a, i128 b);
i128 FloorModI128(i128 a, i128 b);

IntInterval AddInterval(const IntInterval& a, const IntInterval& b);
IntInterval SubInterval(const IntInterval& a, const IntInterval& b);
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
