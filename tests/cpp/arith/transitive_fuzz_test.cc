// Soundness fuzzer of the transitive-comparison extension: random chains of comparison facts
// (with constant offsets, over int8 and int32, bound and unbound variables) that hold for a
// random base assignment; every query the extension proves (disproves) must be true (false) at
// the base assignment and at every other sampled assignment that satisfies the facts.
// TESSEL_FUZZ_ITERS scales the number of cases, TESSEL_FUZZ_SEED picks the seed.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "eval.h"
#include "fuzz_util.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)
using testing::EnvInt;
using testing::ExactEvaluator;
using testing::i128;

struct VarInfo {
  Var var;
  bool bound;  // bound to [lo, hi] with Analyzer::Bind
  i128 lo, hi;
};

class Case {
 public:
  // Z3 answers one case in 20; the rest check the cheap methods alone (a failed proof costs
  // milliseconds in Z3).
  explicit Case(uint64_t seed) : rng_(seed) {
    if (seed % 20 != 0) analyzer_.RemoveExtension("z3");
  }

  int64_t Pick(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  i128 Uniform(i128 lo, i128 hi) {
    return lo + static_cast<i128>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }

  void Run(int case_index) {
    dtype_ = Pick(2) ? DataType::Int(8) : DataType::Int(32);
    i128 tmin = dtype_.bits() == 8 ? -128 : -(static_cast<i128>(1) << 31);
    i128 tmax = -tmin - 1;
    for (int i = 0; i < 4; ++i) {
      VarInfo v{Var("v" + std::to_string(i), dtype_), Pick(2) == 0, tmin, tmax};
      if (v.bound) {
        v.lo = Uniform(-20, 10);
        v.hi = v.lo + Uniform(0, 30);
        analyzer_.Bind(v.var, Range(MakeConst(dtype_, static_cast<int64_t>(v.lo)),
                                    MakeConst(dtype_, static_cast<int64_t>(v.hi - v.lo + 1))));
      }
      vars_.push_back(v);
    }
    base_ = RandomAssignment(nullptr);
    // Facts that hold at the base assignment, each in its own scope.
    std::vector<std::unique_ptr<ConstraintScope>> scopes;
    int nfacts = 1 + static_cast<int>(Pick(6));
    for (int i = 0; i < nfacts; ++i) {
      PrimExpr f = RandomComparison();
      if (!Holds(f, base_)) f = logical_not(f);
      if (Pick(4) == 0) {
        PrimExpr g = RandomComparison();
        if (!Holds(g, base_)) g = logical_not(g);
        f = logical_and(f, g);
      }
      facts_.push_back(f);
      scopes.push_back(std::make_unique<ConstraintScope>(&analyzer_, f));
    }
    std::vector<testing::Env> samples{base_};
    for (int i = 0; i < 300 && samples.size() < 40; ++i) {
      testing::Env env = RandomAssignment(Pick(2) ? &base_ : nullptr);
      bool ok = true;
      for (const PrimExpr& f : facts_) ok = ok && Holds(f, env);
      if (ok) samples.push_back(env);
    }
    AnalyzerExtension* ext = analyzer_.FindExtension("transitive");
    ASSERT_NE(ext, nullptr);
    for (int q = 0; q < 30; ++q) {
      PrimExpr query = RandomComparison();
      ProofResult r = ext->TryProve(query, ProofStrength::kDefault);
      if (r == ProofResult::kUnknown) continue;
      ++decided_;
      bool expect = r == ProofResult::kProved;
      for (const testing::Env& env : samples) {
        if (Holds(query, env) != expect) {
          ADD_FAILURE() << "case " << case_index << ": " << (expect ? "proved " : "disproved ")
                        << AsText(query) << " but it is " << !expect << " at " << Describe(env)
                        << " under facts " << DescribeFacts();
          return;
        }
      }
    }
  }

  int decided() const { return decided_; }

 private:
  testing::Env RandomAssignment(const testing::Env* near) {
    testing::Env env;
    for (const VarInfo& v : vars_) {
      i128 x;
      if (near && Pick(2)) {
        x = near->at(v.var.get()) + Uniform(-3, 3);
        if (x < v.lo) x = v.lo;
        if (x > v.hi) x = v.hi;
      } else if (!v.bound && Pick(4) == 0) {
        x = Pick(2) ? v.hi - Uniform(0, 2) : v.lo + Uniform(0, 2);  // near the wrap points
      } else if (!v.bound) {
        x = Uniform(-30, 30);
      } else {
        x = Uniform(v.lo, v.hi);
      }
      env[v.var.get()] = x;
    }
    return env;
  }

  PrimExpr Side() {
    switch (Pick(5)) {
      case 0:
        return MakeConst(dtype_, static_cast<int64_t>(Uniform(-25, 25)));
      case 1: {
        int64_t big = dtype_.bits() == 8 ? 127 : 2147483647;
        return add(vars_[Pick(4)].var, MakeConst(dtype_, Pick(2) ? big : -big));
      }
      case 2:
        return add(vars_[Pick(4)].var, MakeConst(dtype_, static_cast<int64_t>(Uniform(-4, 4))));
      default:
        return vars_[Pick(4)].var;
    }
  }

  PrimExpr RandomComparison() {
    PrimExpr a = Side(), b = Side();
    switch (Pick(6)) {
      case 0:
        return lt(a, b);
      case 1:
        return le(a, b);
      case 2:
        return gt(a, b);
      case 3:
        return ge(a, b);
      case 4:
        return eq(a, b);
      default:
        return ne(a, b);
    }
  }

  bool Holds(const PrimExpr& cond, const testing::Env& env) {
    auto v = ExactEvaluator(env)(cond);
    return v && *v != 0;
  }

  std::string Describe(const testing::Env& env) {
    std::string s;
    for (const VarInfo& v : vars_) {
      s += v.var->name_hint + std::string("=") +
           std::to_string(static_cast<int64_t>(env.at(v.var.get()))) + " ";
    }
    return s;
  }
  std::string DescribeFacts() {
    std::string s;
    for (const VarInfo& v : vars_) {
      if (v.bound) {
        s += v.var->name_hint + " in [" + std::to_string(static_cast<int64_t>(v.lo)) + ", " +
             std::to_string(static_cast<int64_t>(v.hi)) + "]; ";
      }
    }
    for (const PrimExpr& f : facts_) s += AsText(f) + "; ";
    return s + "(" + dtype_.str() + ")";
  }

  std::mt19937_64 rng_;
  Analyzer analyzer_;
  DataType dtype_;
  std::vector<VarInfo> vars_;
  std::vector<PrimExpr> facts_;
  testing::Env base_;
  int decided_ = 0;
};

TEST(TransitiveFuzz, ProvedQueriesHold) {
  int64_t cases = EnvInt("TESSEL_FUZZ_ITERS", 20000) / 10;
  uint64_t seed = static_cast<uint64_t>(EnvInt("TESSEL_FUZZ_SEED", 20240611));
  int decided = 0;
  for (int64_t i = 0; i < cases && !HasFailure(); ++i) {
    Case c(seed + static_cast<uint64_t>(i));
    c.Run(static_cast<int>(i));
    decided += c.decided();
  }
  // The fuzzer must exercise the extension, not only its "unknown" answer.
  EXPECT_GT(decided, static_cast<int>(cases));
}

}  // namespace
}  // namespace tessel
