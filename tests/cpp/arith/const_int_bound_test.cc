#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

constexpr int64_t kPosInf = ConstIntBound::kPosInf;
constexpr int64_t kNegInf = ConstIntBound::kNegInf;

#define EXPECT_BOUND(analyzer, e, lo, hi)           \
  do {                                              \
    ConstIntBound b_ = (analyzer).ConstIntBound(e); \
    EXPECT_EQ(b_->min_value, lo) << #e;             \
    EXPECT_EQ(b_->max_value, hi) << #e;             \
  } while (0)

PrimExpr I64(int64_t v) { return IntImm(DataType::Int(64), v); }
PrimExpr I8(int64_t v) { return IntImm(DataType::Int(8), v); }

TEST(ConstIntBound, LeavesAndBindings) {
  Analyzer a;
  Var x("x"), y("y");
  SizeVar n("n");
  EXPECT_BOUND(a, Int32(5), 5, 5);
  EXPECT_BOUND(a, x, INT32_MIN, INT32_MAX);
  EXPECT_BOUND(a, n, 0, INT32_MAX);
  a.Bind(x, Range(0, 16));
  EXPECT_BOUND(a, x, 0, 15);
  a.Bind(y, x + 3);
  EXPECT_BOUND(a, y, 3, 18);
  Buffer buf = MakeBuffer("A", DataType::Int(8), {16});
  EXPECT_BOUND(a, BufferLoad(buf, {x}), -128, 127);
  EXPECT_BOUND(a, Var("z", DataType::Int(64)), kNegInf, kPosInf);
}

TEST(ConstIntBound, Arithmetic) {
  Analyzer a;
  Var x("x"), y("y");
  a.Bind(x, Range(-4, 9));  // [-4, 4]
  a.Bind(y, Range(1, 3));   // [1, 3]
  EXPECT_BOUND(a, Add(x, y), -3, 7);
  EXPECT_BOUND(a, Sub(x, y), -7, 3);
  EXPECT_BOUND(a, Mul(x, y), -12, 12);
  EXPECT_BOUND(a, Min(x, y), -4, 3);
  EXPECT_BOUND(a, Max(x, y), 1, 4);
  EXPECT_BOUND(a, Select(LT(x, 0), y, x), -4, 4);
  EXPECT_BOUND(a, Let(Var("t"), Add(x, 10), Int32(1)), 1, 1);
  Var t("t");
  EXPECT_BOUND(a, Let(t, Add(x, 10), Mul(t, 2)), 12, 28);
  EXPECT_BOUND(a, if_then_else(LT(x, 100), y, Int32(50)), 1, 3);
}

TEST(ConstIntBound, FloorAndTruncDivisionOfNegatives) {
  Analyzer a;
  Var x("x");
  a.Bind(x, Range(-7, 15));  // [-7, 7]
  EXPECT_BOUND(a, FloorDiv(x, Int32(2)), -4, 3);
  EXPECT_BOUND(a, Div(x, Int32(2)), -3, 3);
  EXPECT_BOUND(a, FloorMod(x, Int32(4)), 0, 3);
  EXPECT_BOUND(a, Mod(x, Int32(4)), -3, 3);
  EXPECT_BOUND(a, FloorMod(x, Int32(-4)), -3, 0);
  EXPECT_BOUND(a, FloorDiv(Int32(-7), Int32(2)), -4, -4);
  EXPECT_BOUND(a, Mod(Int32(-7), Int32(2)), -1, -1);
  // A dividend that stays inside one period keeps its own range.
  Var i("i");
  a.Bind(i, Range(8, 4));  // [8, 11]
  EXPECT_BOUND(a, FloorMod(i, Int32(16)), 8, 11);
  EXPECT_BOUND(a, FloorMod(i, Int32(8)), 0, 3);
}

TEST(ConstIntBound, DivisionByRangeContainingZero) {
  Analyzer a;
  Var x("x"), d("d");
  a.Bind(x, Range(0, 101));  // [0, 100]
  a.Bind(d, Range(-2, 5));   // [-2, 2]
  // Over the non-zero divisors {-2, -1, 1, 2}.
  EXPECT_BOUND(a, FloorDiv(x, d), -100, 100);
  EXPECT_BOUND(a, Div(x, d), -100, 100);
  EXPECT_BOUND(a, FloorMod(x, d), -1, 1);
  EXPECT_BOUND(a, Mod(x, d), 0, 1);
  // Always a division by zero: nothing is known.
  EXPECT_BOUND(a, FloorDiv(x, Int32(0)), INT32_MIN, INT32_MAX);
}

TEST(ConstIntBound, OverflowGivesTheWholeRange) {
  Analyzer a;
  Var x("x", DataType::Int(8));
  a.Bind(x, Range(I8(100), I8(20)));  // [100, 119]
  EXPECT_BOUND(a, Add(x, I8(7)), 107, 126);
  EXPECT_BOUND(a, Add(x, I8(10)), -128, 127);  // 119 + 10 wraps
  EXPECT_BOUND(a, Mul(x, I8(2)), -128, 127);
  // int64 extremes saturate instead of overflowing the bound arithmetic.
  Var y("y", DataType::Int(64));
  EXPECT_BOUND(a, Mul(y, y), kNegInf, kPosInf);
  EXPECT_BOUND(a, Mul(I64(INT64_MAX), I64(INT64_MAX)), kNegInf, kPosInf);
  EXPECT_BOUND(a, Sub(I64(INT64_MIN), I64(1)), kNegInf, kPosInf);
  // INT_MIN / -1 wraps.
  EXPECT_BOUND(a, Div(Int32(INT32_MIN), Int32(-1)), INT32_MIN, INT32_MAX);
}

TEST(ConstIntBound, Casts) {
  Analyzer a;
  Var x("x");
  a.Bind(x, Range(0, 200));  // [0, 199]
  EXPECT_BOUND(a, Cast(DataType::Int(64), x), 0, 199);
  EXPECT_BOUND(a, Cast(DataType::UInt(8), x), 0, 199);
  // Narrowing that does not fit: the whole target range.
  EXPECT_BOUND(a, Cast(DataType::Int(8), x), -128, 127);
  Var s("s");
  a.Bind(s, Range(-3, 2));
  EXPECT_BOUND(a, Cast(DataType::UInt(32), s), 0, 4294967295LL);
  EXPECT_BOUND(a, Cast(DataType::Bool(), Add(x, 1)), 1, 1);
  EXPECT_BOUND(a, Cast(DataType::Int(32), FloatImm(DataType::Float(32), 1.5)), INT32_MIN,
               INT32_MAX);
}

TEST(ConstIntBound, ShiftsAndBitwise) {
  Analyzer a;
  Var x("x"), s("s");
  a.Bind(x, Range(0, 16));  // [0, 15]
  a.Bind(s, Range(0, 3));   // [0, 2]
  EXPECT_BOUND(a, shift_left(x, s), 0, 60);
  EXPECT_BOUND(a, shift_right(x, s), 0, 15);
  EXPECT_BOUND(a, shift_right(x, Int32(2)), 0, 3);
  // A shift amount that may leave [0, bits) is undefined.
  Var t("t");
  EXPECT_BOUND(a, shift_left(x, t), INT32_MIN, INT32_MAX);
  EXPECT_BOUND(a, shift_left(x, Int32(28)), INT32_MIN, INT32_MAX);
  EXPECT_BOUND(a, bitwise_and(x, Int32(7)), 0, 7);
  EXPECT_BOUND(a, bitwise_and(Var("u"), Int32(7)), 0, 7);
  EXPECT_BOUND(a, bitwise_or(x, Int32(16)), 16, 31);
  EXPECT_BOUND(a, bitwise_not(x), -16, -1);
  EXPECT_BOUND(a, bitwise_not(Cast(DataType::UInt(8), x)), 240, 255);
  EXPECT_BOUND(a, bitwise_xor(x, Int32(3)), 0, 15);
}

TEST(ConstIntBound, ComparisonsAreDecidedFromBounds) {
  Analyzer a;
  Var x("x");
  a.Bind(x, Range(0, 16));
  EXPECT_BOUND(a, LT(x, 16), 1, 1);
  EXPECT_BOUND(a, GE(x, 16), 0, 0);
  EXPECT_BOUND(a, LT(x, 8), 0, 1);
  EXPECT_BOUND(a, And(LT(x, 16), LT(x, 8)), 0, 1);
  EXPECT_BOUND(a, Or(LT(x, 16), LT(x, 8)), 1, 1);
}

TEST(ConstIntBound, UpdateRejectsRebinding) {
  Analyzer a;
  Var x("x");
  auto& cib = a.const_int_bound_analyzer();
  cib.Update(x, ConstIntBound(0, 3));
  cib.Update(x, ConstIntBound(0, 3));  // the same bound again is fine
  EXPECT_THROW(cib.Update(x, ConstIntBound(0, 4)), tvm::ffi::Error);
  cib.Update(x, ConstIntBound(0, 4), true);
  EXPECT_BOUND(a, x, 0, 4);
}

// Found by bound_fuzz_test: a product of int64 constants near 2^63 must wrap exactly, not
// saturate, in the modular set (and the bound must be the whole range).
TEST(ConstIntBound, RegressionHugeConstantProduct) {
  Analyzer a;
  Var y("y", DataType::Int(64));
  a.Bind(y, Range(I64(INT64_MIN + 3), I64(1)));
  PrimExpr e = Mul(y, y);
  EXPECT_BOUND(a, e, kNegInf, kPosInf);
  i128 exact = static_cast<i128>(static_cast<unsigned __int128>(INT64_MIN + 3) *
                                 static_cast<unsigned __int128>(INT64_MIN + 3));
  ModularSet m = a.ModularSet(e);
  EXPECT_EQ(m->coeff, 0);
  EXPECT_EQ(m->base, WrapToDType(DataType::Int(64), exact));
}

}  // namespace
}  // namespace tessel
