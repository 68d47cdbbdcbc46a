// The rule families taken from TVM's rewrite simplifier (issue 12): one-line cases in both overflow
// modes, the cases that must stay as written in the default (wrap-around) mode, the constant-cast
// folding and offset-comparison normal form of compare_cast.h, min/max chains and divisions by a
// divisor the input already divides by.
#include <gtest/gtest.h>
#include <tessel/arith/rewrite_simplify.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "eval.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

class RewriteFamiliesTest : public ::testing::Test {
 protected:
  RewriteFamiliesTest() : no_overflow_(std::make_unique<Analyzer>()) {
    // x, y, z, w: unbounded int32; i, j in [0, 64), k in [0, 8); c: bool; v: int32x4.
    for (const char* name : {"x", "y", "z", "w", "i", "j", "k"}) vars_.Set(name, Var(name));
    vars_.Set("c", Var("c", DataType::Bool()));
    no_overflow_->SetAssumeNoOverflow(true);
    for (Analyzer* a : {&wrap_, no_overflow_.get()}) {
      a->Bind(V("i"), Range(0, 64));
      a->Bind(V("j"), Range(0, 64));
      a->Bind(V("k"), Range(0, 8));
    }
  }

  Var V(const char* name) { return vars_[name].cast<Var>(); }
  PrimExpr P(const std::string& text) { return ParseExpr(text, vars_); }

  void Expect(Analyzer* a, const std::string& before, const std::string& after) {
    PrimExpr r = a->RewriteSimplify(P(before));
    PrimExpr want = P(after);
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(r, want))
        << (a == &wrap_ ? "[wrap] " : "[no_overflow] ") << before << "\n  gave     " << AsText(r)
        << "\n  expected " << AsText(want);
    // A fixed point: two rules that undo each other would cycle until the step budget ran out
    // (milliseconds per call) and stop anywhere in the cycle.
    PrimExpr again = a->RewriteSimplify(r);
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(again, r))
        << before << ": not a fixed point, " << AsText(r) << " -> " << AsText(again);
  }
  // The same answer in both modes (the rule holds under wrap-around, or the bounds show that
  // nothing overflows).
  void Both(const std::string& before, const std::string& after) {
    Expect(&wrap_, before, after);
    Expect(no_overflow_.get(), before, after);
  }
  // Only where signed 32-bit arithmetic is assumed not to overflow; wrap-around keeps it.
  void NoOverflowOnly(const std::string& before, const std::string& after) {
    Expect(&wrap_, before, before);
    Expect(no_overflow_.get(), before, after);
  }

  Map<String, Any> vars_;
  Analyzer wrap_;
  std::unique_ptr<Analyzer> no_overflow_;
};

TEST_F(RewriteFamiliesTest, MinMaxDistributionAndAbsorption) {
  Both("T.min(T.max(x, y), T.max(x, z))", "T.max(T.min(y, z), x)");
  Both("T.max(T.min(x, y), T.min(z, x))", "T.min(T.max(y, z), x)");
  Both("T.min(T.max(x, y), T.min(y, x))", "T.min(x, y)");
  Both("T.max(T.min(x, y), T.max(y, x))", "T.max(x, y)");
  // A repeated operand at any depth of the chain.
  Both("T.min(T.min(T.min(x, y), z), y)", "T.min(T.min(x, y), z)");
  Both("T.max(T.max(T.max(T.max(T.max(x, y), z), x * 2), z * 2), y)",
       "T.max(T.max(T.max(T.max(x, y), z), x * 2), z * 2)");
  Both("T.min(i + j, i + k)", "i + T.min(j, k)");
  NoOverflowOnly("T.max(x + y, z + x)", "T.max(y, z) + x");
  NoOverflowOnly("T.min(3 - x, 2 - x)", "2 - x");
  NoOverflowOnly("T.min(x, (x + 3) // 4 * 4)", "x");
  NoOverflowOnly("T.max(x * -2, -4)", "T.min(x, 2) * -2");
  Both("T.min(i, (i + 3) // 4 * 4)", "i");
  Both("T.max(i // 4 * 4, i)", "i");
}

TEST_F(RewriteFamiliesTest, SubtractionOfMinMax) {
  NoOverflowOnly("y - T.min(x, y)", "T.max(y - x, 0)");
  NoOverflowOnly("T.min(x, y + 2) - 2", "T.min(x - 2, y)");
  NoOverflowOnly("T.max(z, x + y) - x", "T.max(z - x, y)");
  Both("T.min(x, y) - T.min(y, x)", "0");
  NoOverflowOnly("T.min(x + 10, y + 1) - T.min(x, y - 9)", "10");
  Both("T.max(j, k) - k", "T.max(j - k, 0)");
}

TEST_F(RewriteFamiliesTest, SelectPairs) {
  Both("T.min(T.Select(c, y, 0), T.Select(c, 1, z))", "T.Select(c, T.min(y, 1), T.min(z, 0))");
  Both("T.Select(c, y, 0) + T.Select(c, 1, z)", "T.Select(c, y + 1, z)");
  Both("T.Select(c, y, 1) - T.Select(c, 1, z)", "T.Select(c, y - 1, 1 - z)");
}

TEST_F(RewriteFamiliesTest, Comparisons) {
  // Offsets moved to one side, kept non-negative.
  NoOverflowOnly("x - 1 < y", "x <= y");
  NoOverflowOnly("x + 2 < y + 3", "x <= y");
  NoOverflowOnly("x + 5 < y + 10", "x < y + 5");
  NoOverflowOnly("x - 5 < y - 10", "x + 5 < y");
  Both("i + 1 < j + 1", "i < j");
  Both("x + 1 == y + 3", "x == y + 2");  // a bijection: holds under wrap-around too
  // Scaled comparisons.
  // Under wrap-around only the normal form of a comparison with a constant applies.
  Expect(&wrap_, "x * 2 <= 0", "x * 2 < 1");
  Expect(no_overflow_.get(), "x * 2 <= 0", "x < 1");
  Expect(&wrap_, "x * -2 <= 3", "x * -2 < 4");
  Expect(no_overflow_.get(), "x * -2 <= 3", "x >= -1");
  NoOverflowOnly("x * 3 >= y * 3", "y <= x");
  Both("i * 8 + k < 16", "i < 2");
  Both("T.truncdiv(x, 3) >= 0", "x >= -2");
  Both("x // 4 * 4 < x", "x % 4 >= 1");
  // A quotient and remainder pin the value down.
  Both("x // 8 == 3 and x % 8 == 4", "x == 28");
  Both("x // 10 == -5 and x % 10 < 7", "x >= -50 and x < -43");
  Both("x > y or x <= y", "True");
  Expect(&wrap_, "0 <= x - y * 5 and x - y * 5 < 5", "x - y * 5 >= 0 and x - y * 5 < 5");
  Expect(no_overflow_.get(), "0 <= x - y * 5 and x - y * 5 < 5", "y == x // 5");
  Both("0 <= i - j * 5 and i - j * 5 < 5", "j == i // 5");
}

TEST_F(RewriteFamiliesTest, DivisionAndRemainder) {
  NoOverflowOnly("x * 4 // 2", "x * 2");
  Both("(i * 32 + k) // 64", "i // 2");
  NoOverflowOnly("(x * 8 + 39) // 16", "x // 2 + 2");
  Expect(&wrap_, "(x % 2 + 7) // 2 + x // 2", "(x % 2 + 7) // 2 + x // 2");
  Expect(no_overflow_.get(), "(x % 2 + 7) // 2 + x // 2", "(x + 7) // 2");
  NoOverflowOnly("(x // 2 + 1) // 3", "(x + 2) // 6");
  NoOverflowOnly("(x + 5) // 3 - x // 3", "(x % 3 + 5) // 3");  // once cycled with the next
  NoOverflowOnly("(x + 1) // 2 + 3", "(x + 7) // 2");
  Expect(&wrap_, "T.truncmod(x * 10, -2)", "T.truncmod(x * 10, 2)");
  Expect(no_overflow_.get(), "T.truncmod(x * 10, -2)", "0");
  Expect(&wrap_, "y - (y - 6) // 5 * 5", "(y - 6) % 5 + 6");  // a ring identity
  Expect(no_overflow_.get(), "y - (y - 6) // 5 * 5", "(y + 4) % 5 + 6");
  Both("y * 3 - y // 2 * 6", "y % 2 * 3");
  // A divisor the input already divides by needs no proof that it is non-zero (division by zero
  // is undefined behaviour, ir/expr.h): nothing new divides by zero.
  NoOverflowOnly("x * y // y", "x");
  NoOverflowOnly("x // x", "1");  // by bounds, INT_MIN // -1 might overflow
  Both("i // (i + 1)", "i // (i + 1)");
  NoOverflowOnly("(x * z + y) // z", "x + y // z");
  // A new division by a divisor that may be zero is never introduced.
  Expect(no_overflow_.get(), "x * y // z", "x * y // z");
}

TEST_F(RewriteFamiliesTest, NestedIfThenElse) {
  Both("T.if_then_else(x < 5, T.if_then_else(x > 1, 1, 0), 0)",
       "T.if_then_else(x < 5 and x >= 2, 1, 0)");
  // The outer condition implies the inner one.
  Both("T.if_then_else(x > 2, T.if_then_else(x > 1, y, z), z)", "T.if_then_else(x >= 3, y, z)");
  // A condition that may divide by zero where the guard is false stays guarded.
  Both("T.if_then_else(y != 0, T.if_then_else(x // y > 1, 1, 0), 0)",
       "T.if_then_else(y != 0, T.if_then_else(x // y >= 2, 1, 0), 0)");
  // Different else values: nothing to merge.
  Both("T.if_then_else(x < 5, T.if_then_else(x > 1, 1, 2), 0)",
       "T.if_then_else(x < 5, T.if_then_else(x >= 2, 1, 2), 0)");
}

TEST_F(RewriteFamiliesTest, ProductsThatCancel) {
  NoOverflowOnly("x * x * y * 2 // (x * x * x * 4)", "y // (x * 2)");
  Expect(&wrap_, "x * 32 * x % x", "x * x * 32 % x");  // products reordered, nothing cancelled
  Expect(no_overflow_.get(), "x * 32 * x % x", "0");
  Expect(no_overflow_.get(), "T.truncmod(x * 32 * x, x * y)", "T.truncmod(x * 32, y) * x");
  Expect(no_overflow_.get(), "x * (2 * y) * 3 // (3 * y)", "x * 2");
  NoOverflowOnly("x * 6 % (y * 4)", "x * 3 % (y * 2) * 2");
  // Bounded factors cancel under wrap-around too.
  Both("i * j * 4 // (j * 2)", "i * 2");
  Both("i * k % k", "0");
  // Nothing shared: unchanged.
  Both("i * j // (k * 3)", "i * j // (k * 3)");
}

TEST_F(RewriteFamiliesTest, VectorLanes) {
  // No lane of x * 8 + [0, 2, 4, 6] crosses a multiple of 64: x * 8 mod 64 is at most 56.
  NoOverflowOnly("T.Ramp(x * 8, 2, 4) // T.Broadcast(64, 4)", "T.Broadcast(x // 8, 4)");
  NoOverflowOnly("T.Ramp(x * 8, 2, 4) % T.Broadcast(64, 4)", "T.Ramp(x * 8 % 64, 2, 4)");
  NoOverflowOnly("T.Ramp(x * 4, 1, 4) // T.Broadcast(64, 4)", "T.Broadcast(x // 16, 4)");
  Both("T.Ramp(i * 8, 2, 4) // T.Broadcast(64, 4)", "T.Broadcast(i // 8, 4)");
  // The lanes x * 8 + [0, 3, 6, 9] may cross one: nothing changes.
  Both("T.Ramp(x * 8, 3, 4) // T.Broadcast(64, 4)", "T.Ramp(x * 8, 3, 4) // T.Broadcast(64, 4)");
}

TEST_F(RewriteFamiliesTest, ConstantCasts) {
  Both("T.Cast(\"int32\", T.int8(2))", "2");
  Both("T.Cast(\"int8\", T.float16(2.0))", "T.int8(2)");
  Both("T.Cast(\"float32\", x - x)", "T.float32(0)");
  Both("T.Cast(\"float32\", x == x)", "T.float32(1)");
  Both("T.Cast(\"bool\", T.int32(3))", "T.bool(True)");
  Both("T.Cast(\"int8\", 300)", "T.int8(44)");  // an integer narrowing keeps the low bits
  // Not exact: left for the target to round.
  Both("T.Cast(\"float16\", T.float32(0.1))", "T.Cast(\"float16\", T.float32(0.1))");
  Both("T.Cast(\"int32\", T.float32(2.5))", "T.Cast(\"int32\", T.float32(2.5))");
  Both("T.Cast(\"float16\", 4097)", "T.Cast(\"float16\", 4097)");
}

TEST_F(RewriteFamiliesTest, NoOverflowModeKeepsValuesMathematical) {
  // Under wrap-around the constants fold modulo 2^32; in the no-overflow mode a constant that
  // leaves int32 cannot be written, so the expression stays.
  Expect(&wrap_, "x + 2 + 2147483647", "x - 2147483647");
  Expect(no_overflow_.get(), "x + 2 + 2147483647", "x + 2 + 2147483647");
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

// Random shapes that reach the C++ rewrites the rule checkers do not see (common factors of
// divisions, offset comparisons, constant casts, min/max chains), rewritten in both overflow modes
// and checked against the exact evaluator at random points of the variables' ranges.
TEST(RewriteFamiliesFuzz, CppRewritesKeepTheValue) {
  const char* seed_env = std::getenv("TESSEL_FUZZ_SEED");
  const char* iters_env = std::getenv("TESSEL_FUZZ_ITERS");
  std::mt19937_64 rng(seed_env ? std::strtoull(seed_env, nullptr, 10) : 20261201);
  int iters = iters_env ? std::atoi(iters_env) : 20000;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  int checked = 0, failures = 0;
  for (int iter = 0; iter < iters && failures < 10; ++iter) {
    bool no_overflow = iter % 2 == 1;
    DataType t = pick(3) == 0 ? DataType::Int(8) : DataType::Int(32);
    Var vars[3] = {Var("x", t), Var("y", t), Var("z", t)};
    Analyzer analyzer;
    if (no_overflow) analyzer.SetAssumeNoOverflow(true);
    int64_t lo[3], hi[3];
    for (int i = 0; i < 3; ++i) {
      int64_t span = pick(2) ? 16 : (t.bits() == 8 ? 100 : 100000);
      lo[i] = static_cast<int64_t>(pick(static_cast<int>(2 * span + 1))) - span;
      hi[i] = lo[i] + pick(static_cast<int>(span)) + 1;
      lo[i] = std::max<int64_t>(lo[i], t.min_int());
      hi[i] = std::min<int64_t>(hi[i], t.max_int());
      if (pick(4) == 0) {
        lo[i] = t.min_int();
        hi[i] = t.max_int();
      } else {
        analyzer.Bind(vars[i], Range(IntImm(t, lo[i]), IntImm(t, hi[i] - lo[i] + 1)));
      }
    }
    auto term = [&]() -> PrimExpr {
      PrimExpr v = vars[pick(3)];
      switch (pick(4)) {
        case 0:
          return Mul(v, IntImm(t, pick(7) - 3));
        case 1:
          return Mul(v, vars[pick(3)]);
        default:
          return v;
      }
    };
    auto product = [&]() -> PrimExpr {
      PrimExpr p = term();
      for (int n = pick(3); n > 0; --n) p = Mul(p, pick(2) ? term() : IntImm(t, pick(9) - 4));
      return p;
    };
    PrimExpr e;
    switch (pick(4)) {
      case 0: {
        PrimExpr a = product(), b = product();
        switch (pick(4)) {
          case 0:
            e = FloorDiv(a, b);
            break;
          case 1:
            e = FloorMod(a, b);
            break;
          case 2:
            e = Div(a, b);
            break;
          default:
            e = Mod(a, b);
            break;
        }
        break;
      }
      case 1: {
        PrimExpr a = Add(term(), IntImm(t, pick(21) - 10));
        PrimExpr b = Sub(term(), IntImm(t, pick(21) - 10));
        switch (pick(6)) {
          case 0:
            e = LT(a, b);
            break;
          case 1:
            e = LE(a, b);
            break;
          case 2:
            e = GT(a, b);
            break;
          case 3:
            e = GE(a, b);
            break;
          case 4:
            e = EQ(a, b);
            break;
          default:
            e = NE(a, b);
            break;
        }
        break;
      }
      case 2: {
        PrimExpr m = Min(term(), term());
        for (int n = pick(4); n > 0; --n) m = pick(2) ? Min(m, term()) : Min(term(), m);
        e = Sub(m, vars[pick(3)]);
        break;
      }
      default:
        e = Add(Cast(t, IntImm(DataType::Int(64), static_cast<int64_t>(rng() % 100000) - 50000)),
                term());
        break;
    }
    PrimExpr r = analyzer.RewriteSimplify(e);
    testing::Semantics sem =
        no_overflow ? testing::Semantics::kAssumeNoOverflow : testing::Semantics::kWrap;
    for (int s = 0; s < 20; ++s) {
      testing::Env env;
      for (int i = 0; i < 3; ++i) {
        int64_t span = hi[i] - lo[i] + 1;
        env[vars[i].get()] = lo[i] + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
      }
      testing::ExactEvaluator ev_in(env, sem);
      std::optional<i128> want = ev_in(e);
      if (!want || ev_in.out_of_domain()) continue;  // undefined, or outside the mode's domain
      testing::ExactEvaluator ev_out(env, sem);
      std::optional<i128> got = ev_out(r);
      ++checked;
      if (!got || *got != *want) {
        ++failures;
        ADD_FAILURE() << (no_overflow ? "[no_overflow] " : "[wrap] ") << AsText(e) << " -> "
                      << AsText(r) << " at x=" << static_cast<int64_t>(env[vars[0].get()])
                      << " y=" << static_cast<int64_t>(env[vars[1].get()])
                      << " z=" << static_cast<int64_t>(env[vars[2].get()]) << ": "
                      << (got ? std::to_string(static_cast<int64_t>(*got)) : "undefined")
                      << " instead of " << static_cast<int64_t>(*want);
        break;
      }
    }
  }
  EXPECT_GT(checked, iters * 5);
}

}  // namespace
}  // namespace tessel
