// The inline 128-bit division helpers (int_interval.h, with a 64-bit path) and the canonical
// form's wrap-around against plain __int128 arithmetic, on edge values and random ones of every
// width up to 100 bits.
#include <gtest/gtest.h>
#include <tessel/arith/int_interval.h>

#include <cstdint>
#include <random>
#include <vector>

#include "arith/canonical/sum_form.h"

namespace tessel {
namespace arith {
namespace {

i128 RefFloorDiv(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::vector<i128> Samples() {
  std::vector<i128> v = {0,
                         1,
                         -1,
                         2,
                         -2,
                         3,
                         -3,
                         7,
                         -7,
                         8,
                         -8,
                         INT32_MAX,
                         INT32_MIN,
                         static_cast<i128>(INT32_MAX) + 1,
                         INT64_MAX,
                         INT64_MIN,
                         static_cast<i128>(INT64_MAX) + 1,
                         static_cast<i128>(INT64_MIN) - 1,
                         kIntervalInf,
                         -kIntervalInf};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 400; ++i) {
    int bits = 1 + static_cast<int>(rng() % 100);
    i128 x = static_cast<i128>(rng()) << 40 ^ static_cast<i128>(rng());
    x &= (static_cast<i128>(1) << bits) - 1;
    v.push_back(rng() % 2 ? x : -x);
  }
  return v;
}

TEST(IntDivision, MatchesInt128) {
  std::vector<i128> s = Samples();
  for (i128 a : s) {
    for (i128 b : s) {
      if (b == 0) continue;
      ASSERT_TRUE(TruncDivI128(a, b) == a / b);
      ASSERT_TRUE(TruncModI128(a, b) == a % b);
      ASSERT_TRUE(FloorDivI128(a, b) == RefFloorDiv(a, b));
      ASSERT_TRUE(FloorModI128(a, b) == a - RefFloorDiv(a, b) * b);
    }
  }
}

TEST(IntDivision, Gcd) {
  EXPECT_TRUE(GcdI128(0, 0) == 0);
  EXPECT_TRUE(GcdI128(-12, 18) == 6);
  EXPECT_TRUE(GcdI128(12, 0) == 12);
  EXPECT_TRUE(GcdI128(0, -5) == 5);
  EXPECT_TRUE(GcdI128(static_cast<i128>(1) << 90, static_cast<i128>(3) << 80) ==
              static_cast<i128>(1) << 80);
  EXPECT_TRUE(GcdI128(INT64_MIN, INT64_MIN) == -static_cast<i128>(INT64_MIN));
}

TEST(IntDivision, CanonicalWrapIsTheSignedResidue) {
  for (i128 v : Samples()) {
    for (int bits : {1, 8, 16, 32, 64}) {
      i128 m = static_cast<i128>(1) << bits;
      i128 r = v % m;
      if (r < 0) r += m;
      if (r >= m / 2) r -= m;
      ASSERT_EQ(canonical::Wrap(v, bits), static_cast<int64_t>(r)) << "bits " << bits;
    }
  }
}

}  // namespace
}  // namespace arith
}  // namespace tessel
