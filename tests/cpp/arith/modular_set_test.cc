#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

#define EXPECT_MOD(analyzer, e, c, b)         \
  do {                                        \
    ModularSet m_ = (analyzer).ModularSet(e); \
    EXPECT_EQ(m_->coeff, c) << #e;            \
    EXPECT_EQ(m_->base, b) << #e;             \
  } while (0)

TEST(ModularSet, Normalization) {
  ModularSet m(-8, 11);
  EXPECT_EQ(m->coeff, 8);
  EXPECT_EQ(m->base, 3);
  EXPECT_EQ(ModularSet(4, -1)->base, 3);
  EXPECT_EQ(ModularSet::Everything()->coeff, 1);
}

TEST(ModularSet, Arithmetic) {
  Analyzer a;
  Var x("x"), y("y");
  a.Bind(x, Range(0, 100));
  a.Bind(y, Range(0, 100));
  a.modular_set_analyzer().Update(x, ModularSet(4, 1));
  a.modular_set_analyzer().Update(y, ModularSet(6, 2));
  EXPECT_MOD(a, Int32(7), 0, 7);
  EXPECT_MOD(a, x, 4, 1);
  EXPECT_MOD(a, Add(x, y), 2, 1);
  EXPECT_MOD(a, Sub(x, Int32(1)), 4, 0);
  EXPECT_MOD(a, Mul(x, Int32(3)), 12, 3);
  EXPECT_MOD(a, Mul(x, y), 2, 0);
  EXPECT_MOD(a, FloorDiv(Mul(x, Int32(8)), Int32(4)), 8, 2);
  EXPECT_MOD(a, FloorMod(Mul(x, Int32(8)), Int32(4)), 0, 0);
  EXPECT_MOD(a, FloorMod(x, Int32(2)), 0, 1);
  EXPECT_MOD(a, FloorMod(x, Int32(6)), 2, 1);
  EXPECT_MOD(a, Min(Mul(x, Int32(4)), Mul(y, Int32(8))), 4, 0);
  EXPECT_MOD(a, FloorDiv(x, Int32(3)), 1, 0);  // inexact: nothing known
  Var t("t");
  EXPECT_MOD(a, Let(t, Mul(x, Int32(2)), Add(t, Int32(1))), 8, 3);
  EXPECT_MOD(a, Var("free"), 1, 0);
}

TEST(ModularSet, WrapAroundKeepsOnlyPowersOfTwo) {
  Analyzer a;
  Var x("x", DataType::Int(8));
  // x * 3 may overflow int8: residues modulo 3 do not survive wrapping; modulo 4 they do.
  EXPECT_MOD(a, Mul(Mul(x, IntImm(DataType::Int(8), 4)), IntImm(DataType::Int(8), 3)), 4, 0);
  EXPECT_MOD(a, Mul(x, IntImm(DataType::Int(8), 3)), 1, 0);
  Var small("s", DataType::Int(8));
  a.Bind(small, Range(IntImm(DataType::Int(8), 0), IntImm(DataType::Int(8), 10)));
  EXPECT_MOD(a, Mul(small, IntImm(DataType::Int(8), 3)), 3, 0);  // no overflow: exact
}

TEST(ModularSet, Constraints) {
  Analyzer a;
  Var x("x");
  {
    ConstraintScope scope(&a, EQ(FloorMod(x, 4), 0));
    EXPECT_MOD(a, x, 4, 0);
    {
      ConstraintScope inner(&a, EQ(Mod(x, 3), 1));
      EXPECT_MOD(a, x, 12, 4);  // x == 0 (mod 4) and x == 1 (mod 3)
    }
    EXPECT_MOD(a, x, 4, 0);
  }
  EXPECT_MOD(a, x, 1, 0);
}

}  // namespace
}  // namespace tessel
