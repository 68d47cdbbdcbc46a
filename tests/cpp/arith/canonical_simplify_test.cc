// One-line cases for the canonical simplifier: ExpectCanonical(before, after) compares
// Analyzer::CanonicalSimplify(before) with `after` structurally.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/arith/canonical_simplify.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/module.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <memory>
#include <string>
#include <vector>

#include "eval.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

class CanonicalTest : public ::testing::Test {
 protected:
  void ExpectCanonical(const PrimExpr& before, const PrimExpr& after) {
    PrimExpr got = analyzer_.CanonicalSimplify(before);
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(got, after))
        << "\n  before:   " << AsText(before) << "\n  got:      " << AsText(got)
        << "\n  expected: " << AsText(after);
  }
  // The simplifier must leave `e` exactly as it is.
  void ExpectUnchanged(const PrimExpr& e) { ExpectCanonical(e, e); }

  Analyzer analyzer_;
  Var x{"x"}, y{"y"}, z{"z"};
};

// Node builders without the folding of ops.h, so `before` is exactly what is written.
PrimExpr FD(PrimExpr a, int64_t c) { return FloorDiv(a, IntImm(a.dtype(), c)); }
PrimExpr FM(PrimExpr a, int64_t c) { return FloorMod(a, IntImm(a.dtype(), c)); }
PrimExpr TD(PrimExpr a, int64_t c) { return Div(a, IntImm(a.dtype(), c)); }
PrimExpr TM(PrimExpr a, int64_t c) { return Mod(a, IntImm(a.dtype(), c)); }
PrimExpr C(PrimExpr like, int64_t c) { return IntImm(like.dtype(), c); }

TEST_F(CanonicalTest, IsTheFacadesCanonicalStage) {
  auto* ext = analyzer_.FindExtension("canonical");
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->stage(), AnalyzerExtension::Stage::kCanonical);
  EXPECT_NE(dynamic_cast<CanonicalSimplifier*>(ext), nullptr);
  // The facade method goes through the extension (it does what the extension does).
  PrimExpr e = Add(Add(x, y), Sub(x, y));
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(analyzer_.CanonicalSimplify(e), ext->Simplify(e)));
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(analyzer_.CanonicalSimplify(e), Mul(x, C(x, 2))));
  // And a clone has its own.
  std::unique_ptr<Analyzer> clone = analyzer_.Clone();
  EXPECT_NE(clone->FindExtension("canonical"), nullptr);
  EXPECT_NE(clone->FindExtension("canonical"), ext);
}

TEST_F(CanonicalTest, LikeTerms) {
  ExpectCanonical(Add(Add(x, y), x), Add(Mul(x, C(x, 2)), y));
  ExpectCanonical(Sub(Add(x, y), x), y);
  ExpectCanonical(Add(Mul(x, C(x, 3)), Mul(C(x, 4), x)), Mul(x, C(x, 7)));
  ExpectCanonical(Sub(Mul(x, C(x, 3)), Mul(x, C(x, 3))), C(x, 0));
  ExpectCanonical(Add(Add(y, C(x, 3)), Add(x, C(x, 4))), Add(Add(x, y), C(x, 7)));
  // Ordered by name whatever the input order; negative terms after positive ones.
  ExpectCanonical(Add(z, Add(y, x)), Add(Add(x, y), z));
  ExpectCanonical(Sub(C(x, 0), Sub(x, y)), Sub(y, x));
  ExpectCanonical(Sub(C(x, 5), x), Sub(C(x, 5), x));
  ExpectCanonical(Sub(Sub(C(x, 0), x), C(x, 1)), Sub(Sub(C(x, 0), x), C(x, 1)));
  ExpectCanonical(Add(Sub(x, C(x, 4)), C(x, 1)), Sub(x, C(x, 3)));
  // Distribution over a monomial; products of atoms are ordered too.
  ExpectCanonical(Mul(Add(x, C(x, 2)), C(x, 4)), Add(Mul(x, C(x, 4)), C(x, 8)));
  ExpectCanonical(Sub(Mul(y, x), Mul(x, y)), C(x, 0));
  ExpectCanonical(Mul(Add(y, C(x, 1)), x), Add(x, Mul(x, y)));
  // A product of two sums stays a product.
  ExpectUnchanged(Mul(Add(x, C(x, 1)), Add(y, C(x, 1))));
}

TEST_F(CanonicalTest, WrapAroundRingIdentities) {
  // x + 1 - 1 is x for every x, even when x + 1 overflows: + - * are ring operations.
  ExpectCanonical(Sub(Add(x, C(x, 1)), C(x, 1)), x);
  // 2^31 * 2 wraps to 0 in int32.
  ExpectCanonical(Mul(Mul(x, C(x, 65536)), C(x, 65536)), C(x, 0));
  // The coefficient -2^31 has no negation in int32: it stays a product.
  ExpectCanonical(Mul(x, C(x, INT32_MIN)), Mul(x, C(x, INT32_MIN)));
}

TEST_F(CanonicalTest, TilingSplitFuse) {
  analyzer_.Bind(x, Range(0, 1024));
  analyzer_.Bind(y, Range(0, 8));
  ExpectCanonical(Add(Mul(FD(x, 8), C(x, 8)), FM(x, 8)), x);
  ExpectCanonical(Add(FM(x, 8), Mul(FD(x, 8), C(x, 8))), x);
  ExpectCanonical(FD(Add(Mul(x, C(x, 8)), y), 8), x);
  ExpectCanonical(FM(Add(Mul(x, C(x, 8)), y), 8), y);
  ExpectCanonical(FM(Add(Mul(x, C(x, 16)), y), 8), y);
  ExpectCanonical(FD(Add(Mul(x, C(x, 16)), y), 8), Mul(x, C(x, 2)));
  // Three levels: x // 16 * 16 + (x % 16) // 4 * 4 + x % 4.
  ExpectCanonical(Add(Add(Mul(FD(x, 16), C(x, 16)), Mul(FD(FM(x, 16), 4), C(x, 4))), FM(x, 4)), x);
  // The two spellings of the middle digit are one split, and fuse either way.
  ExpectCanonical(Sub(FD(FM(x, 16), 4), FM(FD(x, 4), 4)), C(x, 0));
  ExpectCanonical(Add(Mul(FM(FD(x, 4), 4), C(x, 4)), FM(x, 4)), FM(x, 16));
  ExpectCanonical(Add(Mul(FD(x, 16), C(x, 4)), FM(FD(x, 4), 4)), FD(x, 4));
  // Fused loop index of a 2-level tile, split again.
  Var i("i"), j("j");
  analyzer_.Bind(i, Range(0, 32));
  analyzer_.Bind(j, Range(0, 4));
  PrimExpr fused = Add(Mul(i, C(i, 4)), j);
  ExpectCanonical(FD(fused, 4), i);
  ExpectCanonical(FM(fused, 4), j);
  ExpectCanonical(FM(FD(fused, 2), 2), FD(j, 2));
  ExpectCanonical(Add(Mul(FD(fused, 2), C(i, 2)), FM(fused, 2)), Add(Mul(i, C(i, 4)), j));
  // A low part below a factor of the divisor cannot carry: (j * 4 + k) // 16 == j // 4.
  Var k("k");
  analyzer_.Bind(k, Range(0, 4));
  analyzer_.Bind(z, Range(0, 16));
  PrimExpr idx = Add(Add(Mul(i, C(i, 64)), Mul(z, C(i, 4))), k);
  // Terms print with the largest coefficient first.
  ExpectCanonical(FM(idx, 16), Add(Mul(FM(z, 4), C(z, 4)), k));
  ExpectCanonical(FD(idx, 16), Add(Mul(i, C(i, 4)), FD(z, 4)));
  ExpectCanonical(Add(Mul(FD(idx, 16), C(i, 16)), FM(idx, 16)),
                  Add(Add(Mul(i, C(i, 64)), Mul(z, C(i, 4))), k));
}

TEST_F(CanonicalTest, FloorDivOfSums) {
  // (x * 8 + y) // 8 == x + y // 8 for any y, when the sum cannot overflow.
  analyzer_.Bind(x, Range(-1000, 1000));
  analyzer_.Bind(y, Range(-1000, 1000));
  ExpectCanonical(FD(Add(Mul(x, C(x, 8)), y), 8), Add(x, FD(y, 8)));
  ExpectCanonical(FM(Add(Mul(x, C(x, 8)), y), 8), FM(y, 8));
  ExpectCanonical(FD(Add(Mul(x, C(x, 8)), C(x, 9)), 8), Add(x, C(x, 1)));
  ExpectCanonical(FM(Add(Mul(x, C(x, 8)), C(x, 9)), 8), C(x, 1));
  // Common factors: (4 * y + 6) // 8 == (2 * y + 3) // 4 == (y + 1) // 2, (4 * y) % 8 == y % 2 * 4;
  // a part below a factor of the divisor cannot carry: (4 * y + 2) // 8 == y // 2.
  ExpectCanonical(FD(Add(Mul(y, C(y, 4)), C(y, 2)), 8), FD(y, 2));
  ExpectCanonical(FD(Add(Mul(y, C(y, 4)), C(y, 6)), 8), FD(Add(y, C(y, 1)), 2));
  ExpectCanonical(FM(Mul(y, C(y, 4)), 8), Mul(FM(y, 2), C(y, 4)));
  // Nested divisions collapse; remainders of remainders too.
  ExpectCanonical(FD(FD(x, 4), 8), FD(x, 32));
  ExpectCanonical(FM(FM(x, 8), 4), FM(x, 4));
  ExpectCanonical(FD(FM(x, 16), 4), FM(FD(x, 4), 4));
  ExpectCanonical(FM(FD(x, 4), 4), FM(FD(x, 4), 4));
  // Division by one, remainder by one.
  ExpectCanonical(FD(Add(x, y), 1), Add(x, y));
  ExpectCanonical(FM(Add(x, y), 1), C(x, 0));
}

TEST_F(CanonicalTest, FloorModBelowDivisor) {
  analyzer_.Bind(x, Range(0, 7));
  ExpectCanonical(FM(x, 8), x);
  ExpectCanonical(FD(x, 8), C(x, 0));
  ExpectCanonical(FM(Add(x, C(x, 8)), 8), x);
  ExpectCanonical(FD(Add(x, C(x, 8)), 8), C(x, 1));
  // In one period [8, 15): (x + 8) % 8 == x even though x + 8 >= 8.
  analyzer_.Bind(y, Range(8, 8));
  ExpectCanonical(FM(y, 8), Sub(y, C(y, 8)));
  ExpectCanonical(FD(y, 8), C(y, 1));
}

TEST_F(CanonicalTest, ModularFacts) {
  // x is a multiple of 4: (x // 4) * 4 == x.
  analyzer_.Bind(y, Range(0, 100));
  analyzer_.Bind(x, Mul(y, C(y, 4)));
  ExpectCanonical(Mul(FD(x, 4), C(x, 4)), x);
  ExpectCanonical(Add(Mul(FD(z, 4), C(z, 4)), C(z, 1)), Add(Mul(FD(z, 4), C(z, 4)), C(z, 1)));
}

TEST_F(CanonicalTest, TruncDivOnlyForNonNegative) {
  analyzer_.Bind(x, Range(0, 1024));
  ExpectCanonical(TD(Add(Mul(x, C(x, 8)), C(x, 3)), 8), x);
  ExpectCanonical(TM(Add(Mul(x, C(x, 8)), C(x, 3)), 8), C(x, 3));
  ExpectCanonical(Add(Mul(TD(x, 8), C(x, 8)), TM(x, 8)), x);
  // y may be negative: truncdiv rounds toward zero, so nothing applies.
  analyzer_.Bind(y, Range(-8, 8));
  ExpectUnchanged(TD(Add(Mul(y, C(y, 8)), C(y, 3)), 8));
  ExpectUnchanged(TM(Add(Mul(y, C(y, 8)), C(y, 3)), 8));
  ExpectUnchanged(Add(Mul(TD(y, 8), C(y, 8)), TM(y, 8)));
  // Unknown divisor sign: left alone.
  ExpectUnchanged(Div(x, z));
  ExpectUnchanged(FD(Add(Mul(x, C(x, 8)), C(x, 3)), -8));
}

TEST_F(CanonicalTest, NoSplitWhereTheSumMayOverflow) {
  // x * 8 + 3 may wrap for an unbounded int32 x: (x * 8 + 3) // 8 is not x.
  ExpectUnchanged(FD(Add(Mul(x, C(x, 8)), C(x, 3)), 8));
  // Remainder by 8 (a power of two) survives wrapping: it is 3 for every x.
  ExpectCanonical(FM(Add(Mul(x, C(x, 8)), C(x, 3)), 8), C(x, 3));
  // ... but not by 6.
  ExpectUnchanged(FM(Add(Mul(x, C(x, 6)), C(x, 3)), 6));
  // Bounded x, but y unbounded: x * 8 + y may still overflow.
  analyzer_.Bind(x, Range(0, 1024));
  ExpectUnchanged(FD(Add(Mul(x, C(x, 8)), y), 8));
  ExpectCanonical(FM(Add(Mul(x, C(x, 8)), y), 8), FM(y, 8));
  // Nested division by a divisor product that leaves the dtype is left alone.
  Var b("b", DataType::Int(8));
  ExpectUnchanged(FD(FD(b, 16), 16));
  ExpectCanonical(FD(FD(b, 4), 8), FD(b, 32));
}

TEST_F(CanonicalTest, OtherDTypes) {
  Var a("a", DataType::Int(64)), b("b", DataType::Int(64));
  analyzer_.Bind(a, Range(IntImm(DataType::Int(64), 0), IntImm(DataType::Int(64), 1LL << 40)));
  analyzer_.Bind(b, Range(IntImm(DataType::Int(64), 0), IntImm(DataType::Int(64), 1LL << 20)));
  ExpectCanonical(FD(Add(Mul(a, C(a, 1LL << 20)), b), 1LL << 20), a);
  ExpectCanonical(Add(Mul(FD(a, 1LL << 32), C(a, 1LL << 32)), FM(a, 1LL << 32)), a);
  // int8: (p * 8 + q) // 8 needs p * 8 + q within [-128, 127].
  Var p("p", DataType::Int(8)), q("q", DataType::Int(8));
  analyzer_.Bind(q, Range(IntImm(DataType::Int(8), 0), IntImm(DataType::Int(8), 8)));
  ExpectUnchanged(FD(Add(Mul(p, C(p, 8)), q), 8));
  analyzer_.Bind(p, Range(IntImm(DataType::Int(8), -16), IntImm(DataType::Int(8), 32)));
  ExpectCanonical(FD(Add(Mul(p, C(p, 8)), q), 8), p);
  ExpectCanonical(Add(Mul(p, C(p, 100)), Mul(p, C(p, 100))), Sub(C(p, 0), Mul(p, C(p, 56))));
  // uint8: x - y is a subtraction even though coefficients wrap.
  Var u("u", DataType::UInt(8)), v("v", DataType::UInt(8));
  ExpectCanonical(Add(Sub(u, v), Mul(v, C(v, 2))), Add(u, v));
  ExpectCanonical(Sub(Add(u, C(u, 200)), C(u, 200)), u);
}

TEST_F(CanonicalTest, LeavesNonIndexParts) {
  // Children of opaque nodes are canonical; the nodes themselves stay.
  PrimExpr m = Min(Add(x, x), y);
  ExpectCanonical(m, Min(Mul(x, C(x, 2)), y));
  ExpectCanonical(Sub(Add(m, C(x, 1)), m), C(x, 1));
  ExpectCanonical(LT(Add(x, x), y), LT(Mul(x, C(x, 2)), y));
  Var f("f", DataType::Float(32));
  ExpectUnchanged(Add(f, f));
  ExpectUnchanged(x);
}

TEST_F(CanonicalTest, SideEffectsAreLeftAlone) {
  // An opaque call may have effects: x - x around it must not vanish.
  PrimExpr call = Call(DataType::Int(32), GlobalVar("g"), {x});
  ExpectUnchanged(Sub(Add(call, x), call));
}

TEST_F(CanonicalTest, Deterministic) {
  // Two variables with the same name: ordered by first appearance, the same on every run.
  Var x1("v"), x2("v");
  PrimExpr e = Add(Add(x2, x1), Add(x2, C(x2, 1)));
  PrimExpr first = analyzer_.CanonicalSimplify(e);
  PrimExpr second = analyzer_.CanonicalSimplify(e);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(first, second));
  std::unique_ptr<Analyzer> clone = analyzer_.Clone();
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(clone->CanonicalSimplify(e), first));
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(first, Add(Add(Mul(x2, C(x2, 2)), x1), C(x2, 1))));
  // Idempotent, and the same object back when nothing changes.
  EXPECT_TRUE(analyzer_.CanonicalSimplify(first).same_as(first));
}

TEST_F(CanonicalTest, TermLimitGivesUp) {
  // (x0 + ... + x79) has more terms than the limit: the input comes back unchanged.
  PrimExpr e = Var("x0");
  for (int k = 1; k < 80; ++k) e = Add(e, Var("x" + std::to_string(k)));
  EXPECT_TRUE(analyzer_.CanonicalSimplify(e).same_as(e));
}

// Fuzzer counterexamples: each keeps the expression, the facts and the failing point.
class CanonicalRegression : public CanonicalTest {
 protected:
  // CanonicalSimplify(e) must have e's value at the point.
  void ExpectSameValue(const PrimExpr& e, const testing::Env& env) {
    PrimExpr got = analyzer_.CanonicalSimplify(e);
    auto want = testing::ExactEvaluator(env)(e);
    auto have = testing::ExactEvaluator(env)(got);
    ASSERT_TRUE(want.has_value());
    EXPECT_TRUE(have.has_value() && *have == *want) << AsText(e) << " became " << AsText(got);
  }
  static PrimExpr I64(int64_t v) { return IntImm(DataType::Int(64), v); }
};

TEST_F(CanonicalRegression, SaturatedTermBoundsDoNotCancel) {
  // k * k and -(2^63 - 32) * k both saturate the interval arithmetic; their sum looked like a
  // small non-negative interval, so truncmod was taken for floormod.
  Var k("k", DataType::Int(64)), j("j", DataType::Int(64));
  analyzer_.Bind(k, Range(I64(9223372036854775796LL), I64(11)));
  analyzer_.Bind(j, Range(I64(4204664354388725442LL), I64(5000980478854131630LL)));
  PrimExpr e = Mod(Add(Mul(k, FloorMod(k, I64(32))), j), I64(8));
  ExpectSameValue(e, {{k.get(), 9223372036854775799LL}, {j.get(), 5506534122113503566LL}});
}

TEST_F(CanonicalRegression, UnsignedRemainderConstantPastSignedRange) {
  // truncmod(y - 2, 136) for uint8 y in [241, 252]: the remainder's constant 134 was stored as
  // -122 (its int8 representative), which is not congruent modulo 136.
  Var y8("y", DataType::UInt(8));
  PrimExpr u8_2 = IntImm(DataType::UInt(8), 2), u8_136 = IntImm(DataType::UInt(8), 136);
  ConstraintScope scope(&analyzer_, And(LE(IntImm(DataType::UInt(8), 241), y8),
                                        LE(y8, IntImm(DataType::UInt(8), 252))));
  ExpectSameValue(Mod(Sub(y8, u8_2), u8_136), {{y8.get(), 241}});
  ExpectSameValue(FloorDiv(Sub(y8, u8_2), u8_136), {{y8.get(), 250}});
  // The uint32 case the fuzzer found: (j - 1) % 2952790016 // 22.
  Var j("j", DataType::UInt(32));
  auto U32 = [](int64_t v) { return IntImm(DataType::UInt(32), v); };
  analyzer_.Bind(j, Range(U32(2999551600LL), U32(299852077)));
  ExpectSameValue(FloorDiv(FloorMod(Sub(j, U32(1)), U32(2952790016LL)), U32(22)),
                  {{j.get(), 3147208667LL}});
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// A product of up to AtomList::kMax (6) atoms is a term; a longer one makes the canonical
// simplifier give up on the expression (the input comes back as itself), like a sum past
// kMaxTerms terms.
TEST(CanonicalLimits, ProductsOfMoreThanSixAtomsAreLeftAlone) {
  using namespace ir;     // NOLINT(build/namespaces)
  using namespace arith;  // NOLINT(build/namespaces)
  Analyzer analyzer;
  std::vector<Var> v;
  for (int i = 0; i < 7; ++i) v.push_back(Var("v" + std::to_string(i)));
  auto product = [&](int n) {
    PrimExpr p = v[0];
    for (int i = 1; i < n; ++i) p = Mul(p, v[i]);
    return p;
  };
  PrimExpr six = Sub(Add(product(6), v[0]), v[0]);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(analyzer.CanonicalSimplify(six), product(6)))
      << AsText(analyzer.CanonicalSimplify(six));
  PrimExpr seven = Sub(Add(product(7), v[0]), v[0]);
  EXPECT_TRUE(analyzer.CanonicalSimplify(seven).same_as(seven));
}

}  // namespace
}  // namespace tessel
