// A seeded fuzzer of the iterator-map detector (iter_map.h). Bindings are made affine by
// construction, as a schedule makes them: random split (by a dividing factor) and fuse steps over
// loops of random small extents, substituted into the bindings. They must be detected as
// bijective; the same bindings with one repeated (an iterator used twice) must be refused; and
// the detected form, evaluated both as its IterSumExpr structure and through
// NormalizeIterMapToExpr, must equal the binding at every point of the (small) domain, with the
// bijective claim checked by enumerating the values. TESSEL_FUZZ_ITERS / TESSEL_FUZZ_SEED.
#include <gtest/gtest.h>
#include <tessel/arith/iter_map.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <random>
#include <set>
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
using testing::i128;

class Subst : public ExprMutator {
 public:
  explicit Subst(std::unordered_map<const VarNode*, PrimExpr> m) : m_(std::move(m)) {}
  using ExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = m_.find(op);
    return it == m_.end() ? GetRef<PrimExpr>(op) : it->second;
  }

 private:
  std::unordered_map<const VarNode*, PrimExpr> m_;
};

i128 Eval(const PrimExpr& e, const Env& env) {
  auto v = testing::ExactEvaluator(env)(e);
  EXPECT_TRUE(v.has_value()) << AsText(e);
  return v.value_or(0);
}

i128 EvalSum(const IterSumExpr& sum, const Env& env);
i128 EvalMark(const IterMark& mark, const Env& env) {
  if (auto s = mark->source.as<IterSumExpr>()) return EvalSum(*s, env);
  return Eval(*mark->source.as<PrimExpr>(), env);
}
i128 EvalSum(const IterSumExpr& sum, const Env& env) {
  i128 v = Eval(sum->base, env);
  for (const IterSplitExpr& s : sum->args) {
    i128 m = EvalMark(s->source, env);
    i128 q = testing::FloorDivExact(m, Eval(s->lower_factor, env));
    i128 ext = Eval(s->extent, env);
    EXPECT_GT(ext, 0) << "a split of extent " << AsText(s->extent);
    if (ext <= 0) return 0;
    i128 r = q - testing::FloorDivExact(q, ext) * ext;
    v += r * Eval(s->scale, env);
  }
  return v;
}

struct Loop {
  Var var;
  int64_t extent;
};

TEST(IterMapFuzz, AffineByConstructionAndRefusals) {
  int64_t iters = testing::EnvInt("TESSEL_FUZZ_ITERS", 400);
  std::mt19937_64 rng(testing::EnvInt("TESSEL_FUZZ_SEED", 20240611));
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  const int64_t kExtents[] = {2, 3, 4, 6, 8, 12};
  int detected = 0, refused = 0, points = 0;
  for (int64_t it = 0; it < iters; ++it) {
    std::vector<Loop> loops;
    std::vector<PrimExpr> bindings;
    int n = 1 + pick(3);
    for (int k = 0; k < n; ++k) {
      Var v("v" + std::to_string(k));
      loops.push_back({v, kExtents[pick(6)]});
      bindings.push_back(v);
    }
    std::string trace;
    int steps = 1 + pick(4);
    int fresh = 0;
    for (int s = 0; s < steps; ++s) {
      if (pick(2) == 0 || loops.size() < 2) {
        // split a loop by a dividing factor
        size_t l = pick(loops.size());
        std::vector<int64_t> factors;
        for (int64_t f = 2; f < loops[l].extent; ++f) {
          if (loops[l].extent % f == 0) factors.push_back(f);
        }
        if (factors.empty()) continue;
        int64_t f = factors[pick(factors.size())];
        Var lo("o" + std::to_string(fresh)), li("i" + std::to_string(fresh));
        ++fresh;
        Subst sub({{loops[l].var.get(), lo * static_cast<int>(f) + li}});
        for (auto& b : bindings) b = sub(b);
        trace += " split(" + std::string(loops[l].var->name_hint) + "," + std::to_string(f) + ")";
        Loop outer{lo, loops[l].extent / f}, inner{li, f};
        loops[l] = outer;
        loops.insert(loops.begin() + l + 1, inner);
      } else {
        // fuse two loops (any two, in either order)
        size_t a = pick(loops.size()), b = pick(loops.size());
        if (a == b) continue;
        Var c("f" + std::to_string(fresh++));
        int64_t eb = loops[b].extent;
        Subst sub({{loops[a].var.get(), floordiv(c, static_cast<int>(eb))},
                   {loops[b].var.get(), floormod(c, static_cast<int>(eb))}});
        for (auto& x : bindings) x = sub(x);
        trace += " fuse(" + std::string(loops[a].var->name_hint) + "," +
                 std::string(loops[b].var->name_hint) + ")";
        Loop fused{c, loops[a].extent * eb};
        size_t lo = std::min(a, b), hi = std::max(a, b);
        loops.erase(loops.begin() + hi);
        loops.erase(loops.begin() + lo);
        loops.insert(loops.begin() + lo, fused);
      }
    }
    Map<Var, Range> dom;
    int64_t total = 1;
    for (const Loop& l : loops) {
      dom.Set(l.var, Range(0, static_cast<int>(l.extent)));
      total *= l.extent;
    }
    Array<PrimExpr> idx(bindings.begin(), bindings.end());
    std::string what;
    for (const auto& b : bindings) what += AsText(b) + ", ";
    IterMapResult r = DetectIterMap(idx, dom, Bool(true), IterMapLevel::kBijective);
    std::string errs;
    for (const auto& e : r.errors) errs += std::string(e) + "; ";
    EXPECT_TRUE(r.ok()) << "not detected:" << trace << " -> " << what << " errors: " << errs;
    // An iterator used twice: refused at both levels.
    Array<PrimExpr> twice = idx;
    twice.push_back(idx[pick(idx.size())]);
    for (IterMapLevel level : {IterMapLevel::kBijective, IterMapLevel::kSurjective}) {
      bool ok = DetectIterMap(twice, dom, Bool(true), level).ok();
      EXPECT_FALSE(ok) << "a repeated binding accepted:" << trace << " -> " << what;
      refused += !ok;
    }
    if (!r.ok()) continue;
    ++detected;
    std::vector<PrimExpr> normalized;
    for (const IterSumExpr& s : r.indices) normalized.push_back(NormalizeIterMapToExpr(s));
    // Every point of the domain: values equal, and all tuples distinct (bijective).
    std::set<std::vector<int64_t>> seen;
    std::vector<int64_t> at(loops.size(), 0);
    for (int64_t p = 0; p < total; ++p) {
      Env env;
      int64_t rest = p;
      for (size_t k = 0; k < loops.size(); ++k) {
        env[loops[k].var.get()] = rest % loops[k].extent;
        rest /= loops[k].extent;
      }
      std::vector<int64_t> tuple;
      for (size_t i = 0; i < bindings.size(); ++i) {
        i128 want = Eval(bindings[i], env);
        ASSERT_EQ(static_cast<int64_t>(EvalSum(r.indices[i], env)), static_cast<int64_t>(want))
            << "structure wrong at point " << p << ":" << trace << " -> " << what;
        ASSERT_EQ(static_cast<int64_t>(Eval(normalized[i], env)), static_cast<int64_t>(want))
            << "normalized " << AsText(normalized[i]) << " wrong:" << trace << " -> " << what;
        tuple.push_back(static_cast<int64_t>(want));
      }
      seen.insert(tuple);
      ++points;
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), total) << "not injective:" << trace;
  }
  std::cout << "iter map fuzz: " << detected << " of " << iters << " detected, " << refused
            << " repeated-binding refusals, " << points << " points checked\n";
}

// Random expressions that are not affine by construction: whatever is detected must be right.
TEST(IterMapFuzz, RandomExpressionsSound) {
  int64_t iters = testing::EnvInt("TESSEL_FUZZ_ITERS", 400) * 5;
  std::mt19937_64 rng(testing::EnvInt("TESSEL_FUZZ_SEED", 20240611) + 1);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  Var x("x"), y("y");
  int detected = 0;
  for (int64_t it = 0; it < iters; ++it) {
    int64_t ex = 2 + pick(11), ey = 2 + pick(7);
    std::function<PrimExpr(int)> gen = [&](int depth) -> PrimExpr {
      if (depth == 0 || pick(3) == 0) {
        int k = pick(3);
        return k == 0 ? PrimExpr(x) : k == 1 ? PrimExpr(y) : PrimExpr(static_cast<int>(pick(5)));
      }
      PrimExpr a = gen(depth - 1);
      int c = 1 + static_cast<int>(pick(9));
      switch (pick(5)) {
        case 0:
          return a + gen(depth - 1);
        case 1:
          return a * c;
        case 2:
          return floordiv(a, c);
        case 3:
          return floormod(a, c);
        default:
          return a - gen(depth - 1);
      }
    };
    PrimExpr e = gen(3);
    Map<Var, Range> dom;
    dom.Set(x, Range(0, static_cast<int>(ex)));
    dom.Set(y, Range(0, static_cast<int>(ey)));
    IterMapLevel level = pick(2) ? IterMapLevel::kSurjective : IterMapLevel::kNoCheck;
    IterMapResult r = DetectIterMap({e}, dom, Bool(true), level);
    if (!r.ok()) continue;
    ++detected;
    PrimExpr norm = NormalizeIterMapToExpr(r.indices[0]);
    for (int64_t a = 0; a < ex; ++a) {
      for (int64_t b = 0; b < ey; ++b) {
        Env env{{x.get(), a}, {y.get(), b}};
        i128 want = Eval(e, env);
        ASSERT_EQ(static_cast<int64_t>(EvalSum(r.indices[0], env)), static_cast<int64_t>(want))
            << AsText(e) << " with x in [0, " << ex << "), y in [0, " << ey << ") at (" << a << ", "
            << b << ")";
        ASSERT_EQ(static_cast<int64_t>(Eval(norm, env)), static_cast<int64_t>(want))
            << AsText(e) << " normalized " << AsText(norm) << " at (" << a << ", " << b << ")";
      }
    }
  }
  std::cout << "iter map random expressions: " << detected << " of " << iters << " detected\n";
}

}  // namespace
}  // namespace tessel
