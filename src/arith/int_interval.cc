// Exact interval arithmetic over __int128 (see int_interval.h).
#include <tessel/arith/int_interval.h>

#include <algorithm>
#include <initializer_list>

namespace tessel {
namespace arith {
namespace {

using detail::Clamp;

i128 MinOf(std::initializer_list<i128> xs) { return *std::min_element(xs.begin(), xs.end()); }
i128 MaxOf(std::initializer_list<i128> xs) { return *std::max_element(xs.begin(), xs.end()); }

// The smallest power of two strictly greater than v (v >= 0).
i128 Pow2Above(i128 v) {
  i128 p = 1;
  while (p <= v && p < kIntervalInf) p <<= 1;
  return p;
}

// The divisor interval split into its strictly positive and strictly negative parts.
struct DivisorParts {
  std::optional<IntInterval> pos, neg;
};
DivisorParts SplitDivisor(const IntInterval& b) {
  DivisorParts p;
  if (b.hi >= 1) p.pos = IntInterval{std::max<i128>(b.lo, 1), b.hi};
  if (b.lo <= -1) p.neg = IntInterval{b.lo, std::min<i128>(b.hi, -1)};
  return p;
}

// For a divisor interval of one sign, q(x, y) is monotone in each argument, so its extremes over
// the box a x b lie at the corners.
template <typename F>
IntInterval DivCorners(const IntInterval& a, const IntInterval& b, F q) {
  i128 c0 = q(a.lo, b.lo), c1 = q(a.lo, b.hi), c2 = q(a.hi, b.lo), c3 = q(a.hi, b.hi);
  return {MinOf({c0, c1, c2, c3}), MaxOf({c0, c1, c2, c3})};
}

template <typename F>
std::optional<IntInterval> DivOverParts(const IntInterval& a, const IntInterval& b, F part) {
  if (a.is_empty() || b.is_empty()) return IntInterval{1, 0};
  DivisorParts p = SplitDivisor(b);
  std::optional<IntInterval> r;
  for (const auto& d : {p.pos, p.neg}) {
    if (!d) continue;
    IntInterval x = part(a, *d);
    r = r ? Union(*r, x) : x;
  }
  return r;
}

}  // namespace

i128 SatMul(i128 a, i128 b) {
  i128 r;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? -kIntervalInf : kIntervalInf;
  return Clamp(r);
}

IntInterval MulInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  // A constant factor (a term's coefficient, a stride): two products, ordered by its sign.
  if (a.is_point() || b.is_point()) {
    const IntInterval& x = a.is_point() ? b : a;
    i128 c = a.is_point() ? a.lo : b.lo;
    i128 p = SatMul(x.lo, c), q = SatMul(x.hi, c);
    return c >= 0 ? IntInterval{p, q} : IntInterval{q, p};
  }
  i128 c0 = SatMul(a.lo, b.lo), c1 = SatMul(a.lo, b.hi), c2 = SatMul(a.hi, b.lo),
       c3 = SatMul(a.hi, b.hi);
  return {MinOf({c0, c1, c2, c3}), MaxOf({c0, c1, c2, c3})};
}

std::optional<IntInterval> FloorDivInterval(const IntInterval& a, const IntInterval& b) {
  // The common case, a positive constant divisor: floor division by it is monotone.
  if (b.is_point() && b.lo > 0 && !a.is_empty()) {
    return IntInterval{FloorDivI128(a.lo, b.lo), FloorDivI128(a.hi, b.lo)};
  }
  return DivOverParts(a, b, [](const IntInterval& x, const IntInterval& d) {
    return DivCorners(x, d, FloorDivI128);
  });
}

std::optional<IntInterval> TruncDivInterval(const IntInterval& a, const IntInterval& b) {
  // A positive constant divisor: truncating division by it is monotone too.
  if (b.is_point() && b.lo > 0 && !a.is_empty()) {
    return IntInterval{TruncDivI128(a.lo, b.lo), TruncDivI128(a.hi, b.lo)};
  }
  return DivOverParts(a, b, [](const IntInterval& x, const IntInterval& d) {
    return DivCorners(x, d, TruncDivI128);
  });
}

std::optional<IntInterval> FloorModInterval(const IntInterval& a, const IntInterval& b) {
  return DivOverParts(a, b, [](const IntInterval& x, const IntInterval& d) -> IntInterval {
    if (d.lo > 0) {
      // x below every divisor: the remainder is x itself.
      if (x.lo >= 0 && x.hi < d.lo) return x;
      if (d.is_point() && FloorDivI128(x.lo, d.lo) == FloorDivI128(x.hi, d.lo)) {
        return {FloorModI128(x.lo, d.lo), FloorModI128(x.hi, d.lo)};
      }
      return {0, x.lo >= 0 ? std::min(x.hi, d.hi - 1) : d.hi - 1};
    }
    // Negative divisors: the remainder lies in (d, 0].
    if (x.hi <= 0 && x.lo > d.hi) return x;
    if (d.is_point() && FloorDivI128(x.lo, d.lo) == FloorDivI128(x.hi, d.lo)) {
      return {FloorModI128(x.lo, d.lo), FloorModI128(x.hi, d.lo)};
    }
    return {x.hi <= 0 ? std::max(x.lo, d.lo + 1) : d.lo + 1, 0};
  });
}

std::optional<IntInterval> TruncModInterval(const IntInterval& a, const IntInterval& b) {
  return DivOverParts(a, b, [](const IntInterval& x, const IntInterval& d) -> IntInterval {
    if (x.is_point() && d.is_point()) return {x.lo % d.lo, x.lo % d.lo};
    // |remainder| < |divisor|, and the remainder has the sign of the dividend.
    i128 max_abs = std::max(d.lo < 0 ? -d.lo : d.lo, d.hi < 0 ? -d.hi : d.hi);
    i128 min_abs = std::min(d.lo < 0 ? -d.lo : d.lo, d.hi < 0 ? -d.hi : d.hi);
    if (x.lo > -min_abs && x.hi < min_abs) return x;
    i128 lo = x.lo >= 0 ? 0 : std::max(x.lo, -(max_abs - 1));
    i128 hi = x.hi <= 0 ? 0 : std::min(x.hi, max_abs - 1);
    return {lo, hi};
  });
}

IntInterval MinInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
}

IntInterval MaxInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
}

IntInterval BitAndInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  // x & y keeps only bits of each side: it is <= any non-negative side, non-negative when one
  // side is, and <= min(x, y) when both are negative.
  i128 lo, hi;
  if (a.lo >= 0 || b.lo >= 0) {
    lo = 0;
  } else {
    // Both may be negative: values >= -2^k share the ones above bit k, and so does their and.
    i128 p = Pow2Above(-std::min(a.lo, b.lo) - 1);
    lo = -p;
  }
  if (a.lo >= 0 && b.lo >= 0) {
    hi = std::min(a.hi, b.hi);
  } else if (a.lo >= 0) {
    hi = a.hi;
  } else if (b.lo >= 0) {
    hi = b.hi;
  } else if (a.hi < 0 && b.hi < 0) {
    hi = std::min(a.hi, b.hi);
  } else {
    hi = std::max(a.hi, b.hi);
  }
  return {lo, hi};
}

IntInterval BitOrInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  // x | y only sets bits: >= max(x, y) when both are non-negative, in [x, -1] when x < 0.
  i128 lo = (a.lo >= 0 && b.lo >= 0) ? std::max(a.lo, b.lo) : std::min(a.lo, b.lo);
  i128 hi = (a.hi < 0 || b.hi < 0) ? -1 : Pow2Above(std::max(a.hi, b.hi)) - 1;
  return {lo, hi};
}

IntInterval BitXorInterval(const IntInterval& a, const IntInterval& b) {
  if (a.is_empty() || b.is_empty()) return {1, 0};
  // Both sides lie in [-2^k, 2^k); so does their xor, which is non-negative when the signs agree.
  i128 mag = MaxOf({a.hi, b.hi, -a.lo - 1, -b.lo - 1, 0});
  i128 p = Pow2Above(mag);
  bool both_nonneg = a.lo >= 0 && b.lo >= 0;
  bool both_neg = a.hi < 0 && b.hi < 0;
  return {(both_nonneg || both_neg) ? 0 : -p, p - 1};
}

}  // namespace arith
}  // namespace tessel
