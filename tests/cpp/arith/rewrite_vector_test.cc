// Vector (Ramp / Broadcast) index arithmetic in the rewrite simplifier: one-line cases, cases
// that must stay as written, and a lane-by-lane soundness check of random vector expressions
// against the exact evaluator (eval.h evaluates scalars, so each lane is rebuilt as a scalar).
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "eval.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

class RewriteVectorTest : public ::testing::Test {
 protected:
  RewriteVectorTest() {
    for (const char* name : {"x", "y", "i", "j", "k"}) vars_.Set(name, Var(name));
    vars_.Set("a", Var("a", DataType::Int(8)));
    analyzer_.Bind(V("i"), Range(0, 64));
    analyzer_.Bind(V("j"), Range(0, 64));
    analyzer_.Bind(V("k"), Range(0, 4));
  }

  Var V(const char* name) { return vars_[name].cast<Var>(); }
  PrimExpr P(const std::string& text) { return ParseExpr(text, vars_); }

  void ExpectSimplify(const std::string& before, const std::string& after) {
    PrimExpr r = analyzer_.Simplify(P(before));
    PrimExpr want = P(after);
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(r, want))
        << before << "\n  gave     " << AsText(r) << "\n  expected " << AsText(want);
  }
  void ExpectUnchanged(const std::string& text) { ExpectSimplify(text, text); }

  Map<String, Any> vars_;
  Analyzer analyzer_;
};

TEST_F(RewriteVectorTest, BroadcastOperands) {
  ExpectSimplify("T.Broadcast(x, 4) + T.Broadcast(y, 4)", "T.Broadcast(x + y, 4)");
  ExpectSimplify("T.Broadcast(x, 4) * T.Broadcast(2, 4)", "T.Broadcast(x * 2, 4)");
  ExpectSimplify("T.Broadcast(x + 1, 4) - T.Broadcast(x, 4)", "T.Broadcast(1, 4)");
  ExpectSimplify("T.Broadcast(i, 4) < T.Broadcast(64, 4)", "T.Broadcast(True, 4)");
}

TEST_F(RewriteVectorTest, RampArithmetic) {
  ExpectSimplify("T.Ramp(x, 1, 4) + T.Broadcast(y, 4)", "T.Ramp(x + y, 1, 4)");
  ExpectSimplify("T.Broadcast(y, 4) + T.Ramp(x, 2, 4)", "T.Ramp(x + y, 2, 4)");
  ExpectSimplify("T.Ramp(x * 8 + 2, 1, 4) - T.Broadcast(x * 8, 4)", "T.Ramp(2, 1, 4)");
  ExpectSimplify("T.Broadcast(x, 4) - T.Ramp(x, 1, 4)", "T.Ramp(0, -1, 4)");
  ExpectSimplify("T.Ramp(x, 1, 4) + T.Ramp(y, 2, 4)", "T.Ramp(x + y, 3, 4)");
  ExpectSimplify("T.Ramp(x, 1, 4) - T.Ramp(x, 1, 4)", "T.Broadcast(0, 4)");
  ExpectSimplify("T.Ramp(x, 1, 4) * T.Broadcast(4, 4)", "T.Ramp(x * 4, 4, 4)");
  ExpectSimplify("T.Ramp(x, 0, 4)", "T.Broadcast(x, 4)");
}

TEST_F(RewriteVectorTest, RampDivision) {
  ExpectSimplify("T.Ramp(i * 8, 1, 4) // T.Broadcast(8, 4)", "T.Broadcast(i, 4)");
  ExpectSimplify("T.Ramp(i * 8, 1, 4) % T.Broadcast(8, 4)", "T.Ramp(0, 1, 4)");
  ExpectSimplify("T.Ramp(i * 8 + 4, 1, 4) // T.Broadcast(8, 4)", "T.Broadcast(i, 4)");
  ExpectSimplify("T.Ramp(i * 8 + 4, 1, 4) % T.Broadcast(8, 4)", "T.Ramp(4, 1, 4)");
  ExpectSimplify("T.Ramp(i * 16, 8, 4) // T.Broadcast(4, 4)", "T.Ramp(i * 4, 2, 4)");
  ExpectSimplify("T.Ramp(i * 16, 8, 4) % T.Broadcast(4, 4)", "T.Broadcast(0, 4)");
  // k in [0, 4): the lanes k .. k + 3 stay below 8.
  ExpectSimplify("T.Ramp(k, 1, 4) // T.Broadcast(8, 4)", "T.Broadcast(0, 4)");
  ExpectSimplify("T.Ramp(k, 1, 4) % T.Broadcast(8, 4)", "T.Ramp(k, 1, 4)");
  ExpectUnchanged("T.Ramp(k, 1, 4) // T.Broadcast(4, 4)");
  // Truncating division where every lane is non-negative.
  ExpectSimplify("T.truncdiv(T.Ramp(i * 8, 1, 4), T.Broadcast(8, 4))", "T.Broadcast(i, 4)");
}

TEST_F(RewriteVectorTest, RampDivisionThatMustStay) {
  // Lanes i*8 + 6 .. i*8 + 9 cross a multiple of 8.
  ExpectUnchanged("T.Ramp(i * 8 + 6, 1, 4) // T.Broadcast(8, 4)");
  // Nothing known about x % 8.
  ExpectUnchanged("T.Ramp(x, 1, 4) // T.Broadcast(8, 4)");
  // x * 8 may wrap, so the lanes' residues are not those of the exact values... still
  // (x * 8) % 8 == 0 modulo 2^32, but x * 8 + 3 may be INT32_MAX - 4: the lanes would wrap.
  ExpectUnchanged("T.Ramp(x * 8 + 3, 1, 8) % T.Broadcast(8, 8)");
  // Truncating division of possibly negative lanes.
  ExpectUnchanged("T.truncdiv(T.Ramp(i * 8 - 8, 1, 4), T.Broadcast(8, 4))");
  // A non-positive divisor.
  ExpectUnchanged("T.Ramp(i * 8, 1, 4) // T.Broadcast(-8, 4)");
}

// The scalar expression of lane l of e (a vector built from Ramp, Broadcast and binary ops).
PrimExpr Lane(const PrimExpr& e, int64_t l) {
  if (e.dtype().is_scalar()) return e;
  if (const auto* r = e.as<RampNode>()) {
    return Add(r->base, Mul(r->stride, IntImm(r->stride.dtype(), l)));
  }
  if (const auto* b = e.as<BroadcastNode>()) return b->value;
#define TESSEL_X(Name) \
  if (const auto* op = e.as<Name##Node>()) return Name(Lane(op->a, l), Lane(op->b, l));
  TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
  TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
  TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
  ADD_FAILURE() << "Lane: unexpected node " << AsText(e);
  return e;
}

TEST(RewriteVectorFuzz, LanesMatchTheExactEvaluator) {
  int iters = 3000;
  if (const char* s = std::getenv("TESSEL_FUZZ_ITERS")) iters = std::max(1, std::atoi(s) / 10);
  unsigned seed = 1234;
  if (const char* s = std::getenv("TESSEL_FUZZ_SEED")) seed = static_cast<unsigned>(std::atoi(s));
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const DataType types[] = {DataType::Int(8), DataType::Int(32), DataType::UInt(8),
                            DataType::Int(64)};
  int applied = 0;
  for (int it = 0; it < iters; ++it) {
    DataType t = types[pick(0, 3)];
    Var x("x", t), y("y", t);
    IntInterval full = DTypeRange(t);
    auto rand_range = [&](int64_t* lo, int64_t* hi) {
      switch (pick(0, 2)) {
        case 0:
          *lo = 0, *hi = pick(1, 70);
          break;
        case 1:
          *lo = static_cast<int64_t>(std::max<i128>(full.lo, -40)), *hi = pick(0, 40);
          break;
        default:
          *lo = static_cast<int64_t>(std::max<i128>(full.lo, INT64_MIN / 2));
          *hi = static_cast<int64_t>(std::min<i128>(full.hi, INT64_MAX / 2));
      }
    };
    int64_t xlo, xhi, ylo, yhi;
    rand_range(&xlo, &xhi);
    rand_range(&ylo, &yhi);
    Analyzer analyzer;
    analyzer.const_int_bound_analyzer().Update(x, ConstIntBound(xlo, xhi));
    analyzer.const_int_bound_analyzer().Update(y, ConstIntBound(ylo, yhi));
    int64_t lanes = pick(2, 8);
    auto c = [&](int64_t v) { return IntImm(t, WrapToDType(t, v)); };
    auto scalar = [&]() -> PrimExpr {
      switch (pick(0, 4)) {
        case 0:
          return x;
        case 1:
          return Mul(x, c(pick(1, 16)));
        case 2:
          return Add(Mul(x, c(pick(1, 16))), c(pick(-8, 16)));
        case 3:
          return Add(x, y);
        default:
          return c(pick(-20, 20));
      }
    };
    auto vec = [&]() -> PrimExpr {
      if (pick(0, 2) == 0) return Broadcast(scalar(), lanes);
      PrimExpr stride = pick(0, 3) == 0 ? PrimExpr(y) : PrimExpr(c(pick(-3, 8)));
      return Ramp(scalar(), stride, lanes);
    };
    PrimExpr a = vec(), b = vec();
    PrimExpr e;
    switch (pick(0, 8)) {
      case 0:
        e = Add(a, b);
        break;
      case 1:
        e = Sub(a, b);
        break;
      case 2:
        e = Mul(a, b);
        break;
      case 3:
        e = FloorDiv(a, Broadcast(c(pick(-2, 17)), lanes));
        break;
      case 4:
        e = FloorMod(a, Broadcast(c(pick(-2, 17)), lanes));
        break;
      case 5:
        e = Div(a, Broadcast(c(pick(-2, 17)), lanes));
        break;
      case 6:
        e = Mod(a, Broadcast(c(pick(-2, 17)), lanes));
        break;
      case 7:
        e = LT(a, b);
        break;
      default:
        e = Max(a, b);
    }
    PrimExpr r = analyzer.Simplify(e);
    ASSERT_EQ(r.dtype(), e.dtype()) << AsText(e);
    if (!r.same_as(e)) ++applied;
    for (int trial = 0; trial < 8; ++trial) {
      testing::Env env;
      env[x.get()] = pick(xlo, xhi);
      env[y.get()] = pick(ylo, yhi);
      for (int64_t l = 0; l < lanes; ++l) {
        auto want = testing::ExactEvaluator(env)(Lane(e, l));
        if (!want) continue;
        auto got = testing::ExactEvaluator(env)(Lane(r, l));
        ASSERT_TRUE(got && *got == *want)
            << AsText(e) << "\n  simplified to " << AsText(r) << "\n  differs at lane " << l
            << " for x = " << static_cast<int64_t>(env[x.get()])
            << ", y = " << static_cast<int64_t>(env[y.get()]) << " (" << t << ")";
      }
    }
  }
  EXPECT_GT(applied, iters / 4);
}

}  // namespace
}  // namespace tessel
