// One-line cases of the rewrite simplifier per operator family, including expressions that must
// stay as written because they may overflow or divide by zero.
#include <gtest/gtest.h>
#include <tessel/arith/rewrite_simplify.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <string>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

class RewriteSimplifyTest : public ::testing::Test {
 protected:
  RewriteSimplifyTest() {
    // x, y, z, w: unbounded int32 (every rule that needs no overflow must stay off them);
    // i, j in [0, 64), k in [0, 8), n in [1, 1024): loop-like indices; a, b: int8; u: uint8.
    for (const char* name : {"x", "y", "z", "w", "i", "j", "k", "n"}) vars_.Set(name, Var(name));
    for (const char* name : {"a", "b"}) vars_.Set(name, Var(name, DataType::Int(8)));
    vars_.Set("u", Var("u", DataType::UInt(8)));
    analyzer_.Bind(V("i"), Range(0, 64));
    analyzer_.Bind(V("j"), Range(0, 64));
    analyzer_.Bind(V("k"), Range(0, 8));
    analyzer_.Bind(V("n"), Range(1, 1023));
  }

  Var V(const char* name) { return vars_[name].cast<Var>(); }
  PrimExpr P(const std::string& text) { return ParseExpr(text, vars_); }

  void ExpectSimplify(const std::string& before, const std::string& after) {
    PrimExpr r = analyzer_.RewriteSimplify(P(before));
    PrimExpr want = P(after);
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(r, want))
        << before << "\n  gave     " << AsText(r) << "\n  expected " << AsText(want);
  }
  void ExpectUnchanged(const std::string& text) { ExpectSimplify(text, text); }

  Map<String, Any> vars_;
  Analyzer analyzer_;
};

TEST_F(RewriteSimplifyTest, Add) {
  ExpectSimplify("x + 0", "x");
  ExpectSimplify("3 + x", "x + 3");
  ExpectSimplify("(x + 3) + 4", "x + 7");
  ExpectSimplify("(x - 3) + 1", "x - 2");
  ExpectSimplify("(x + 3) + y", "x + y + 3");
  ExpectSimplify("(x - y) + y", "x");
  ExpectSimplify("x * 2 + x * 3", "x * 5");
  ExpectSimplify("x + x", "x * 2");
  ExpectSimplify("x // 8 * 8 + x % 8", "x");
  ExpectSimplify("i // 8 * 8 + i % 8", "i");
  ExpectSimplify("T.truncdiv(i, 4) * 4 + T.truncmod(i, 4)", "i");
  ExpectSimplify("T.min(i, j - k) + k", "T.min(i + k, j)");
  // Ring identities wrap: 100 + 100 is -56 in int8.
  ExpectSimplify("(a + T.int8(100)) + T.int8(100)", "a - T.int8(56)");
  ExpectSimplify("(u + T.uint8(200)) + T.uint8(100)", "u + T.uint8(44)");
  // min(x, y - z) + z may overflow for unbounded operands.
  ExpectUnchanged("T.min(x, y - z) + z");
}

TEST_F(RewriteSimplifyTest, Sub) {
  ExpectSimplify("x - x", "0");
  ExpectSimplify("x - 0", "x");
  ExpectSimplify("(x + 2) - 5", "x - 3");
  ExpectSimplify("x - -4", "x + 4");
  ExpectSimplify("(x + y) - x", "y");
  ExpectSimplify("(x + y) - (x + z)", "y - z");
  ExpectSimplify("(x + 5) - (y + 2)", "x - y + 3");
  ExpectSimplify("x * 4 - x", "x * 3");
  ExpectSimplify("i - i // 4 * 4", "i % 4");
  ExpectSimplify("T.max(i, j) - i", "T.max(j - i, 0)");
  // x - (x // 4) * 4 may overflow for an unbounded x (x // 4 * 4 is not x's neighbour there).
  ExpectUnchanged("x - x // 4 * 4");
  // x - INT_MIN has no positive negation.
  ExpectUnchanged("a - T.int8(-128)");
}

TEST_F(RewriteSimplifyTest, Mul) {
  ExpectSimplify("x * 1", "x");
  ExpectSimplify("x * 0", "0");
  ExpectSimplify("3 * x", "x * 3");
  ExpectSimplify("(x * 4) * 2", "x * 8");
  ExpectSimplify("(x + 2) * 3", "x * 3 + 6");
  ExpectSimplify("(x - 2) * 3", "x * 3 - 6");
  ExpectSimplify("(x * 3) * y", "x * y * 3");
}

TEST_F(RewriteSimplifyTest, FloorDivTruncDiv) {
  ExpectSimplify("x // 1", "x");
  ExpectSimplify("(i * 8 + k) // 8", "i");
  ExpectSimplify("(i * 8 + j) // 8", "i + j // 8");
  ExpectSimplify("(i // 4) // 8", "i // 32");
  ExpectSimplify("(i * 6) // 3", "i * 2");
  ExpectSimplify("(i * 4) // 8", "i // 2");
  ExpectSimplify("(i + 16) // 8", "i // 8 + 2");
  ExpectSimplify("T.truncdiv(i, 4)", "i // 4");
  ExpectSimplify("(i * n) // n", "i");
  ExpectSimplify("(i - i % 8) // 8", "i // 8");
  // May overflow or divide by zero: as written.
  ExpectUnchanged("(x * 8 + y) // 8");
  ExpectUnchanged("T.truncdiv(x, 4)");
  ExpectUnchanged("x // 0");
  ExpectUnchanged("(x * y) // y");
  ExpectUnchanged("i // j");
}

TEST_F(RewriteSimplifyTest, FloorModTruncMod) {
  ExpectSimplify("x % 1", "0");
  ExpectSimplify("(i * 8 + j) % 8", "j % 8");
  ExpectSimplify("(i + 16) % 8", "i % 8");
  ExpectSimplify("(i + 17) % 8", "(i + 1) % 8");
  ExpectSimplify("k % 8", "k");
  ExpectSimplify("T.truncmod(i, 8)", "i % 8");
  ExpectSimplify("(i % 16) % 4", "i % 4");
  ExpectSimplify("(i * 8) % 4", "0");
  ExpectUnchanged("(x * 8 + y) % 8");
  ExpectUnchanged("x % 0");
  ExpectUnchanged("T.truncmod(x, 8)");
}

TEST_F(RewriteSimplifyTest, MinMax) {
  ExpectSimplify("T.min(x, x)", "x");
  ExpectSimplify("T.max(3, x)", "T.max(x, 3)");
  ExpectSimplify("T.min(i, 100)", "i");
  ExpectSimplify("T.max(i, 100)", "100");
  ExpectSimplify("T.min(i + 1, i)", "i");
  ExpectSimplify("T.max(T.max(x, 3), 5)", "T.max(x, 5)");
  ExpectSimplify("T.min(T.max(x, 10), 5)", "5");
  ExpectSimplify("T.min(x, T.max(x, y))", "x");
  ExpectSimplify("T.min(i + j, i + k)", "i + T.min(j, k)");
  ExpectSimplify("T.min(i * 4, j * 4)", "T.min(i, j) * 4");
  // x + 1 may wrap to INT_MIN: min(x + 1, x) is not x.
  ExpectUnchanged("T.min(x + 1, x)");
}

TEST_F(RewriteSimplifyTest, Compare) {
  ExpectSimplify("x == x", "True");
  ExpectSimplify("x < x", "False");
  ExpectSimplify("5 < x", "x >= 6");
  ExpectSimplify("x <= 7", "x < 8");
  ExpectSimplify("i + 1 < 10", "i < 9");
  ExpectSimplify("i * 4 < 10", "i < 3");
  ExpectSimplify("i * 4 >= 10", "i >= 3");
  ExpectSimplify("i // 4 < 3", "i < 12");
  ExpectSimplify("x + 1 == 10", "x == 9");
  ExpectSimplify("i < 100", "True");
  ExpectSimplify("i - j < 0", "i < j");
  ExpectSimplify("i + j < i + k", "j < k");
  ExpectSimplify("T.min(i, j) < 3", "i < 3 or j < 3");
  // x + 1 < 10 is true for x = INT_MAX (it wraps): not x < 9.
  ExpectUnchanged("x + 1 < 10");
  ExpectUnchanged("x - y < 0");
  // x <= INT8_MAX has no strict form.
  ExpectSimplify("a <= T.int8(127)", "True");
}

TEST_F(RewriteSimplifyTest, Logical) {
  ExpectSimplify("x < 5 and x < 3", "x < 3");
  ExpectSimplify("x < 3 and x > 5", "False");
  ExpectSimplify("x <= 3 or x > 3", "True");
  ExpectSimplify("x >= 2 and x < 3", "x == 2");
  ExpectSimplify("x == 4 and x < 9", "x == 4");
  ExpectSimplify("x == 4 and x != 4", "False");
  ExpectSimplify("not (x < 3)", "x >= 3");
  ExpectSimplify("not (x < 3 and y < 4)", "x >= 3 or y >= 4");
  ExpectSimplify("not (not (x < y))", "x < y");
  ExpectSimplify("x < 3 and not (x < 3)", "False");
  ExpectSimplify("x < y or x >= y", "True");
  ExpectSimplify("(y < 1 and x < 7) and x < 4", "y < 1 and x < 4");
  ExpectSimplify("(y < 1 and x >= 7) and x < 4", "False");
  ExpectSimplify("x < 3 or x < 9", "x < 9");
  ExpectSimplify("x < 3 or x >= 4", "x != 3");
}

TEST_F(RewriteSimplifyTest, Select) {
  ExpectSimplify("T.Select(x < y, z, z)", "z");
  ExpectSimplify("T.Select(x < y, x, y)", "T.min(x, y)");
  ExpectSimplify("T.Select(x >= y, x, y)", "T.max(x, y)");
  ExpectSimplify("T.Select(not (x < y), z, w)", "T.Select(x >= y, z, w)");
  ExpectSimplify("T.Select(i < 64, z, w)", "z");
}

TEST_F(RewriteSimplifyTest, FactsAndProofs) {
  {
    ConstraintScope scope(&analyzer_, P("x < 10"));
    ExpectSimplify("T.Select(x < 10, y, z)", "y");
    ExpectSimplify("x + 1 < 11", "True");
  }
  ExpectUnchanged("x + 1 < 11");
  EXPECT_TRUE(analyzer_.CanProve(P("x < 3 or x >= 3")));
  EXPECT_TRUE(analyzer_.CanProve(P("not (x < 3 and x > 5)")));
  EXPECT_TRUE(analyzer_.CanProve(P("x - x == 0")));
  EXPECT_TRUE(analyzer_.CanProve(P("(i * 8 + k) // 8 == i")));
  EXPECT_FALSE(analyzer_.CanProve(P("x + 1 > x")));
  auto* ext = dynamic_cast<RewriteSimplifier*>(analyzer_.FindExtension("rewrite"));
  ASSERT_NE(ext, nullptr);
  EXPECT_EQ(ext->TryProve(P("x < 3 and x > 5"), ProofStrength::kDefault), ProofResult::kDisproved);
  EXPECT_EQ(ext->TryProve(P("x < 3"), ProofStrength::kDefault), ProofResult::kUnknown);
}

TEST_F(RewriteSimplifyTest, StepBudgetAndClone) {
  auto* ext = dynamic_cast<RewriteSimplifier*>(analyzer_.FindExtension("rewrite"));
  ASSERT_NE(ext, nullptr);
  ExpectSimplify("((x + 1) + 2) + 3", "x + 6");
  EXPECT_EQ(ext->last_steps(), 2);
  ext->set_max_steps(0);
  ExpectUnchanged("((x + 1) + 2) + 3");
  ext->set_max_steps(RewriteSimplifier::kDefaultMaxSteps);
  std::unique_ptr<Analyzer> clone = analyzer_.Clone();
  PrimExpr r = clone->RewriteSimplify(P("(i * 8 + k) // 8"));
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(r, V("i"))) << AsText(r);
}

TEST_F(RewriteSimplifyTest, ImpureOperandsStay) {
  PrimExpr call = Call(DataType::Int(32), builtin::call_extern(), {StringImm("f")});
  PrimExpr e = Sub(call, call);
  EXPECT_TRUE(analyzer_.RewriteSimplify(e).same_as(e));
  PrimExpr m = Mul(call, IntImm(DataType::Int(32), 0));
  EXPECT_TRUE(analyzer_.RewriteSimplify(m).same_as(m));
}

TEST(RewriteRules, TableIsEnumerableWithLocations) {
  const std::vector<RewriteRuleInfo>& rules = RewriteRules();
  EXPECT_GT(rules.size(), 200u);
  for (const RewriteRuleInfo& r : rules) {
    EXPECT_NE(r.file.find("src/arith/rewrite/rules_"), std::string::npos) << r.file;
    EXPECT_GT(r.line, 10) << r.file;
    EXPECT_FALSE(r.before.empty());
  }
}

TEST(RewriteRules, MalformedRuleNamesItsLine) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      ParseRewriteRules("src/arith/rewrite/rules_test.cc", 20, text);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const tvm::ffi::Error& e) {
      EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
    }
  };
  expect_error("\n# comment\nx + -> x\n", "src/arith/rewrite/rules_test.cc:22");
  expect_error("x + y -> z", "does not bind");
  expect_error("x -> x + 0", "must start with an operator");
  expect_error("x + y x", "expected 'before -> after'");
  expect_error("x + 0 -> x [fast]", "unknown tag");
  expect_error("x + 0 -> x if", "cannot parse the result");
  std::vector<RewriteRuleInfo> ok =
      ParseRewriteRules("f.cc", 5, "\n# a family\nx + 0 -> x [wrap]\nx // c1 -> x if c1 == 1\n");
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[0].line, 7);
  EXPECT_TRUE(ok[0].wrap);
  EXPECT_EQ(ok[1].condition, "c1 == 1");
  EXPECT_FALSE(ok[1].wrap);
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// i in [0, n) bound first, n <= 65536 learnt later (a scope): the bound of i follows n, so
// i * 4 provably does not wrap; i <= n - 1 comes from the comparison chains.
TEST(RewriteSimplifySymbolicRange, RangeEndsFollowLaterFacts) {
  using namespace ir;     // NOLINT(build/namespaces)
  using namespace arith;  // NOLINT(build/namespaces)
  Var i("i"), n("n");
  Analyzer a;
  a.Bind(i, Range(IntImm(DataType::Int(32), 0), n));
  PrimExpr widen = Max(Mul(i, IntImm(DataType::Int(32), 4)), IntImm(DataType::Int(32), 0));
  // Unknown n: i * 4 may wrap to a negative value, so the max must stay.
  EXPECT_TRUE(a.Simplify(widen).as<MaxNode>()) << AsText(a.Simplify(widen));
  {
    ConstraintScope scope(&a, LE(n, IntImm(DataType::Int(32), 65536)));
    PrimExpr r = a.Simplify(widen);
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(r, Mul(i, IntImm(DataType::Int(32), 4))))
        << AsText(r);
    EXPECT_EQ(a.ConstIntBound(i)->max_value, 65535);
  }
  // The scope is gone: so is the tighter bound.
  EXPECT_TRUE(a.Simplify(widen).as<MaxNode>()) << AsText(a.Simplify(widen));
  EXPECT_EQ(a.ConstIntBound(i)->max_value, 2147483646);
  {
    ConstraintScope scope(&a, LT(IntImm(DataType::Int(32), 0), n));
    PrimExpr r = a.Simplify(Min(i, Sub(n, IntImm(DataType::Int(32), 1))));
    EXPECT_TRUE(r.same_as(i)) << AsText(r);
  }
}

// `c * x + r  <  c * y + s` from `x < y` and the remainders' bounds, under wrap-around: only
// where neither side can wrap (here n <= 65536 and n > i >= 0 make n * 4 exact).
TEST(RewriteSimplifyScaled, ComparisonOfCommonFactor) {
  using namespace ir;     // NOLINT(build/namespaces)
  using namespace arith;  // NOLINT(build/namespaces)
  Var i("i"), j("j"), n("n"), m("m");
  Map<String, Any> vars{{"i", i}, {"j", j}, {"n", n}, {"m", m}};
  auto P = [&](const char* text) { return ParseExpr(text, vars); };
  Analyzer a;
  a.Bind(i, Range(IntImm(DataType::Int(32), 0), n));
  a.Bind(j, Range(0, 4));
  auto expect = [&](const char* before, const char* after) {
    PrimExpr r = a.Simplify(P(before));
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(r, P(after)))
        << before << "\n  gave     " << AsText(r) << "\n  expected " << after;
  };
  auto expect_open = [&](const char* text) {
    PrimExpr r = a.Simplify(P(text));
    EXPECT_FALSE(r.as<IntImmNode>()) << text << " decided as " << AsText(r);
    EXPECT_FALSE(a.CanProve(P(text))) << text;
  };
  // n unbounded: n = 2^29 + 1 makes n * 4 negative while i = 0 keeps the left side >= 0.
  expect_open("i * 4 + j < n * 4");
  {
    ConstraintScope scope(&a, P("n <= 65536"));
    expect("i * 4 + j < n * 4", "True");
    expect("n * 4 > i * 4 + j", "True");
    expect("n * 4 <= i * 4 + j", "False");
    expect("T.min(i * 4 + j, n * 4)", "i * 4 + j");
    EXPECT_TRUE(a.CanProve(P("i * 4 + j < n * 4")));
    // The remainder must stay below the factor: j + 1 reaches 4.
    expect_open("i * 4 + (j + 1) < n * 4");
    // Different factors: the scaled comparison does not apply (and this one is not always true).
    expect_open("i * 4 + j < n * 2");
  }
  {
    // m only bounded above: m * 4 may wrap, and nothing relates m to i.
    ConstraintScope scope(&a, P("m <= 65536"));
    expect_open("i * 4 + j < m * 4");
  }
}

}  // namespace
}  // namespace tessel
