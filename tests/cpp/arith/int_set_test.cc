#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

void ExpectEnd(const Optional<PrimExpr>& end, const Optional<PrimExpr>& expected) {
  ASSERT_EQ(end.has_value(), expected.has_value());
  if (!end.has_value()) return;
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(end.value(), expected.value()))
      << AsText(end.value()) << " vs " << AsText(expected.value());
}
void ExpectSet(const IntSet& s, Optional<PrimExpr> lo, Optional<PrimExpr> hi) {
  ExpectEnd(s->min_value, lo);
  ExpectEnd(s->max_value, hi);
}

TEST(IntSet, ConstantDomains) {
  Var i("i"), j("j");
  Map<Var, Range> dom{{i, Range(0, 16)}, {j, Range(0, 4)}};
  ExpectSet(EvalSet(i * 4 + j, dom), Int32(0), Int32(63));
  ExpectSet(EvalSet(i - j, dom), Int32(-3), Int32(15));
  ExpectSet(EvalSet(i * -2, dom), Int32(-30), Int32(0));
  ExpectSet(EvalSet(floordiv(i, 4), dom), Int32(0), Int32(3));
  ExpectSet(EvalSet(floordiv(i, -4), dom), Int32(-4), Int32(0));
  ExpectSet(EvalSet(floormod(i + 3, 8), dom), Int32(0), Int32(7));
  ExpectSet(EvalSet(floormod(j, 8), dom), Int32(0), Int32(3));
  ExpectSet(EvalSet(min(i, j + 8), dom), Int32(0), Int32(11));
  ExpectSet(EvalSet(max(i, j + 8), dom), Int32(8), Int32(15));
  ExpectSet(EvalSet(select(i < 3, j, i), dom), Int32(0), Int32(15));
  ExpectSet(EvalSet(cast(DataType::Int(64), i), dom), IntImm(DataType::Int(64), 0),
            IntImm(DataType::Int(64), 15));
  ExpectSet(EvalSet(i * j, dom), Int32(0), Int32(45));
}

TEST(IntSet, SymbolicBounds) {
  Var i("i");
  SizeVar n("n");
  Analyzer a;
  a.Bind(n, Range(0, 1000));
  Map<Var, Range> dom{{i, Range(0, n)}};
  ExpectSet(a.IntSet(i, dom), Int32(0), n - 1);
  ExpectSet(a.IntSet(i + 1, dom), Int32(1), n - 1 + 1);
  // A point that does not depend on the domain.
  ExpectSet(a.IntSet(n * 2, dom), n * 2, n * 2);
  Var m("m");
  a.Bind(m, Range(0, 100));
  ExpectSet(a.IntSet(i * m, dom), Int32(0) * m, (n - 1) * m);
  // Unbounded n: (n - 1) * m may overflow, so nothing is claimed.
  Analyzer b;
  b.Bind(m, Range(0, 100));
  EXPECT_TRUE(b.IntSet(i * m, dom)->IsEverything());
}

TEST(IntSet, UnsureGivesEverything) {
  Var i("i"), x("x");
  Map<Var, Range> dom{{i, Range(0, 16)}};
  // x is unbounded: x * i may overflow.
  EXPECT_TRUE(EvalSet(x * i, dom)->IsEverything());
  EXPECT_TRUE(EvalSet(bitwise_xor(i, x), dom)->IsEverything());
  // A narrowing cast that may not fit.
  Var k("k");
  EXPECT_TRUE(
      EvalSet(cast(DataType::Int(8), k * 100), Map<Var, Range>{{k, Range(0, 16)}})->IsEverything());
  Map<Var, IntSet> sets{{i, IntSet(Int32(0), std::nullopt)}};
  IntSet s = EvalSet(min(i, 5), sets);
  ExpectSet(s, Int32(0), Int32(5));
}

}  // namespace
}  // namespace tessel
