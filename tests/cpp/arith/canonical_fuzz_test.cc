// Soundness fuzzer for the canonical simplifier: random tiling-style index expressions (sums of
// var * const, floordiv/floormod/truncdiv/truncmod by constants, nested, re-fused
// `(e // c) * c + e % c`) over bound variables of several dtypes; at random points that satisfy
// the bindings, CanonicalSimplify(e) (and a second application) must give e's exact value, and
// a second application that changes nothing must return the first's result itself.
//
// It runs in both overflow modes of the analyzer. In assume_no_overflow mode the values are those
// of the mode's semantics (int32/int64 arithmetic is exact, testing::Semantics), and a point at
// which an int32/int64 operation of the expression leaves its dtype is outside the mode's domain
// and skipped; values are drawn smaller there so that most points are in it.
//
// TESSEL_FUZZ_ITERS sets the number of expressions (default 20000, half in each mode),
// TESSEL_FUZZ_SEED the seed.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
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

class TilingGenerator {
 public:
  // small: the values for assume_no_overflow mode (int32/int64 factors of the dtype's size are
  // rarer, so that fewer operations leave the dtype).
  TilingGenerator(uint64_t seed, bool small) : rng_(seed), small_(small) {
    for (DataType t : types_) {
      for (const char* n : {"i", "j", "k"}) vars_.push_back(Var(std::string(n) + "_" + t.str(), t));
    }
  }

  const std::vector<Var>& vars() const { return vars_; }
  DataType RandomType() { return types_[Pick(types_.size())]; }
  int64_t Pick(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  i128 Uniform(i128 lo, i128 hi) {
    unsigned __int128 span = static_cast<unsigned __int128>(hi - lo) + 1;
    unsigned __int128 r = (static_cast<unsigned __int128>(rng_()) << 64) | rng_();
    return lo + static_cast<i128>(span == 0 ? r : r % span);
  }
  PrimExpr Const(DataType t, i128 v) { return IntImm(t, WrapToDType(t, v)); }

  // Tile factors: mostly small powers of two, sometimes other small numbers, rarely negative
  // or large.
  i128 Factor(DataType t) {
    IntInterval r = DTypeRange(t);
    i128 f;
    switch (Pick(8)) {
      case 0:
      case 1:
      case 2:
        f = static_cast<i128>(1) << Pick(6);
        break;
      case 3:
      case 4:
        f = 1 + Pick(12);
        break;
      case 5:
        f = static_cast<i128>(1) << Pick(small_ && NoOverflowType(t) ? t.bits() / 2 : t.bits());
        break;
      case 6:
        f = -(1 + Pick(8));
        break;
      default:
        f = Uniform(1, 100);
    }
    return std::max(r.lo, std::min(r.hi, f));
  }

  PrimExpr Leaf(DataType t) {
    std::vector<Var> of_type;
    for (const Var& v : vars_) {
      if (v.dtype() == t) of_type.push_back(v);
    }
    PrimExpr v = of_type[Pick(of_type.size())];
    switch (Pick(4)) {
      case 0:
        return Const(t, Factor(t) + Pick(3));
      case 1:
        return Mul(v, Const(t, Factor(t)));
      default:
        return v;
    }
  }

  PrimExpr Gen(DataType t, int depth) {
    if (depth <= 0 || Pick(6) == 0) return Leaf(t);
    auto sub = [&]() { return Gen(t, depth - 1); };
    switch (Pick(14)) {
      case 0:
      case 1:
      case 2:
        return Add(sub(), sub());
      case 3:
        return Sub(sub(), sub());
      case 4:
        return Mul(sub(), Const(t, Factor(t)));
      case 5:
        return Mul(sub(), Pick(3) ? Leaf(t) : sub());
      case 6:
      case 7:
        return FloorDiv(sub(), Const(t, Factor(t)));
      case 8:
      case 9:
        return FloorMod(sub(), Const(t, Factor(t)));
      case 10:
        return Div(sub(), Const(t, Factor(t)));
      case 11:
        return Mod(sub(), Const(t, Factor(t)));
      case 12: {
        // The split-and-fuse identity, sometimes with a wrong factor.
        PrimExpr e = sub();
        PrimExpr c = Const(t, Factor(t));
        PrimExpr c2 = Pick(4) ? c : Const(t, Factor(t));
        return Add(Mul(FloorDiv(e, c), c2), FloorMod(e, c));
      }
      default: {
        // Two-level re-split: (e // a) % b and (e % (a * b)) // a.
        PrimExpr e = sub();
        i128 a = Factor(t), b = Factor(t);
        if (Pick(2)) return FloorMod(FloorDiv(e, Const(t, a)), Const(t, b));
        return FloorDiv(FloorMod(e, Const(t, a * b)), Const(t, a));
      }
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
  TilingGenerator gen(seed, assume_no_overflow);
  int failures = 0;
  int64_t checked_points = 0, skipped_points = 0, changed = 0;
  int64_t iter = 0;
  for (; iter < iters && failures < 10; ++iter) {
    Analyzer analyzer;
    analyzer.SetAssumeNoOverflow(assume_no_overflow);
    // Z3 is in the loop for one expression in kZ3Every; the rest check the cheap methods alone,
    // which keeps the default run fast (a failed proof costs milliseconds in Z3).
    if (iter % kZ3Every != 0) analyzer.RemoveExtension("z3");
    std::vector<std::unique_ptr<ConstraintScope>> scopes;
    std::vector<PrimExpr> facts;
    std::unordered_map<const VarNode*, VarRange> ranges;
    for (const Var& v : gen.vars()) {
      DataType t = v.dtype();
      IntInterval full = DTypeRange(t);
      IntInterval span = Span(t, assume_no_overflow);
      i128 lo = full.lo, hi = full.hi;
      switch (gen.Pick(6)) {
        case 0:
          break;  // unbound
        case 1:
          // A loop variable.
          lo = std::max<i128>(full.lo, 0);
          hi = std::min<i128>(full.hi, lo + gen.Pick(64));
          break;
        case 2:
          lo = std::max<i128>(full.lo, gen.Pick(41) - 20);
          hi = std::min<i128>(full.hi, lo + gen.Pick(200));
          break;
        case 3:
          hi = full.hi - gen.Pick(4);
          lo = hi - gen.Pick(30);
          break;
        case 4:
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
      if (gen.Pick(3) && FitsInDType(t, extent)) {
        analyzer.Bind(v, Range(gen.Const(t, lo), gen.Const(t, extent)));
      } else {
        PrimExpr fact = And(LE(gen.Const(t, lo), v), LE(v, gen.Const(t, hi)));
        scopes.push_back(std::make_unique<ConstraintScope>(&analyzer, fact));
        facts.push_back(fact);
      }
    }
    DataType t = gen.RandomType();
    PrimExpr expr = gen.Gen(t, 1 + gen.Pick(4));
    PrimExpr simplified = analyzer.CanonicalSimplify(expr);
    PrimExpr again = analyzer.CanonicalSimplify(simplified);
    if (!simplified.same_as(expr)) ++changed;
    // A result the second application leaves alone comes back as the very object
    // (Context::Matches recognizes a canonical form without building it), which is what lets
    // Simplify stop after one round. (Not every result is a fixed point: a second application
    // sometimes finds more, e.g. `truncmod(i * 10 % 4, 2)` -> `i * 10 % 2` -> `0`.)
    if (tvm::ffi::StructuralEqual::Equal(again, simplified)) {
      EXPECT_TRUE(again.same_as(simplified))
          << AsText(expr) << "\n  " << AsText(simplified) << "\n  " << AsText(again);
    }
    if (iter % 16 == 0) {
      // Deterministic: the same answer from a clone.
      PrimExpr from_clone = analyzer.Clone()->CanonicalSimplify(expr);
      EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(from_clone, simplified))
          << AsText(expr) << "\n  " << AsText(simplified) << "\n  " << AsText(from_clone);
    }

    for (int p = 0; p < 12; ++p) {
      testing::Env env;
      for (const Var& v : gen.vars()) {
        VarRange r = ranges[v.get()];
        i128 x =
            gen.Pick(4) == 0 ? (gen.Pick(2) ? r.lo : r.hi) : gen.Uniform(r.sample_lo, r.sample_hi);
        env[v.get()] = x;
      }
      bool outside = false;
      auto value = EvalInput(expr, env, sem, &outside);
      if (outside) ++skipped_points;
      if (!value) continue;
      ++checked_points;
      for (const PrimExpr& result : {simplified, again}) {
        auto sv = ExactEvaluator(env, sem)(result);
        if (sv && *sv == *value) continue;
        std::ostringstream os;
        os << "CanonicalSimplify changed the value (" << t << ", "
           << (assume_no_overflow ? "assume_no_overflow" : "default")
           << " mode)\n  expr:   " << AsText(expr) << "\n  result: " << AsText(result) << " = "
           << (sv ? Str(*sv) : std::string("undefined")) << ", expected " << Str(*value)
           << "\n  point:";
        for (const Var& v : gen.vars()) os << " " << v->name_hint << "=" << Str(env.at(v.get()));
        os << "\n  ranges:";
        for (const Var& v : gen.vars()) {
          VarRange r = ranges[v.get()];
          os << " " << v->name_hint << " in [" << Str(r.lo) << ", " << Str(r.hi) << "]";
        }
        ADD_FAILURE() << os.str();
        ++failures;
        break;
      }
    }
    while (!scopes.empty()) scopes.pop_back();
  }
  std::printf(
      "[ fuzz     ] %s mode: %lld expressions, %lld points checked, %lld skipped "
      "(outside the mode's domain), %lld changed\n",
      assume_no_overflow ? "assume_no_overflow" : "default", static_cast<long long>(iter),
      static_cast<long long>(checked_points), static_cast<long long>(skipped_points),
      static_cast<long long>(changed));
  EXPECT_EQ(failures, 0);
  EXPECT_GT(checked_points, iters);
  // Most points lie inside the mode's domain.
  EXPECT_LT(skipped_points, checked_points / 4);
  // The generator must actually give the simplifier work.
  EXPECT_GT(changed, iters / 4);
}

TEST(CanonicalFuzz, Soundness) {
  RunFuzz(false, static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 20240602)),
          ItersPerMode(20000, false));
}

TEST(CanonicalFuzz, SoundnessAssumeNoOverflow) {
  RunFuzz(true, static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 20240602)) + 1,
          ItersPerMode(20000, true));
}

}  // namespace
}  // namespace tessel
