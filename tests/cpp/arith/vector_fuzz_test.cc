// Soundness fuzzer for Analyzer::Simplify on vector expressions (Ramp, Broadcast, lane-wise
// arithmetic, comparisons and Select over 2 to 16 lanes): at random points inside the variables'
// bound ranges, every lane of the simplified expression must have the value of the same lane of
// the input. A lane is read by scalarizing (Lane: Ramp(b, s, n) -> b + s * k, Broadcast(x) -> x,
// Shuffle -> the lane it picks) and evaluating the scalar with the exact evaluator, in both
// overflow modes (points outside assume_no_overflow's domain are skipped, as in
// simplify_fuzz_test.cc). A node Lane does not know fails the test with the expression, so that a
// new form the simplifier makes is looked at rather than skipped.
//
// TESSEL_FUZZ_ITERS sets the number of expressions (default 6000, half in each mode),
// TESSEL_FUZZ_SEED the seed.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "eval.h"
#include "fuzz_util.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)
using testing::Env;
using testing::ExactEvaluator;
using testing::i128;
using testing::Semantics;
using testing::Str;

// Lane k of a vector expression as a scalar expression; `unknown` names a node it cannot split.
class Lane : public ExprMutator {
 public:
  explicit Lane(int k) : k_(k) {}
  std::string unknown;

  using ExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const RampNode* op) override {
    PrimExpr base = VisitExpr(op->base);
    return add(base, mul(VisitExpr(op->stride), MakeConst(base.dtype(), k_)));
  }
  PrimExpr VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }
  PrimExpr VisitExpr_(const CastNode* op) override {
    return Cast(op->dtype.element_of(), VisitExpr(op->value));
  }
  PrimExpr VisitExpr_(const ShuffleNode* op) override {
    // Lane k is element indices[k] of the vectors laid end to end.
    int64_t at = op->indices[k_].as<IntImmNode>() ? op->indices[k_].as<IntImmNode>()->value : -1;
    for (const PrimExpr& v : op->vectors) {
      int64_t n = v.dtype().lanes();
      if (at >= 0 && at < n) return Lane(static_cast<int>(at)).Split(v, &unknown);
      at -= n;
    }
    unknown = "a Shuffle index that is not a constant in range";
    return op->indices[0];
  }
  PrimExpr VisitExpr_(const LetNode* op) override {
    unknown = "Let";
    return op->body;
  }
  PrimExpr VisitExpr_(const CallNode* op) override {
    if (op->dtype.is_scalar()) return GetRef<PrimExpr>(op);
    unknown = "a vector Call";
    return GetRef<PrimExpr>(op);
  }
  PrimExpr VisitExpr_(const IntImmNode* op) override {
    if (op->dtype.is_scalar()) return GetRef<PrimExpr>(op);
    unknown = "a vector IntImm";
    return GetRef<PrimExpr>(op);
  }

  PrimExpr Split(const PrimExpr& e, std::string* why) {
    PrimExpr out = VisitExpr(e);
    if (!unknown.empty()) *why = unknown;
    return out;
  }

 private:
  int k_;
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

  void NewVars() {
    vars_.clear();
    DataType t = Pick(2) ? DataType::Int(32) : DataType::Int(64);
    for (int i = 0; i < 3; ++i) vars_.push_back(Var("v" + std::to_string(i), t));
    lanes_ = 1 << (1 + Pick(4));  // 2, 4, 8, 16
  }
  const std::vector<Var>& vars() const { return vars_; }
  int lanes() const { return lanes_; }
  DataType ScalarType() const { return vars_[0].dtype(); }

  PrimExpr Const(int64_t v) { return MakeConst(ScalarType(), v); }
  PrimExpr SmallConst() { return Const(Pick(17) - 8); }
  PrimExpr PosConst() { return Const(1 + Pick(9)); }

  PrimExpr Scalar(int depth) {
    if (depth <= 0 || Pick(3) == 0) return Pick(3) ? PrimExpr(vars_[Pick(3)]) : SmallConst();
    switch (Pick(5)) {
      case 0:
        return add(Scalar(depth - 1), Scalar(depth - 1));
      case 1:
        return mul(Scalar(depth - 1), SmallConst());
      case 2:
        return floordiv(Scalar(depth - 1), PosConst());
      case 3:
        return floormod(Scalar(depth - 1), PosConst());
      default:
        return sub(Scalar(depth - 1), Scalar(depth - 1));
    }
  }

  PrimExpr Vec(int depth) {
    if (depth <= 0 || Pick(4) == 0) {
      if (Pick(3)) return Ramp(Scalar(1), Pick(2) ? SmallConst() : Scalar(0), lanes_);
      return Broadcast(Scalar(1), lanes_);
    }
    auto bc = [&](const PrimExpr& c) { return Broadcast(c, lanes_); };
    switch (Pick(9)) {
      case 0:
        return add(Vec(depth - 1), Vec(depth - 1));
      case 1:
        return sub(Vec(depth - 1), Vec(depth - 1));
      case 2:
        return mul(Vec(depth - 1), bc(SmallConst()));
      case 3:
        return floordiv(Vec(depth - 1), bc(PosConst()));
      case 4:
        return floormod(Vec(depth - 1), bc(PosConst()));
      case 5:
        return min(Vec(depth - 1), Vec(depth - 1));
      case 6:
        return max(Vec(depth - 1), Vec(depth - 1));
      case 7:
        return Select(Cond(depth - 1), Vec(depth - 1), Vec(depth - 1));
      default: {
        // The split-and-fuse shape on a ramp: (r // c) * c + r % c.
        PrimExpr r = Vec(depth - 1), c = bc(PosConst());
        return add(mul(floordiv(r, c), c), floormod(r, c));
      }
    }
  }

  PrimExpr Cond(int depth) {
    PrimExpr a = Vec(depth), b = Vec(depth);
    switch (Pick(8)) {
      case 0:
        return LT(a, b);
      case 1:
        return LE(a, b);
      case 2:
        return EQ(a, b);
      case 3:
        return NE(a, b);
      case 4:
        return GE(a, b);
      case 5:
        return And(LT(a, b), GE(a, Broadcast(SmallConst(), lanes_)));
      case 6:
        return Or(EQ(floormod(a, Broadcast(PosConst(), lanes_)), Broadcast(Const(0), lanes_)),
                  GT(a, b));
      default:
        return Not(LT(a, b));
    }
  }

 private:
  std::mt19937_64 rng_;
  std::vector<Var> vars_;
  int lanes_ = 4;
};

struct Report {
  int failures = 0;
  int64_t exprs = 0, changed = 0, points = 0, skipped = 0;
};

void FuzzOne(Generator& gen, bool assume_no_overflow, Report* out) {
  Semantics sem = testing::SemanticsOf(assume_no_overflow);
  gen.NewVars();
  Analyzer analyzer;
  analyzer.SetAssumeNoOverflow(assume_no_overflow);
  analyzer.RemoveExtension("z3");
  std::unordered_map<const VarNode*, std::pair<int64_t, int64_t>> ranges;
  for (const Var& v : gen.vars()) {
    int64_t lo = gen.Pick(41) - 20, extent = 1 + gen.Pick(64);
    if (gen.Pick(4) == 0) lo = -1000000 + gen.Pick(2000000);
    // Near the ends of int32, where wrap-around (or, in assume_no_overflow mode, the edge of the
    // mode's domain) is reached.
    if (gen.Pick(8) == 0) lo = gen.Pick(2) ? 2147483647 - 100 : -2147483647 - 1;
    analyzer.Bind(v, Range(gen.Const(lo), gen.Const(extent)));
    ranges[v.get()] = {lo, lo + extent - 1};
  }
  PrimExpr expr = gen.Pick(3) == 0 ? gen.Cond(1 + gen.Pick(2)) : gen.Vec(1 + gen.Pick(3));
  PrimExpr simplified = analyzer.Simplify(expr);
  ++out->exprs;
  if (simplified.same_as(expr)) return;
  ++out->changed;
  ASSERT_EQ(simplified.dtype(), expr.dtype()) << AsText(expr) << "\n  -> " << AsText(simplified);
  for (int p = 0; p < 8; ++p) {
    Env env;
    for (const Var& v : gen.vars()) {
      auto [lo, hi] = ranges[v.get()];
      env[v.get()] = lo + gen.Pick(static_cast<int>(hi - lo + 1));
    }
    for (int k = 0; k < expr.dtype().lanes(); ++k) {
      std::string why;
      PrimExpr a = Lane(k).Split(expr, &why);
      ASSERT_TRUE(why.empty()) << "the input has " << why << ": " << AsText(expr);
      PrimExpr b = Lane(k).Split(simplified, &why);
      ASSERT_TRUE(why.empty()) << "the simplified form has " << why << ": " << AsText(simplified);
      bool outside = false;
      std::optional<i128> va = testing::EvalInput(a, env, sem, &outside);
      if (outside || !va) {
        ++out->skipped;
        continue;
      }
      ExactEvaluator ev(env, sem);
      std::optional<i128> vb = ev(b);
      ++out->points;
      if (vb && *vb == *va) continue;
      std::string point;
      for (const Var& v : gen.vars())
        point += " " + std::string(v->name_hint) + "=" + Str(env[v.get()]);
      ADD_FAILURE() << (assume_no_overflow ? "[assume_no_overflow] " : "") << AsText(expr)
                    << "\n  simplified to " << AsText(simplified) << "\n  lane " << k << " at"
                    << point << ": " << Str(*va) << " vs "
                    << (vb ? Str(*vb) : std::string("undefined"));
      if (++out->failures >= 5) return;
      break;
    }
  }
}

TEST(VectorFuzz, SimplifyKeepsEveryLane) {
  uint64_t seed = static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 20261202));
  for (bool mode : {false, true}) {
    Generator gen(seed + (mode ? 1 : 0));
    Report r;
    int64_t iters = testing::ItersPerMode(6000, mode);
    for (int64_t i = 0; i < iters && r.failures < 5; ++i) {
      FuzzOne(gen, mode, &r);
      if (::testing::Test::HasFatalFailure()) return;
    }
    std::cout << (mode ? "assume_no_overflow" : "wrap") << ": " << r.exprs << " expressions, "
              << r.changed << " simplified, " << r.points << " lanes checked, " << r.skipped
              << " outside the mode's domain\n";
    EXPECT_EQ(r.failures, 0);
    // The generator must keep giving the simplifier something to do.
    EXPECT_GE(r.changed * 4, r.exprs);
  }
}

}  // namespace
}  // namespace tessel
