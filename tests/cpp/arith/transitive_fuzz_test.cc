// Soundness fuzzer of the transitive-comparison extension: random chains of comparison facts
// (with constant offsets, over int8 and int32, bound and unbound variables) that hold for a
// random base assignment; every query the extension proves (disproves) must be true (false) at
// the base assignment and at every other sampled assignment that satisfies the facts.
//
// It runs in both overflow modes of the analyzer. In assume_no_overflow mode the values are those
// of the mode's semantics (int32 arithmetic is exact, testing::Semantics): every fact is in the
// mode's domain (no int32 operation of it leaves int32) at every sample, and a query is checked at
// the samples where it is in the domain too (the others are counted as skipped).
// TESSEL_FUZZ_ITERS scales the number of cases (half in each mode), TESSEL_FUZZ_SEED picks the
// seed.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <cstdio>
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
using testing::EvalInput;
using testing::i128;
using testing::ItersPerMode;
using testing::Semantics;

struct VarInfo {
  Var var;
  bool bound;  // bound to [lo, hi] with Analyzer::Bind
  i128 lo, hi;
};

class Case {
 public:
  // Z3 answers one case in 20; the rest check the cheap methods alone (a failed proof costs
  // milliseconds in Z3).
  Case(uint64_t seed, bool assume_no_overflow)
      : rng_(seed), sem_(testing::SemanticsOf(assume_no_overflow)) {
    analyzer_.SetAssumeNoOverflow(assume_no_overflow);
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
      PrimExpr f = InDomainComparison(base_);
      if (!Holds(f, base_)) f = logical_not(f);
      if (Pick(4) == 0) {
        PrimExpr g = InDomainComparison(base_);
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
      for (const PrimExpr& f : facts_) ok = ok && Holds(f, env) && InDomain(f, env);
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
        if (!InDomain(query, env)) {
          ++skipped_;
          continue;
        }
        ++checked_;
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
  int64_t checked() const { return checked_; }
  int64_t skipped() const { return skipped_; }

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
        // In assume_no_overflow mode v + 2147483647 is in the domain for v <= 0 only: half the
        // offsets there stay clear of the end for the small values most samples have.
        if (sem_ == Semantics::kAssumeNoOverflow && dtype_.bits() == 32 && Pick(2)) {
          big -= static_cast<int64_t>(Uniform(30, 60));
        }
        return add(vars_[Pick(4)].var, MakeConst(dtype_, Pick(2) ? big : -big));
      }
      case 2:
        return add(vars_[Pick(4)].var, MakeConst(dtype_, static_cast<int64_t>(Uniform(-4, 4))));
      default:
        return vars_[Pick(4)].var;
    }
  }

  // A random comparison that is in the mode's domain at env (after a few tries, one of a variable
  // and a constant, which always is).
  PrimExpr InDomainComparison(const testing::Env& env) {
    for (int i = 0; i < 8; ++i) {
      PrimExpr c = RandomComparison();
      if (InDomain(c, env)) return c;
    }
    return lt(vars_[Pick(4)].var, MakeConst(dtype_, static_cast<int64_t>(Uniform(-25, 25))));
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
    bool outside = false;
    auto v = EvalInput(cond, env, sem_, &outside);
    return v && *v != 0;
  }
  // Whether no int32 operation of cond leaves int32 at env (always, in the default mode).
  bool InDomain(const PrimExpr& cond, const testing::Env& env) {
    bool outside = false;
    EvalInput(cond, env, sem_, &outside);
    return !outside;
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
    return s + "(" + dtype_.str() + (sem_ == Semantics::kWrap ? "" : ", assume_no_overflow") + ")";
  }

  std::mt19937_64 rng_;
  Semantics sem_;
  Analyzer analyzer_;
  DataType dtype_;
  std::vector<VarInfo> vars_;
  std::vector<PrimExpr> facts_;
  testing::Env base_;
  int decided_ = 0;
  int64_t checked_ = 0, skipped_ = 0;
};

void RunFuzz(bool assume_no_overflow, uint64_t seed, int64_t cases) {
  int decided = 0;
  int64_t checked = 0, skipped = 0;
  int64_t i = 0;
  for (; i < cases && !::testing::Test::HasFailure(); ++i) {
    Case c(seed + static_cast<uint64_t>(i), assume_no_overflow);
    c.Run(static_cast<int>(i));
    decided += c.decided();
    checked += c.checked();
    skipped += c.skipped();
  }
  std::printf(
      "[ fuzz     ] %s mode: %lld cases, %d decided queries, %lld checks at samples, "
      "%lld skipped (outside the mode's domain)\n",
      assume_no_overflow ? "assume_no_overflow" : "default", static_cast<long long>(i), decided,
      static_cast<long long>(checked), static_cast<long long>(skipped));
  // The fuzzer must exercise the extension, not only its "unknown" answer.
  EXPECT_GT(decided, static_cast<int>(cases));
  // Most checks lie inside the mode's domain.
  EXPECT_LT(skipped, checked / 4);
}

TEST(TransitiveFuzz, ProvedQueriesHold) {
  RunFuzz(false, static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 20240611)),
          ItersPerMode(20000, false) / 10);
}

TEST(TransitiveFuzz, ProvedQueriesHoldAssumeNoOverflow) {
  // A seed range apart from the default mode's cases.
  RunFuzz(true, static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 20240611)) + (1 << 20),
          ItersPerMode(20000, true) / 10);
}

}  // namespace
}  // namespace tessel
