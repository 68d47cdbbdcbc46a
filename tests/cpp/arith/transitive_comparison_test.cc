#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/arith/transitive_comparison.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

// The transitive extension of a, asked directly (so that no other extension answers for it).
ProofResult Ask(Analyzer* a, const PrimExpr& cond) {
  AnalyzerExtension* ext = a->FindExtension("transitive");
  EXPECT_NE(ext, nullptr);
  return ext ? ext->TryProve(cond, ProofStrength::kDefault) : ProofResult::kUnknown;
}

constexpr ProofResult kProved = ProofResult::kProved;
constexpr ProofResult kDisproved = ProofResult::kDisproved;
constexpr ProofResult kUnknown = ProofResult::kUnknown;

TEST(TransitiveComparison, IsRegisteredAsDefault) {
  Analyzer a;
  AnalyzerExtension* ext = a.FindExtension("transitive");
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->stage(), AnalyzerExtension::Stage::kTransitive);
}

TEST(TransitiveComparison, Chains) {
  Analyzer a;
  Var x("x"), y("y"), z("z"), w("w");
  ConstraintScope s1(&a, x < y);
  ConstraintScope s2(&a, y <= z && z < w);
  EXPECT_EQ(Ask(&a, x < z), kProved);
  EXPECT_EQ(Ask(&a, x <= z), kProved);
  EXPECT_EQ(Ask(&a, z > x), kProved);
  EXPECT_EQ(Ask(&a, x < w), kProved);
  EXPECT_EQ(Ask(&a, ne(x, w)), kProved);
  EXPECT_EQ(Ask(&a, x >= z), kDisproved);
  EXPECT_EQ(Ask(&a, eq(x, z)), kDisproved);
  EXPECT_EQ(Ask(&a, w <= x), kDisproved);
  EXPECT_EQ(Ask(&a, y < z), kUnknown);  // y <= z only
  EXPECT_EQ(Ask(&a, z < y), kDisproved);
  EXPECT_EQ(Ask(&a, x < z && y <= w), kProved);
  EXPECT_EQ(Ask(&a, !(x < z)), kDisproved);
  EXPECT_EQ(Ask(&a, z < x || y < w), kProved);
  EXPECT_TRUE(a.CanProve(x < w));
  EXPECT_FALSE(a.CanProve(y < z));
}

TEST(TransitiveComparison, ConstantOffsets) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  for (const Var& v : {x, y, z}) a.Bind(v, Range(0, 1000));
  // x <= y + 2, y < z - 5: x - z <= 2 - 6 = -4.
  ConstraintScope s(&a, x <= y + 2 && y < z - 5);
  EXPECT_EQ(Ask(&a, x < z - 2), kProved);
  EXPECT_EQ(Ask(&a, x < z - 3), kProved);
  EXPECT_EQ(Ask(&a, x + 4 <= z), kProved);
  EXPECT_EQ(Ask(&a, x < z - 4), kUnknown);
  EXPECT_EQ(Ask(&a, x + 3 >= z), kDisproved);
  // Nothing in the bounds alone says so.
  EXPECT_EQ(a.ConstIntBound(x - z)->max_value, 999);
}

TEST(TransitiveComparison, Equalities) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  a.Bind(y, Range(0, 100));
  ConstraintScope s(&a, eq(x, y + 3) && !ne(z, y));
  EXPECT_EQ(Ask(&a, eq(x - 3, z)), kProved);
  EXPECT_EQ(Ask(&a, eq(z + 3, x)), kProved);
  EXPECT_EQ(Ask(&a, x > z), kProved);
  EXPECT_EQ(Ask(&a, eq(x, z)), kDisproved);
  EXPECT_EQ(Ask(&a, x <= z + 2), kDisproved);
  EXPECT_EQ(Ask(&a, x <= z + 3), kProved);
}

TEST(TransitiveComparison, NegatedFactsAndDisjunctions) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  ConstraintScope s1(&a, !(x >= y) && !(y > z || eq(z, y)));  // x < y, y <= z, z != y
  EXPECT_EQ(Ask(&a, x < z), kProved);
  EXPECT_EQ(Ask(&a, y <= z), kProved);
  EXPECT_EQ(Ask(&a, y < z), kProved);  // y <= z and z != y
  EXPECT_EQ(Ask(&a, eq(y, z)), kDisproved);
  // A disjunction gives no fact.
  Var p("p"), q("q");
  ConstraintScope s2(&a, p < q || q < p);
  EXPECT_EQ(Ask(&a, p < q), kUnknown);
}

TEST(TransitiveComparison, NotEqualSharpensBounds) {
  Var i("i"), n("n"), x("x"), y("y");
  {
    Analyzer a;
    a.Bind(i, Range(0, n));
    ConstraintScope s(&a, ne(i, n - 1));
    EXPECT_EQ(Ask(&a, i < n - 1), kUnknown);  // n - 1 may wrap for an unbounded n
  }
  Analyzer a;
  a.Bind(i, Range(0, n));
  ConstraintScope s1(&a, n > 0 && n <= 100);  // so that n - 1 cannot wrap
  ConstraintScope s2(&a, ne(i, n - 1) && ne(x + 1, y));
  EXPECT_EQ(Ask(&a, i < n - 1), kProved);
  EXPECT_EQ(Ask(&a, i + 1 < n), kProved);
  EXPECT_EQ(Ask(&a, eq(i + 1, n)), kDisproved);
  // A `!=` alone decides nothing about order.
  EXPECT_EQ(Ask(&a, x + 1 < y), kUnknown);
  EXPECT_EQ(Ask(&a, eq(x + 1, y)), kDisproved);
}

TEST(TransitiveComparison, ConstantsAndBoundsTakePart) {
  Analyzer a;
  Var x("x"), y("y"), n("n");
  a.Bind(n, Range(0, 64));
  ConstraintScope s(&a, x < y && y <= n);
  // x < y <= n <= 63
  EXPECT_EQ(Ask(&a, x < 64), kProved);
  EXPECT_EQ(Ask(&a, x <= 62), kProved);
  EXPECT_EQ(Ask(&a, x >= 63), kDisproved);
  EXPECT_TRUE(a.CanProve(x < 64));
}

TEST(TransitiveComparison, ContradictionsMakeEverythingTrue) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  ConstraintScope s1(&a, x < y && y < z);
  EXPECT_EQ(Ask(&a, x > z), kDisproved);
  {
    ConstraintScope s2(&a, z <= x);  // unreachable
    EXPECT_EQ(Ask(&a, x > z + 100), kProved);
    EXPECT_EQ(Ask(&a, x < y), kProved);
    EXPECT_EQ(Ask(&a, x >= y), kProved);
  }
  EXPECT_EQ(Ask(&a, x >= y), kDisproved);
}

TEST(TransitiveComparison, ScopeExitForgetsFacts) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  {
    ConstraintScope s1(&a, x < y);
    {
      ConstraintScope s2(&a, y < z);
      EXPECT_EQ(Ask(&a, x < z), kProved);
    }
    EXPECT_EQ(Ask(&a, x < z), kUnknown);
    EXPECT_EQ(Ask(&a, x < y), kProved);
  }
  EXPECT_EQ(Ask(&a, x < y), kUnknown);
  auto* ext = static_cast<TransitiveComparisonAnalyzer*>(a.FindExtension("transitive"));
  EXPECT_TRUE(ext->facts().empty());
}

TEST(TransitiveComparison, CloneKeepsFacts) {
  Analyzer a;
  Var x("x"), y("y"), z("z");
  a.Bind(x, Range(0, y));
  std::unique_ptr<Analyzer> clone;
  {
    ConstraintScope s(&a, y < z);
    clone = a.Clone();
    EXPECT_EQ(Ask(clone.get(), x < z), kProved);
  }
  EXPECT_EQ(Ask(&a, x < z), kUnknown);
  EXPECT_EQ(Ask(&a, x < y), kProved);
  // The clone keeps the scoped fact as permanent; its own scopes are its own.
  EXPECT_EQ(Ask(clone.get(), x < z), kProved);
  {
    Var w("w");
    ConstraintScope s(clone.get(), z < w);
    EXPECT_EQ(Ask(clone.get(), x < w), kProved);
    EXPECT_EQ(Ask(&a, x < w), kUnknown);
  }
  EXPECT_EQ(Ask(clone.get(), x < z), kProved);
}

TEST(TransitiveComparison, RangeBindings) {
  Analyzer a;
  Var i("i"), n("n"), j("j"), k("k"), m("m");
  a.Bind(i, Range(0, n));
  EXPECT_EQ(Ask(&a, i < n), kProved);
  EXPECT_EQ(Ask(&a, i >= n), kDisproved);
  // 0 <= i < n holds where i exists (inside its loop): it says nothing about n elsewhere (after a
  // loop over range(n) that may not have run, n may be 0).
  EXPECT_EQ(Ask(&a, n > 0), kUnknown);
  EXPECT_FALSE(a.CanProve(n > 0));
  EXPECT_EQ(Ask(&a, i + 1 <= n), kProved);
  EXPECT_TRUE(a.CanProve(i < n));
  {
    // A variable whose range refers to i brings i's facts along: j < i < n.
    Analyzer b;
    Var jj("jj");
    b.Bind(i, Range(0, n));
    b.Bind(jj, Range(0, i));
    EXPECT_EQ(Ask(&b, jj < n), kProved);
    EXPECT_EQ(Ask(&b, n > 1), kUnknown);
  }
  // j = i + 1 (i + 1 cannot overflow: i <= INT32_MAX - 1 because i < n).
  a.Bind(j, i + 1);
  EXPECT_EQ(Ask(&a, j <= n), kProved);
  EXPECT_EQ(Ask(&a, j > i), kProved);
  // Re-binding replaces the old facts.
  a.Bind(k, Range(0, n));
  EXPECT_EQ(Ask(&a, k < n), kProved);
  a.Bind(k, Range(0, m), true);
  EXPECT_EQ(Ask(&a, k < n), kUnknown);
  EXPECT_EQ(Ask(&a, k < m), kProved);
  // A symbolic start with a constant extent.
  Var s("s"), t("t");
  a.Bind(s, Range(0, 100));
  a.Bind(t, Range(s, 4));
  EXPECT_EQ(Ask(&a, t < s + 4), kProved);
  EXPECT_EQ(Ask(&a, t >= s), kProved);
}

TEST(TransitiveComparison, WrapAroundBlocksOffsets) {
  Analyzer a;
  DataType i8 = DataType::Int(8);
  Var x("x", i8), y("y", i8);
  {
    // x = 127 gives x + 1 == -128 < y for y = 0, and x > y: nothing about x vs y follows.
    ConstraintScope s(&a, x + MakeConst(i8, 1) < y);
    EXPECT_EQ(Ask(&a, x < y), kUnknown);
    EXPECT_EQ(Ask(&a, x <= y), kUnknown);
    EXPECT_EQ(Ask(&a, x >= y), kUnknown);
    EXPECT_FALSE(a.CanProve(x < y));
    // The fact itself, as written, is known.
    EXPECT_EQ(Ask(&a, x + MakeConst(i8, 1) < y), kProved);
    EXPECT_EQ(Ask(&a, x + MakeConst(i8, 1) >= y), kDisproved);
  }
  {
    // With x bounded the offset is exact.
    ConstraintScope bound(&a, x < MakeConst(i8, 100));
    ConstraintScope s(&a, x + MakeConst(i8, 1) < y);
    EXPECT_EQ(Ask(&a, x < y), kProved);
    EXPECT_EQ(Ask(&a, x + MakeConst(i8, 2) <= y), kProved);
  }
  // A binding whose offset needed a scoped bound ends with that scope.
  Var z("z", i8);
  {
    ConstraintScope bound(&a, x < MakeConst(i8, 100));
    a.Bind(z, x + MakeConst(i8, 1));
    EXPECT_EQ(Ask(&a, z > x), kProved);
  }
  EXPECT_EQ(Ask(&a, z > x), kUnknown);
  // uint: y - 1 wraps at 0.
  DataType u32 = DataType::UInt(32);
  Var u("u", u32), v("v", u32);
  ConstraintScope s(&a, u <= v - MakeConst(u32, 1));
  EXPECT_EQ(Ask(&a, u < v), kUnknown);  // v = 0: v - 1 is UINT32_MAX
}

TEST(TransitiveComparison, SimplifyFoldsDecidedComparisons) {
  Analyzer a;
  Var x("x"), y("y"), z("z"), c("c", DataType::Bool());
  AnalyzerExtension* ext = a.FindExtension("transitive");
  PrimExpr e = select(x < z, x, z);
  EXPECT_TRUE(ext->Simplify(e).same_as(e));  // no facts: untouched
  ConstraintScope s(&a, x < y && y < z);
  PrimExpr folded = ext->Simplify(logical_and(x < z, c));
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(folded, And(Bool(true), c))) << AsText(folded);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(ext->Simplify(z <= x), Bool(false)));
}

}  // namespace
}  // namespace tessel
