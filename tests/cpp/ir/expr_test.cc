#include <gtest/gtest.h>
#include <tessel/ir/ops.h>
TEST(Expr, Fold) {
  using namespace tessel::ir;
  Var x("x");
  PrimExpr e = x + 0;
  EXPECT_TRUE(e.same_as(x));
}
