// Analyzer::SetAssumeNoOverflow: what the mode proves that the default mode must not, what it
// leaves wrapping (narrow and unsigned integers), clamped bounds, the simplifications it allows,
// clones, the error for a late switch, and the Z3 model of each mode. Then regression tests for
// wrong answers that the fuzzers found in the mode (bound_fuzz_test.cc and friends), each with
// the point at which the old answer was wrong.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <limits>
#include <string>

#include "eval.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)
using testing::ExactEvaluator;
using testing::i128;
using testing::Semantics;

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

PrimExpr I32(int64_t v) { return IntImm(DataType::Int(32), v); }
PrimExpr I64(int64_t v) { return IntImm(DataType::Int(64), v); }

// An analyzer in assume_no_overflow mode.
std::unique_ptr<Analyzer> NoOverflow() {
  auto a = std::make_unique<Analyzer>();
  a->SetAssumeNoOverflow(true);
  return a;
}

// The canonical simplifier alone (Analyzer::CanonicalSimplify may run other stages too).
PrimExpr CanonicalOnly(Analyzer* a, const PrimExpr& e) {
  AnalyzerExtension* canonical = a->FindExtension("canonical");
  EXPECT_NE(canonical, nullptr);
  return canonical ? canonical->Simplify(e) : e;
}

// The exact value of e at env in the mode's semantics (int32/int64 arithmetic exact).
i128 ValueInMode(const PrimExpr& e, const testing::Env& env) {
  ExactEvaluator ev(env, Semantics::kAssumeNoOverflow);
  auto v = ev(e);
  EXPECT_TRUE(v.has_value()) << AsText(e);
  return v.value_or(0);
}

// ---- what the mode changes ----

TEST(OverflowMode, DefaultIsWrapAround) {
  Analyzer a;
  EXPECT_FALSE(a.assume_no_overflow());
  Var x("x");
  // False for x = INT32_MAX under wrap-around.
  EXPECT_FALSE(a.CanProve(x + 1 > x));
  EXPECT_FALSE(NoOverflow()->CanProve(x + 1 < x));
}

TEST(OverflowMode, ProvesWhatNoOverflowImplies) {
  auto a = NoOverflow();
  EXPECT_TRUE(a->assume_no_overflow());
  Var x("x"), n("n", DataType::Int(64));
  EXPECT_TRUE(a->CanProve(x + 1 > x));
  EXPECT_TRUE(a->CanProve(x - 1 < x));
  EXPECT_TRUE(a->CanProve(n + I64(1) > n));
}

TEST(OverflowMode, NarrowAndUnsignedIntegersStillWrap) {
  auto a = NoOverflow();
  Var b("b", DataType::Int(8)), h("h", DataType::Int(16)), u("u", DataType::UInt(32));
  // False for b = 127, h = 32767, u = UINT32_MAX.
  EXPECT_FALSE(a->CanProve(b + IntImm(DataType::Int(8), 1) > b));
  EXPECT_FALSE(a->CanProve(h + IntImm(DataType::Int(16), 1) > h));
  EXPECT_FALSE(a->CanProve(u + IntImm(DataType::UInt(32), 1) > u));
  ConstIntBound bb = a->ConstIntBound(b + IntImm(DataType::Int(8), 1));
  EXPECT_EQ(bb->min_value, -128);
  EXPECT_EQ(bb->max_value, 127);
  // Casts wrap too: (int8)(x) of an int32 x covers all of int8.
  Var x("x");
  EXPECT_FALSE(a->CanProve(cast(DataType::Int(8), x + 1) > cast(DataType::Int(8), x)));
}

// A bound in the mode is the exact interval of the mathematical value, not widened to the whole
// dtype (the default) and not clamped into it: it must also hold for operations a simplification
// creates, whose values may leave the dtype (RegressionRewriteDecidesFromItsOwnOverflow).
TEST(OverflowMode, BoundsAreExact) {
  Var x("x");
  ConstIntBound d = Analyzer().ConstIntBound(x + 1);
  EXPECT_EQ(d->min_value, kI32Min);
  EXPECT_EQ(d->max_value, kI32Max);
  auto a = NoOverflow();
  ConstIntBound b = a->ConstIntBound(x + 1);
  EXPECT_EQ(b->min_value, kI32Min + 1);
  EXPECT_EQ(b->max_value, int64_t{kI32Max} + 1);
  ConstIntBound s = a->ConstIntBound(x - 1);
  EXPECT_EQ(s->min_value, int64_t{kI32Min} - 1);
  EXPECT_EQ(s->max_value, kI32Max - 1);
  // int64 saturates to the sentinels.
  Var y("y", DataType::Int(64));
  ConstIntBound w = a->ConstIntBound(y * 4);
  EXPECT_EQ(w->min_value, ConstIntBound::kNegInf);
  EXPECT_EQ(w->max_value, ConstIntBound::kPosInf);
}

TEST(OverflowMode, SimplifiesWhatNoOverflowImplies) {
  Var x("x");
  PrimExpr e = floordiv(x * 4, 2);
  PrimExpr by_default = Analyzer().Simplify(e);
  EXPECT_FALSE(tvm::ffi::StructuralEqual::Equal(by_default, x * 2)) << AsText(by_default);
  PrimExpr in_mode = NoOverflow()->Simplify(e);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(in_mode, x * 2)) << AsText(in_mode);
}

TEST(OverflowMode, CloneKeepsTheMode) {
  auto a = NoOverflow();
  Var x("x");
  a->Bind(x, Range(0, 16));
  std::unique_ptr<Analyzer> c = a->Clone();
  EXPECT_TRUE(c->assume_no_overflow());
  Var y("y");
  EXPECT_TRUE(c->CanProve(y + 1 > y));
  EXPECT_FALSE(Analyzer().Clone()->assume_no_overflow());
  EXPECT_FALSE(Analyzer().Clone()->CanProve(y + 1 > y));
}

TEST(OverflowMode, SwitchingAfterABindIsAnError) {
  Var x("x");
  auto expect_error = [](Analyzer& a) {
    try {
      a.SetAssumeNoOverflow(true);
      ADD_FAILURE() << "SetAssumeNoOverflow after a bind did not throw";
    } catch (const tvm::ffi::Error& e) {
      EXPECT_EQ(e.kind(), "ValueError");
      EXPECT_NE(std::string(e.message()).find("before any variable is bound"), std::string::npos)
          << e.message();
    }
    EXPECT_FALSE(a.assume_no_overflow());
  };
  Analyzer bound;
  bound.Bind(x, Range(0, 8));
  expect_error(bound);
  Analyzer scoped;
  {
    ConstraintScope scope(&scoped, x < 8);
    expect_error(scoped);
  }
  // Setting the mode it already has is no switch; before any bind it is allowed both ways.
  bound.SetAssumeNoOverflow(false);
  Analyzer fresh;
  fresh.SetAssumeNoOverflow(true);
  fresh.SetAssumeNoOverflow(false);
  EXPECT_FALSE(fresh.CanProve(x + 1 > x));
}

// ---- the Z3 model of each mode ----

#define REQUIRE_Z3() \
  if (!Z3Prover::Available()) GTEST_SKIP() << "built without Z3"

ProofResult AskZ3(Analyzer& a, const PrimExpr& cond) {
  AnalyzerExtension* z3 = a.FindExtension("z3");
  EXPECT_NE(z3, nullptr);
  return z3 ? z3->TryProve(cond, ProofStrength::kDefault) : ProofResult::kUnknown;
}

TEST(OverflowMode, Z3ModelsEachMode) {
  REQUIRE_Z3();
  Var x("x");
  PrimExpr cond = eq(floordiv(x * 2, 2), x);
  Analyzer wrap;
  // x = 2^30 wraps x * 2 to INT32_MIN.
  EXPECT_EQ(AskZ3(wrap, cond), ProofResult::kDisproved);
  EXPECT_EQ(AskZ3(*NoOverflow(), cond), ProofResult::kProved);
  // Narrow types still wrap in the mode's model.
  Var b("b", DataType::Int(8));
  PrimExpr two = IntImm(DataType::Int(8), 2);
  EXPECT_EQ(AskZ3(*NoOverflow(), eq(floordiv(b * two, two), b)), ProofResult::kDisproved);
}

TEST(OverflowMode, Z3VerdictsAreNotSharedAcrossModes) {
  REQUIRE_Z3();
  Var x("x");
  PrimExpr cond = eq(floordiv(x * 2, 2), x);
  // Two analyzers, one condition, two answers, asked in either order.
  Analyzer first;
  auto second = NoOverflow();
  EXPECT_EQ(AskZ3(first, cond), ProofResult::kDisproved);
  EXPECT_EQ(AskZ3(*second, cond), ProofResult::kProved);
  EXPECT_EQ(AskZ3(first, cond), ProofResult::kDisproved);
  // One prover's cache across a switch (allowed while nothing is bound), and a clone's copy of
  // the cache under the other mode.
  Analyzer a;
  EXPECT_EQ(AskZ3(a, cond), ProofResult::kDisproved);
  a.SetAssumeNoOverflow(true);
  EXPECT_EQ(AskZ3(a, cond), ProofResult::kProved);
  std::unique_ptr<Analyzer> c = a.Clone();
  c->SetAssumeNoOverflow(false);
  EXPECT_EQ(AskZ3(*c, cond), ProofResult::kDisproved);
  a.SetAssumeNoOverflow(false);
  EXPECT_EQ(AskZ3(a, cond), ProofResult::kDisproved);
}

// ---- regressions found by the fuzzers in the mode ----

// IntSet: the end `4 + max(x)` of two constants folded modulo 2^64 to a negative end.
TEST(OverflowMode, RegressionIntSetConstantEndDoesNotWrap) {
  auto a = NoOverflow();
  Var x("x", DataType::Int(64));
  Map<Var, Range> dom;
  dom.Set(x, Range(I64(kI64Max - 22), I64(21)));  // [INT64_MAX - 22, INT64_MAX - 2]
  PrimExpr e = truncdiv(I64(4) + x, I64(8));
  IntSet s = a->IntSet(e, dom);
  // x = INT64_MAX - 9 is in the mode's domain: 4 + x fits.
  testing::Env env{{x.get(), static_cast<i128>(kI64Max) - 9}};
  i128 v = ValueInMode(e, env);
  ASSERT_TRUE(s->max_value.has_value());
  EXPECT_GE(ValueInMode(s->max_value.value(), env), v) << AsText(s->max_value.value());
  ASSERT_TRUE(s->min_value.has_value());
  EXPECT_LE(ValueInMode(s->min_value.value(), env), v) << AsText(s->min_value.value());
}

// CanonicalSimplify: floormod(x, 195) within one period is x + 2147483715, whose constant was
// stored as its int32 representative: `x - 2147483581`, off by 2^32 in the mode's semantics.
TEST(OverflowMode, RegressionCanonicalConstantIsNotReduced) {
  auto a = NoOverflow();
  Var x("x");
  ConstraintScope scope(a.get(), I32(-2147483647) <= x && x <= I32(-2147483628));
  PrimExpr e = floormod(x, 195);
  PrimExpr r = CanonicalOnly(a.get(), e);
  for (int64_t v : {-2147483647L, -2147483640L, -2147483628L}) {
    testing::Env env{{x.get(), v}};
    EXPECT_EQ(ValueInMode(r, env), ValueInMode(e, env)) << AsText(r) << " at x = " << v;
  }
  // The default mode keeps the wrap-around form, which is right there.
  Analyzer d;
  ConstraintScope dscope(&d, I32(-2147483647) <= x && x <= I32(-2147483628));
  PrimExpr rd = CanonicalOnly(&d, e);
  testing::Env env{{x.get(), -2147483640}};
  EXPECT_EQ(ExactEvaluator(env)(rd), ExactEvaluator(env)(e)) << AsText(rd);
}

// CanonicalSimplify: the remainder part j + 26 of `j - 2147483590` (j % 70 within one period)
// was taken as exact by the mode's assumption, which covers the input's operations only: j + 26
// leaves int32 for j near INT32_MAX, and `j % 70 % 32 // 16` became the constant 1.
TEST(OverflowMode, RegressionCanonicalDerivedRemainderMustFit) {
  auto a = NoOverflow();
  Var j("j");
  ConstraintScope scope(a.get(), I32(2147483619) <= j && j <= I32(2147483644));
  PrimExpr e = floordiv(floormod(floormod(j, 70), 32), 16);
  PrimExpr r = CanonicalOnly(a.get(), e);
  for (int64_t v = 2147483619; v <= 2147483644; ++v) {
    testing::Env env{{j.get(), v}};
    ASSERT_EQ(ValueInMode(r, env), ValueInMode(e, env)) << AsText(r) << " at j = " << v;
  }
}

// ModularSet: a shift wraps in the mode too, so (-76 * x << 17) keeps only the power-of-two part
// of its coefficient (it was taken as 76 * 2^17 exactly).
TEST(OverflowMode, RegressionModularSetOfShiftWraps) {
  auto a = NoOverflow();
  Var x("x");
  a->Bind(x, Range(I32(-16692), I32(29031)));
  PrimExpr shifted = Call(DataType::Int(32), builtin::shift_left(), {I32(-76) * x, I32(17)});
  PrimExpr e = floordiv(shifted, 1024);
  ModularSet m = a->ModularSet(e);
  for (int64_t v : {-15127L, -16692L, 12337L}) {
    testing::Env env{{x.get(), v}};
    i128 value = ValueInMode(e, env);
    if (m->coeff == 0) {
      EXPECT_EQ(value, m->base);
    } else {
      EXPECT_EQ(testing::FloorDivExact(value - m->base, m->coeff) * m->coeff, value - m->base)
          << "x = " << v << ": " << static_cast<int64_t>(value) << " not in (" << m->coeff << ", "
          << m->base << ")";
    }
  }
}

// ---- wrong answers of the mode that are not fixed yet ----
//
// Both come from one gap: the mode assumes that no int32/int64 operation *of the input*
// overflows, but the analyzer also reasons under that assumption about operations that a
// simplification made (a reassociated sum, a distributed product), which may overflow at points
// where the input's operations do not. Each check below is false at the point named. Remove the
// GTEST_SKIP once it is fixed.

// The rewriter reassociates and then decides from the clamped bound of its own new operation:
// `(x - 1) + y` becomes `x + y - 1`, and x + y leaves int32 at x = 1, y = INT32_MAX, where the
// input's value is INT32_MAX.
TEST(OverflowMode, RegressionRewriteDecidesFromItsOwnOverflow) {
  Var x("x"), y("y");
  {
    auto a = NoOverflow();
    PrimExpr cond = (x - 1) + y < I32(kI32Max);
    testing::Env at{{x.get(), 1}, {y.get(), kI32Max}};
    EXPECT_EQ(ValueInMode(cond, at), 0);
    EXPECT_EQ(ValueInMode(a->RewriteSimplify(cond), at), 0) << AsText(a->RewriteSimplify(cond));
    EXPECT_FALSE(a->CanProve(cond));
  }
  {
    // x * -8 moves out of the parenthesis: y - x * -8 leaves int32 for y near INT32_MAX.
    auto a = NoOverflow();
    a->Bind(x, Range(I32(0), I32(21)));
    a->Bind(y, Range(I32(kI32Max - 10), I32(11)));
    PrimExpr cond = I32(100) <= y - (x * I32(-8) + I32(2147483646));
    testing::Env at{{x.get(), 20}, {y.get(), kI32Max}};
    EXPECT_EQ(ValueInMode(cond, at), 1);
    EXPECT_EQ(ValueInMode(a->RewriteSimplify(cond), at), 1) << AsText(a->RewriteSimplify(cond));
  }
  {
    // (x + 1) * 4 becomes x * 4 + 4: at x = -536870913 the input is INT32_MIN exactly, x * 4
    // is below it.
    auto a = NoOverflow();
    PrimExpr cond = (x + 1) * 4 > I32(kI32Min);
    testing::Env at{{x.get(), -536870913}};
    EXPECT_EQ(ValueInMode(cond, at), 0);
    EXPECT_FALSE(a->CanProve(cond));
  }
}

// CanProve decides the simplified condition, and the canonical form's new operations may leave
// the dtype where the input's do not (the canonical form equals the input as mathematical
// integers, docs/arith.md; its own intermediate values are not re-checked).
TEST(OverflowMode, RegressionProofFromTheSimplifiedForm) {
  {
    // s * (t % 3) with t % 3 == t + 1073741823 here is distributed to s * 1073741823 + t * s,
    // and s * 1073741823 leaves int32 for s = -7. False at x = 2147483645, y = 26 (value -7).
    auto a = NoOverflow();
    Var x("x"), y("y");
    ConstraintScope sx(a.get(), I32(2147483642) <= x && x <= I32(2147483646));
    ConstraintScope sy(a.get(), I32(2) <= y && y <= I32(48));
    PrimExpr s = Select(y * 16 >= y, min(x, -7), truncdiv(I32(-8), I32(3)));
    PrimExpr cond = s * floormod(truncdiv(x, -2), 3) >= I32(-6);
    testing::Env at{{x.get(), 2147483645}, {y.get(), 26}};
    EXPECT_EQ(ValueInMode(cond, at), 0);
    EXPECT_FALSE(a->CanProve(cond));
  }
  {
    // x + ((x | y) - y) + 1 becomes x + (x | y) - y + 1, and x + (x | y) leaves int64. False at
    // x = 21, y = INT64_MAX - 2 (value 22).
    auto a = NoOverflow();
    Var x("x", DataType::Int(64)), y("y", DataType::Int(64));
    a->Bind(x, Range(I64(3), I64(37)));
    a->Bind(y, Range(I64(kI64Max - 2), I64(3)));
    PrimExpr bor = Call(DataType::Int(64), builtin::bitwise_or(), {x, y});
    PrimExpr cond = x + (bor - y) + I64(1) < I64(4);
    testing::Env at{{x.get(), 21}, {y.get(), kI64Max - 2}};
    EXPECT_EQ(ValueInMode(cond, at), 0);
    EXPECT_FALSE(a->CanProve(cond));
  }
}

// Products of int64 values near INT64_MAX saturate the exact interval arithmetic at 2^100. Two
// saturated ends are not numbers: x * y - x * K read as the point 0 (in ConstIntBound and in the
// Z3 encoder's own intervals), and `(y - K) * x % 4 == 0` was proved though it is false at
// x = INT64_MAX, y = INT64_MAX - 4 (found by BoundFuzz at seed 208).
TEST(OverflowMode, RegressionSaturatedProductsAreNotPoints) {
  auto a = NoOverflow();
  Var x("x", DataType::Int(64)), y("y", DataType::Int(64));
  a->Bind(y, Range(I64(kI64Max - 14), I64(14)));
  ConstraintScope sx(a.get(), And(LE(I64(kI64Max - 1), x), LE(x, I64(kI64Max))));
  ConstraintScope sy(a.get(), EQ(FloorMod(y, I64(4)), I64(3)));
  PrimExpr k = I64(kI64Max - 5);
  PrimExpr cond = EQ(FloorMod(Mul(Sub(y, k), x), I64(4)), I64(0));
  EXPECT_FALSE(a->CanProve(cond));
  ConstIntBound b = a->ConstIntBound(Sub(Mul(x, y), Mul(x, k)));
  EXPECT_NE(b->min_value, b->max_value);
}

}  // namespace
}  // namespace tessel
