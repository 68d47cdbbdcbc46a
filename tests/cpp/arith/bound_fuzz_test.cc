// Soundness fuzzer for the Analyzer: random integer expressions over variables of several dtypes,
// random ranges and facts; on random points that satisfy the facts, every value must lie in the
// ConstIntBound and the IntSet, match the ModularSet, equal the value of Simplify's result, and
// every condition CanProve accepts must hold.
//
// It runs in both overflow modes of the analyzer. In assume_no_overflow mode the values are those
// of the mode's semantics (int32/int64 arithmetic is exact, testing::Semantics), and a point at
// which an int32/int64 operation of the expression or of a fact leaves its dtype is outside the
// mode's domain and skipped; values are drawn smaller there so that most points are in it.
//
// TESSEL_FUZZ_ITERS sets the number of expressions (default 20000, half in each mode),
// TESSEL_FUZZ_SEED the seed.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "eval.h"
#include "fuzz_util.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)
using testing::EvalInput;
using testing::ExactEvaluator;
using testing::i128;
using testing::ItersPerMode;
using testing::NoOverflowType;
using testing::Semantics;
using testing::Str;

class Generator {
 public:
  // small: the values for assume_no_overflow mode (int32/int64 constants near the dtype's ends
  // are rarer, so that fewer operations leave the dtype).
  Generator(uint64_t seed, bool small) : rng_(seed), small_(small) {
    for (DataType t : types_) {
      for (const char* n : {"x", "y"}) vars_.push_back(Var(std::string(n) + "_" + t.str(), t));
    }
  }

  const std::vector<Var>& vars() const { return vars_; }
  DataType RandomType() { return types_[Pick(types_.size())]; }

  int64_t Pick(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  // A uniform value in [lo, hi] (a span of up to 2^64 values).
  i128 Uniform(i128 lo, i128 hi) {
    unsigned __int128 span = static_cast<unsigned __int128>(hi - lo) + 1;
    unsigned __int128 r = (static_cast<unsigned __int128>(rng_()) << 64) | rng_();
    return lo + static_cast<i128>(span == 0 ? r : r % span);
  }

  i128 Constant(DataType t) {
    IntInterval r = DTypeRange(t);
    int64_t kind = Pick(6);
    if (small_ && NoOverflowType(t) && kind < 4 && Pick(2)) kind = 0;
    switch (kind) {
      case 0:
        return std::max<i128>(r.lo, std::min<i128>(r.hi, Pick(17) - 8));
      case 1:
        return std::min<i128>(r.hi, static_cast<i128>(1) << Pick(
                                        small_ && NoOverflowType(t) ? t.bits() / 2 : t.bits()));
      case 2:
        return r.lo + Pick(3);
      case 3:
        return r.hi - Pick(3);
      default:
        return Uniform(std::max<i128>(r.lo, -300), std::min<i128>(r.hi, 300));
    }
  }

  PrimExpr Const(DataType t, i128 v) { return IntImm(t, WrapToDType(t, v)); }

  PrimExpr Leaf(DataType t) {
    if (Pick(3) == 0) return Const(t, Constant(t));
    std::vector<Var> of_type;
    for (const Var& v : vars_) {
      if (v.dtype() == t) of_type.push_back(v);
    }
    return of_type[Pick(of_type.size())];
  }

  PrimExpr Cond(DataType t, int depth) {
    PrimExpr a = Gen(t, depth), b = Gen(t, depth);
    switch (Pick(8)) {
      case 0:
        return EQ(a, b);
      case 1:
        return NE(a, b);
      case 2:
        return LT(a, b);
      case 3:
        return LE(a, b);
      case 4:
        return GT(a, b);
      case 5:
        return GE(a, b);
      case 6:
        return And(LT(a, b), GE(a, Leaf(t)));
      default:
        return Not(Or(LT(a, b), EQ(a, Leaf(t))));
    }
  }

  PrimExpr Gen(DataType t, int depth) {
    if (depth <= 0 || Pick(5) == 0) return Leaf(t);
    auto sub = [&]() { return Gen(t, depth - 1); };
    switch (Pick(21)) {
      case 0:
      case 1:
        return Add(sub(), sub());
      case 2:
        return Sub(sub(), sub());
      case 3:
      case 4:
        return Mul(sub(), Pick(2) ? sub() : Leaf(t));
      case 5:
        return FloorDiv(sub(), Pick(2) ? sub() : Const(t, Constant(t)));
      case 6:
        return FloorMod(sub(), Pick(2) ? sub() : Const(t, Constant(t)));
      case 7:
        return Div(sub(), Pick(2) ? sub() : Const(t, Constant(t)));
      case 8:
        return Mod(sub(), Pick(2) ? sub() : Const(t, Constant(t)));
      case 9:
        return Min(sub(), sub());
      case 10:
        return Max(sub(), sub());
      case 11:
        return Select(Cond(t, depth - 1), sub(), sub());
      case 12:
        return Call(t, builtin::if_then_else(), {Cond(t, depth - 1), sub(), sub()});
      case 13: {
        DataType from = RandomType();
        return Cast(t, Gen(from, depth - 1));
      }
      case 14: {
        PrimExpr amount = Pick(2) ? Const(t, Pick(t.bits())) : sub();
        return Call(t, Pick(2) ? builtin::shift_left() : builtin::shift_right(), {sub(), amount});
      }
      case 15:
        return Call(t, builtin::bitwise_and(), {sub(), Pick(2) ? sub() : Leaf(t)});
      case 16:
        return Call(t, builtin::bitwise_or(), {sub(), sub()});
      case 17:
        return Call(t, builtin::bitwise_xor(), {sub(), sub()});
      case 18:
        return Call(t, builtin::bitwise_not(), {sub()});
      case 19: {
        Var v("let_" + t.str(), t);
        PrimExpr body = Gen(t, depth - 1);
        // Use the let variable in the body.
        return Let(v, sub(), Add(body, v));
      }
      default:
        return Leaf(t);
    }
  }

 private:
  std::mt19937_64 rng_;
  bool small_;
  std::vector<DataType> types_{DataType::Int(8), DataType::Int(32), DataType::Int(64),
                               DataType::UInt(8), DataType::UInt(32)};
  std::vector<Var> vars_;
};

// A variable's declared values [lo, hi] (what the analyzer is told) and the span [sample_lo,
// sample_hi] inside it that points are mostly drawn from (the declared ends the rest of the time).
struct VarRange {
  i128 lo, hi, sample_lo, sample_hi;
};

constexpr int64_t kZ3Every = 20;

// The span that values of t are drawn from: the whole dtype, or for int32/int64 in
// assume_no_overflow mode [-2^(bits/2 - 1), 2^(bits/2 - 1)], so that a product of two fits.
IntInterval Span(DataType t, bool small) {
  if (!small || !NoOverflowType(t)) return DTypeRange(t);
  i128 h = static_cast<i128>(1) << (t.bits() / 2 - 1);
  return {-h, h};
}

void RunFuzz(bool assume_no_overflow, uint64_t seed, int64_t iters) {
  const Semantics sem = testing::SemanticsOf(assume_no_overflow);
  Generator gen(seed, assume_no_overflow);
  int failures = 0;
  int64_t checked_points = 0, skipped_points = 0, proofs = 0, skipped_conds = 0;
  int64_t iter = 0;
  for (; iter < iters && failures < 10; ++iter) {
    Analyzer analyzer;
    analyzer.SetAssumeNoOverflow(assume_no_overflow);
    // Z3 is in the loop for one expression in kZ3Every; the rest check the cheap methods alone,
    // which keeps the default run fast (a failed proof costs milliseconds in Z3).
    if (iter % kZ3Every != 0) analyzer.RemoveExtension("z3");
    std::vector<std::unique_ptr<ConstraintScope>> scopes;
    std::vector<PrimExpr> facts;
    Map<Var, Range> dom;
    std::unordered_map<const VarNode*, VarRange> ranges;
    for (const Var& v : gen.vars()) {
      DataType t = v.dtype();
      IntInterval full = DTypeRange(t);
      IntInterval span = Span(t, assume_no_overflow);
      i128 lo = full.lo, hi = full.hi;
      switch (gen.Pick(5)) {
        case 0:
          break;  // unbound
        case 1:
          lo = std::max<i128>(full.lo, gen.Pick(41) - 20);
          hi = std::min<i128>(full.hi, lo + gen.Pick(40));
          break;
        case 2:
          hi = full.hi - gen.Pick(4);
          lo = hi - gen.Pick(30);
          break;
        case 3:
          lo = full.lo + gen.Pick(4);
          hi = lo + gen.Pick(30);
          break;
        default: {
          i128 a = gen.Uniform(span.lo, span.hi), b = gen.Uniform(span.lo, span.hi);
          lo = std::min(a, b);
          hi = std::max(a, b);
        }
      }
      // An unbound variable's points are drawn from the span (and its ends are the dtype's).
      bool unbound = lo == full.lo && hi == full.hi;
      ranges[v.get()] = {lo, hi, unbound ? span.lo : lo, unbound ? span.hi : hi};
      if (unbound) continue;
      i128 extent = hi - lo + 1;
      if (gen.Pick(2) && FitsInDType(t, extent)) {
        Range r(gen.Const(t, lo), gen.Const(t, extent));
        analyzer.Bind(v, r);
        dom.Set(v, r);
      } else {
        PrimExpr fact = And(LE(gen.Const(t, lo), v), LE(v, gen.Const(t, hi)));
        scopes.push_back(std::make_unique<ConstraintScope>(&analyzer, fact));
        facts.push_back(fact);
      }
      if (gen.Pick(6) == 0) {
        PrimExpr fact = EQ(FloorMod(v, gen.Const(t, 4)), gen.Const(t, gen.Pick(4)));
        scopes.push_back(std::make_unique<ConstraintScope>(&analyzer, fact));
        facts.push_back(fact);
      }
    }
    DataType t = gen.RandomType();
    PrimExpr expr = gen.Gen(t, 1 + gen.Pick(4));
    IntInterval bound = ToInterval(analyzer.ConstIntBound(expr), t);
    ModularSet ms = analyzer.ModularSet(expr);
    PrimExpr simplified = analyzer.Simplify(expr);
    IntSet set = analyzer.IntSet(expr, dom);
    std::vector<PrimExpr> proved;
    i128 c = gen.Constant(t);
    std::vector<PrimExpr> conds{LT(expr, gen.Const(t, c)),
                                GE(expr, gen.Const(t, c)),
                                EQ(expr, gen.Const(t, c)),
                                NE(expr, gen.Const(t, c)),
                                EQ(FloorMod(expr, gen.Const(t, 4)), gen.Const(t, 0)),
                                Not(LE(expr, gen.Const(t, c - 1)))};
    for (const PrimExpr& cond : conds) {
      if (analyzer.CanProve(cond)) proved.push_back(cond);
    }
    proofs += proved.size();

    auto report = [&](const std::string& what, const testing::Env& env) {
      std::ostringstream os;
      os << what << "\n  mode: " << (assume_no_overflow ? "assume_no_overflow" : "default")
         << "\n  expr: " << AsText(expr) << " (" << t << ")\n  point:";
      for (const Var& v : gen.vars()) os << " " << v->name_hint << "=" << Str(env.at(v.get()));
      os << "\n  facts:";
      for (const PrimExpr& f : facts) os << " [" << AsText(f) << "]";
      for (const auto& [v, r] : dom) os << " [" << v->name_hint << " in " << AsText(r) << "]";
      ADD_FAILURE() << os.str();
      ++failures;
    };

    for (int p = 0; p < 12; ++p) {
      testing::Env env;
      for (const Var& v : gen.vars()) {
        VarRange r = ranges[v.get()];
        i128 x =
            gen.Pick(4) == 0 ? (gen.Pick(2) ? r.lo : r.hi) : gen.Uniform(r.sample_lo, r.sample_hi);
        env[v.get()] = x;
      }
      bool ok = true, outside = false;
      for (const PrimExpr& f : facts) {
        auto fv = EvalInput(f, env, sem, &outside);
        ok = ok && fv && *fv;
      }
      if (!ok && !outside) continue;
      auto value = EvalInput(expr, env, sem, &outside);
      if (outside) {
        ++skipped_points;
        continue;
      }
      if (!ok || !value) continue;
      ++checked_points;
      i128 v = *value;
      if (v < bound.lo || v > bound.hi) {
        report("value " + Str(v) + " outside ConstIntBound [" + Str(bound.lo) + ", " +
                   Str(bound.hi) + "]",
               env);
      }
      bool in_ms = ms->coeff == 0 ? v == ms->base
                                  : testing::FloorDivExact(v - ms->base, ms->coeff) * ms->coeff ==
                                        v - ms->base;
      if (!in_ms) {
        report("value " + Str(v) + " not in ModularSet (" + std::to_string(ms->coeff) + ", " +
                   std::to_string(ms->base) + ")",
               env);
      }
      auto sv = ExactEvaluator(env, sem)(simplified);
      if (!sv || *sv != v) {
        report("Simplify changed the value: " + AsText(simplified) + " gives " +
                   (sv ? Str(*sv) : std::string("undefined")) + ", expected " + Str(v),
               env);
      }
      if (set->min_value.has_value()) {
        auto m = ExactEvaluator(env, sem)(set->min_value.value());
        if (m && v < *m) {
          report("value below IntSet min " + AsText(set->min_value.value()) + " = " + Str(*m), env);
        }
      }
      if (set->max_value.has_value()) {
        auto m = ExactEvaluator(env, sem)(set->max_value.value());
        if (m && v > *m) {
          report("value above IntSet max " + AsText(set->max_value.value()) + " = " + Str(*m), env);
        }
      }
      for (const PrimExpr& cond : proved) {
        bool cond_outside = false;
        auto cv = EvalInput(cond, env, sem, &cond_outside);
        if (cond_outside) ++skipped_conds;
        if (cv && !*cv) {
          report("CanProve accepted a false fact: " + AsText(cond) +
                     testing::SimplifiedOverflowNote(&analyzer, cond, env),
                 env);
        }
      }
    }
    while (!scopes.empty()) scopes.pop_back();
  }
  std::printf(
      "[ fuzz     ] %s mode: %lld expressions, %lld points checked, %lld skipped "
      "(outside the mode's domain), %lld proofs, %lld proved conditions skipped\n",
      assume_no_overflow ? "assume_no_overflow" : "default", static_cast<long long>(iter),
      static_cast<long long>(checked_points), static_cast<long long>(skipped_points),
      static_cast<long long>(proofs), static_cast<long long>(skipped_conds));
  EXPECT_EQ(failures, 0);
  // The run must have exercised something, mostly inside the mode's domain.
  EXPECT_GT(checked_points, iters);
  EXPECT_LT(skipped_points, checked_points / 4);
  EXPECT_GT(proofs, 0);
}

TEST(BoundFuzz, Soundness) {
  RunFuzz(false, static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 20240601)),
          ItersPerMode(20000, false));
}

TEST(BoundFuzz, SoundnessAssumeNoOverflow) {
  RunFuzz(true, static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 20240601)) + 1,
          ItersPerMode(20000, true));
}

}  // namespace
}  // namespace tessel
