// Soundness fuzzer for Analyzer::Simplify and CanProve with the rewrite simplifier in place:
// random index-style integer and bool expressions over variables of several dtypes, random
// bindings and constraint scopes; on random points that satisfy the facts the simplified
// expression (Simplify's, and RewriteSimplify's and CanonicalSimplify's alone) must have the
// original's value, and every proved condition must hold.
//
// It runs in both overflow modes of the analyzer. In assume_no_overflow mode the values are those
// of the mode's semantics (int32/int64 arithmetic is exact, testing::Semantics), and a point at
// which an int32/int64 operation of the input leaves its dtype is outside the mode's domain and
// skipped; values are drawn smaller there so that most points are in it.
//
// TESSEL_FUZZ_ITERS sets the number of expressions (default 20000, half in each mode),
// TESSEL_FUZZ_SEED the seed.
// Counterexamples it found are kept as regression tests at the end of this file.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
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

// Index arithmetic as tiling and fusing produce it: sums of products with constants, floor and
// truncating division and remainder by constants, min/max, selects and comparisons.
class Generator {
 public:
  // small: the values for assume_no_overflow mode (int32/int64 constants near the dtype's ends
  // are rarer, so that fewer operations leave the dtype).
  Generator(uint64_t seed, bool small) : rng_(seed), small_(small) {
    for (DataType t : types_) {
      for (const char* n : {"x", "y", "z"}) vars_.push_back(Var(std::string(n) + "_" + t.str(), t));
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

  i128 Constant(DataType t) {
    IntInterval r = DTypeRange(t);
    int64_t kind = Pick(8);
    if (small_ && NoOverflowType(t) && kind < 3 && Pick(2)) kind = 3;
    switch (kind) {
      case 0:
        return r.lo + Pick(2);
      case 1:
        return r.hi - Pick(2);
      case 2:
        return std::min<i128>(r.hi, static_cast<i128>(1) << Pick(
                                        small_ && NoOverflowType(t) ? t.bits() / 2 : t.bits()));
      default:
        return std::max<i128>(r.lo, std::min<i128>(r.hi, Pick(33) - 16));
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
    if (depth > 0 && Pick(4) == 0) {
      PrimExpr a = Cond(t, depth - 1), b = Cond(t, depth - 1);
      switch (Pick(3)) {
        case 0:
          return And(a, b);
        case 1:
          return Or(a, b);
        default:
          return Not(a);
      }
    }
    PrimExpr a = Gen(t, depth), b = Pick(2) ? Leaf(t) : Gen(t, depth);
    switch (Pick(6)) {
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
      default:
        return GE(a, b);
    }
  }

  PrimExpr Gen(DataType t, int depth) {
    if (depth <= 0 || Pick(5) == 0) return Leaf(t);
    auto sub = [&]() { return Gen(t, depth - 1); };
    auto konst = [&]() { return Const(t, Constant(t)); };
    switch (Pick(16)) {
      case 0:
      case 1:
        return Add(sub(), Pick(2) ? sub() : konst());
      case 2:
        return Sub(sub(), Pick(2) ? sub() : konst());
      case 3:
      case 4:
        return Mul(sub(), Pick(3) ? konst() : sub());
      case 5:
        return FloorDiv(sub(), Pick(4) ? konst() : sub());
      case 6:
        return FloorMod(sub(), Pick(4) ? konst() : sub());
      case 7:
        return Div(sub(), Pick(4) ? konst() : sub());
      case 8:
        return Mod(sub(), Pick(4) ? konst() : sub());
      case 9:
        return Min(sub(), Pick(2) ? sub() : konst());
      case 10:
        return Max(sub(), Pick(2) ? sub() : konst());
      case 11:
        return Select(Cond(t, depth - 1), sub(), sub());
      case 12: {
        // The split-and-fuse shape: (e // c) * c + e % c and friends.
        PrimExpr e = sub(), c = konst();
        return Add(Mul(FloorDiv(e, c), c), Pick(2) ? FloorMod(e, c) : sub());
      }
      case 13:
        return Add(Mul(sub(), konst()), sub());
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

struct Report {
  int failures = 0;
  int64_t points = 0, skipped = 0, proofs = 0, changed = 0;
};

// The span that values of t are drawn from: the whole dtype, or for int32/int64 in
// assume_no_overflow mode [-2^(bits/2 - 1), 2^(bits/2 - 1)], so that a product of two fits.
IntInterval Span(DataType t, bool small) {
  if (!small || !NoOverflowType(t)) return DTypeRange(t);
  i128 h = static_cast<i128>(1) << (t.bits() / 2 - 1);
  return {-h, h};
}

// Z3 is in the loop for one expression in kZ3Every; the rest check the cheap methods alone, which
// keeps the default run fast (a failed proof costs milliseconds in Z3).
constexpr int64_t kZ3Every = 20;

// check_proofs: also ask CanProve about conditions on the expression and check the proved ones.
void FuzzOne(Generator& gen, bool with_z3, bool assume_no_overflow, bool check_proofs,
             Report* out) {
  const Semantics sem = testing::SemanticsOf(assume_no_overflow);
  Analyzer analyzer;
  analyzer.SetAssumeNoOverflow(assume_no_overflow);
  if (!with_z3) analyzer.RemoveExtension("z3");
  std::vector<std::unique_ptr<ConstraintScope>> scopes;
  std::vector<PrimExpr> facts;
  std::unordered_map<const VarNode*, VarRange> ranges;
  for (const Var& v : gen.vars()) {
    DataType t = v.dtype();
    IntInterval full = DTypeRange(t);
    i128 lo = full.lo, hi = full.hi;
    switch (gen.Pick(4)) {
      case 0:
        break;
      case 1:
        lo = std::max<i128>(full.lo, gen.Pick(21) - 10);
        hi = std::min<i128>(full.hi, lo + gen.Pick(64));
        break;
      case 2:
        hi = full.hi - gen.Pick(4);
        lo = hi - gen.Pick(30);
        break;
      default:
        lo = std::max<i128>(full.lo, 0);
        hi = std::min<i128>(full.hi, lo + gen.Pick(1024));
    }
    // An unbound variable's points are drawn from the span (and its ends are the dtype's).
    bool unbound = lo == full.lo && hi == full.hi;
    IntInterval span = Span(t, assume_no_overflow);
    ranges[v.get()] = {lo, hi, unbound ? span.lo : lo, unbound ? span.hi : hi};
    if (unbound) continue;
    i128 extent = hi - lo + 1;
    if (gen.Pick(2) && FitsInDType(t, extent)) {
      analyzer.Bind(v, Range(gen.Const(t, lo), gen.Const(t, extent)));
      facts.push_back(And(LE(gen.Const(t, lo), v), LE(v, gen.Const(t, hi))));
    } else {
      PrimExpr fact = And(LE(gen.Const(t, lo), v), LE(v, gen.Const(t, hi)));
      scopes.push_back(std::make_unique<ConstraintScope>(&analyzer, fact));
      facts.push_back(fact);
    }
  }
  DataType t = gen.RandomType();
  bool boolean = gen.Pick(3) == 0;
  PrimExpr expr = boolean ? gen.Cond(t, 1 + gen.Pick(3)) : gen.Gen(t, 1 + gen.Pick(4));
  PrimExpr simplified = analyzer.Simplify(expr);
  PrimExpr rewritten = analyzer.RewriteSimplify(expr);
  PrimExpr canonical = analyzer.CanonicalSimplify(expr);
  if (!simplified.same_as(expr)) ++out->changed;
  std::vector<PrimExpr> proved;
  std::vector<PrimExpr> conds;
  if (boolean) {
    conds = {expr, Not(expr)};
  } else {
    PrimExpr c = gen.Const(t, gen.Constant(t));
    conds = {LT(expr, c),
             GE(expr, c),
             EQ(expr, c),
             NE(expr, c),
             EQ(FloorMod(expr, gen.Const(t, 4)), gen.Const(t, 0)),
             gen.Cond(t, 1)};
  }
  for (const PrimExpr& cond : conds) {
    if (check_proofs && analyzer.CanProve(cond)) proved.push_back(cond);
  }
  out->proofs += proved.size();

  auto report = [&](const std::string& what, const testing::Env& env) {
    std::ostringstream os;
    os << what << "\n  mode: " << (assume_no_overflow ? "assume_no_overflow" : "default")
       << "\n  expr: " << AsText(expr) << " (" << expr.dtype()
       << ")\n  simplified: " << AsText(simplified) << "\n  rewritten: " << AsText(rewritten)
       << "\n  canonical: " << AsText(canonical) << "\n  point:";
    for (const Var& v : gen.vars()) os << " " << v->name_hint << "=" << Str(env.at(v.get()));
    os << "\n  facts:";
    for (const PrimExpr& f : facts) os << " [" << AsText(f) << "]";
    ADD_FAILURE() << os.str();
    ++out->failures;
  };

  for (int p = 0; p < 10; ++p) {
    testing::Env env;
    for (const Var& v : gen.vars()) {
      VarRange r = ranges[v.get()];
      env[v.get()] =
          gen.Pick(4) == 0 ? (gen.Pick(2) ? r.lo : r.hi) : gen.Uniform(r.sample_lo, r.sample_hi);
    }
    bool outside = false;
    auto value = EvalInput(expr, env, sem, &outside);
    if (outside) ++out->skipped;
    if (value) {
      ++out->points;
      // The stages alone first: a wrong Simplify result is then blamed on the stage that made it.
      for (const auto& [name, result] :
           {std::pair<const char*, PrimExpr>{"RewriteSimplify", rewritten},
            {"CanonicalSimplify", canonical},
            {"Simplify", simplified}}) {
        auto sv = ExactEvaluator(env, sem)(result);
        if (!sv || *sv != *value) {
          report(std::string(name) + " changed the value: gives " +
                     (sv ? Str(*sv) : std::string("undefined")) + ", expected " + Str(*value),
                 env);
          return;
        }
      }
    }
    for (const PrimExpr& cond : proved) {
      bool cond_outside = false;
      auto cv = EvalInput(cond, env, sem, &cond_outside);
      if (cv && !*cv) {
        report("CanProve accepted a false fact: " + AsText(cond) +
                   testing::SimplifiedOverflowNote(&analyzer, cond, env),
               env);
        return;
      }
    }
  }
  while (!scopes.empty()) scopes.pop_back();
}

void RunFuzz(bool assume_no_overflow, bool check_proofs, uint64_t seed, int64_t iters) {
  Generator gen(seed, assume_no_overflow);
  Report report;
  int64_t iter = 0;
  for (; iter < iters && report.failures < 10; ++iter) {
    FuzzOne(gen, iter % kZ3Every == 0, assume_no_overflow, check_proofs, &report);
  }
  std::printf(
      "[ fuzz     ] %s mode: %lld expressions, %lld points checked, %lld skipped "
      "(outside the mode's domain), %lld proofs, %lld changed\n",
      assume_no_overflow ? "assume_no_overflow" : "default", static_cast<long long>(iter),
      static_cast<long long>(report.points), static_cast<long long>(report.skipped),
      static_cast<long long>(report.proofs), static_cast<long long>(report.changed));
  EXPECT_EQ(report.failures, 0);
  EXPECT_GT(report.points, iters);
  // Most points lie inside the mode's domain.
  EXPECT_LT(report.skipped, report.points / 4);
  if (check_proofs) EXPECT_GT(report.proofs, 0);
  // The simplifier must have done something on a fair share of the corpus.
  EXPECT_GT(report.changed, iters / 10);
}

TEST(SimplifyFuzz, Soundness) {
  RunFuzz(false, /*check_proofs=*/true,
          static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 31337)),
          ItersPerMode(20000, false));
}

// The values of the simplified expressions in assume_no_overflow mode. (Proofs: below.)
TEST(SimplifyFuzz, SoundnessAssumeNoOverflow) {
  RunFuzz(true, /*check_proofs=*/false,
          static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 31337)) + 1,
          ItersPerMode(20000, true));
}

// The same expressions as SoundnessAssumeNoOverflow, and the conditions CanProve accepts about
// them. Skipped while the mode has known wrong proofs (overflow_mode_test.cc,
// RegressionProofFromTheSimplifiedForm and RegressionRewriteDecidesFromItsOwnOverflow: the
// analyzer reasons about operations that a simplification made, which may overflow where the
// input's do not). At the default seed it fails on the first case of
// RegressionProofFromTheSimplifiedForm. Remove the GTEST_SKIP with those tests'.
TEST(SimplifyFuzz, ProofsAssumeNoOverflow) {
  RunFuzz(true, /*check_proofs=*/true,
          static_cast<uint64_t>(testing::EnvInt("TESSEL_FUZZ_SEED", 31337)) + 1,
          ItersPerMode(20000, true));
}

}  // namespace
}  // namespace tessel
