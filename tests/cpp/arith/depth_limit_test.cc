// An expression nested deeper than the analyzer's walks go (src/arith/depth_guard.h) is a
// RecursionError naming the limit, in every entry point, never a stack overflow.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>

#include <string>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

template <typename F>
void ExpectTooDeep(F ask) {
  try {
    ask();
    FAIL() << "no error";
  } catch (const tvm::ffi::Error& err) {
    EXPECT_EQ(err.kind(), "RecursionError");
    EXPECT_NE(std::string(err.message()).find("expression is deeper than 5000 levels"),
              std::string::npos)
        << err.message();
  }
}

TEST(AnalyzerDepthLimit, Depth50000IsAClearError) {
  Var x("x", DataType::Int(32));
  PrimExpr adds = x, muldivs = x;
  for (int i = 0; i < 50000; ++i) adds = add(adds, MakeConst(DataType::Int(32), 1));
  for (int i = 0; i < 25000; ++i) {
    muldivs =
        floordiv(mul(muldivs, MakeConst(DataType::Int(32), 3)), MakeConst(DataType::Int(32), 2));
  }
  for (const PrimExpr& e : {adds, muldivs}) {
    Analyzer a;
    ExpectTooDeep([&] { a.Simplify(e); });
    ExpectTooDeep([&] { a.CanProve(lt(e, MakeConst(DataType::Int(32), 5))); });
    ExpectTooDeep([&] { a.ConstIntBound(e); });
    ExpectTooDeep([&] { a.ModularSet(e); });
    ExpectTooDeep([&] { a.RewriteSimplify(e); });
    ExpectTooDeep([&] { a.CanonicalSimplify(e); });
  }
}

TEST(AnalyzerDepthLimit, BelowTheLimitStillWorksAfterAnError) {
  Var x("x", DataType::Int(32));
  PrimExpr e = x, deep = x;
  for (int i = 0; i < 4000; ++i) e = add(e, MakeConst(DataType::Int(32), 1));
  for (int i = 0; i < 6000; ++i) deep = add(deep, MakeConst(DataType::Int(32), 1));
  Analyzer a;
  ExpectTooDeep([&] { a.Simplify(deep); });
  PrimExpr s = a.Simplify(e);
  const auto* sum = s.as<AddNode>();
  ASSERT_NE(sum, nullptr);
  EXPECT_TRUE(sum->a.same_as(x));
  EXPECT_EQ(sum->b.as<IntImmNode>()->value, 4000);
}

}  // namespace
}  // namespace tessel
