// Product bounds and the symbolic interval arithmetic that uses them (contract in
// product_bounds.h).
#include <tessel/arith/product_bounds.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tessel/ir/ops.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "arith/depth_guard.h"

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)

// ---- the fact as IR -------------------------------------------------------------------------

PrimExpr MakeProductBound(const std::vector<Var>& factors, int64_t limit) {
  if (factors.empty() || limit < 0) return PrimExpr();
  DataType t = factors[0].dtype();
  if (!t.is_int() || !t.is_scalar() || static_cast<i128>(limit) > DTypeRange(t).hi) {
    return PrimExpr();
  }
  for (const Var& v : factors) {
    if (v.dtype() != t) return PrimExpr();
  }
  PrimExpr bound = MakeConst(t, limit);
  for (size_t j = 1; j < factors.size(); ++j) bound = FloorDiv(bound, factors[j]);
  PrimExpr fact = LE(factors[0], bound);
  if (factors.size() == 1) return fact;
  PrimExpr zero = EQ(factors[1], MakeConst(t, 0));
  for (size_t j = 2; j < factors.size(); ++j) zero = Or(zero, EQ(factors[j], MakeConst(t, 0)));
  return Or(zero, fact);
}

namespace {

void Disjuncts(const PrimExpr& e, std::vector<PrimExpr>* out) {
  if (const auto* op = e.as<OrNode>()) {
    Disjuncts(op->a, out);
    Disjuncts(op->b, out);
    return;
  }
  out->push_back(e);
}

}  // namespace

std::optional<ProductBound> ParseProductBound(const PrimExpr& cond) {
  std::vector<PrimExpr> parts;
  Disjuncts(cond, &parts);
  const LENode* le = nullptr;
  std::vector<const VarNode*> zeros;
  for (const PrimExpr& p : parts) {
    if (const auto* op = p.as<LENode>()) {
      if (le) return std::nullopt;
      le = op;
    } else if (const auto* op = p.as<EQNode>()) {
      const auto* v = op->a.as<VarNode>();
      auto c = AsConstInt(op->b);
      if (!v || !c || *c != 0) return std::nullopt;
      zeros.push_back(v);
    } else {
      return std::nullopt;
    }
  }
  if (!le) return std::nullopt;
  const auto* first = le->a.as<VarNode>();
  if (!first) return std::nullopt;
  ProductBound out;
  out.factors.push_back(GetRef<Var>(first));
  // C // s_2 // ... // s_k, outermost division last.
  std::vector<Var> divisors;
  PrimExpr d = le->b;
  while (const auto* op = d.as<FloorDivNode>()) {
    const auto* v = op->b.as<VarNode>();
    if (!v) return std::nullopt;
    divisors.push_back(GetRef<Var>(v));
    d = op->a;
  }
  auto limit = AsConstInt(d);
  if (!limit || *limit < 0) return std::nullopt;
  std::reverse(divisors.begin(), divisors.end());
  // Every divisor is excused by exactly one `s == 0` disjunct.
  if (zeros.size() != divisors.size()) return std::nullopt;
  std::vector<const VarNode*> left = zeros;
  for (const Var& v : divisors) {
    auto it = std::find(left.begin(), left.end(), v.get());
    if (it == left.end()) return std::nullopt;
    left.erase(it);
  }
  for (const Var& v : divisors) out.factors.push_back(v);
  DataType t = first->dtype;
  if (!t.is_int() || !t.is_scalar()) return std::nullopt;
  for (const Var& v : out.factors) {
    if (v.dtype() != t) return std::nullopt;
  }
  out.limit = *limit;
  return out;
}

// ---- polynomials ----------------------------------------------------------------------------

namespace {

constexpr size_t kMaxTerms = 48;
constexpr size_t kMaxDegree = 6;
constexpr int kMaxExpandDepth = 16;
constexpr size_t kMaxComparisons = 32;
// Work per query (polynomial operations), so that no expression costs more than a bounded time.
constexpr int kMaxSteps = 4000;

// An atom: a variable, or an opaque subexpression with its own interval; the node identifies it.
using Mono = std::vector<const Object*>;  // sorted; empty is the constant term

struct Poly {
  std::map<Mono, i128> terms;  // no zero coefficients

  static Poly Const(i128 c) {
    Poly p;
    if (c != 0) p.terms[{}] = c;
    return p;
  }
  static Poly Atom(const Object* a) {
    Poly p;
    p.terms[{a}] = 1;
    return p;
  }
  i128 Coeff(const Mono& m) const {
    auto it = terms.find(m);
    return it == terms.end() ? 0 : it->second;
  }
};

bool Representable(i128 c) { return c > -kIntervalInf && c < kIntervalInf; }

// Adds c * m to p; false when a coefficient leaves the representable range.
bool AddTerm(Poly* p, const Mono& m, i128 c) {
  if (!Representable(c)) return false;
  i128 sum = p->Coeff(m) + c;
  if (!Representable(sum)) return false;
  if (sum == 0) {
    p->terms.erase(m);
  } else {
    p->terms[m] = sum;
  }
  return true;
}

std::optional<Poly> AddScaled(const Poly& a, const Poly& b, i128 k) {
  Poly out = a;
  for (const auto& [m, c] : b.terms) {
    if (!AddTerm(&out, m, SatMul(c, k))) return std::nullopt;
  }
  if (out.terms.size() > kMaxTerms) return std::nullopt;
  return out;
}

std::optional<Poly> Multiply(const Poly& a, const Poly& b) {
  Poly out;
  for (const auto& [ma, ca] : a.terms) {
    for (const auto& [mb, cb] : b.terms) {
      if (ma.size() + mb.size() > kMaxDegree) return std::nullopt;
      Mono m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      if (!AddTerm(&out, m, SatMul(ca, cb))) return std::nullopt;
      if (out.terms.size() > kMaxTerms) return std::nullopt;
    }
  }
  return out;
}

i128 ClampInf(i128 v) {
  return v < -kIntervalInf ? -kIntervalInf : v > kIntervalInf ? kIntervalInf : v;
}

// The value of a constant, if it is an integer constant.
std::optional<i128> IntConst(const PrimExpr& e) {
  const auto* op = e.as<IntImmNode>();
  if (!op) return std::nullopt;
  if (op->dtype.is_uint() && op->dtype.bits() == 64 && op->value < 0) {
    return static_cast<i128>(static_cast<uint64_t>(op->value));
  }
  return static_cast<i128>(op->value);
}

bool IsScalarInt(const PrimExpr& e) {
  return e.defined() && e.dtype().is_int_or_uint() && e.dtype().is_scalar();
}

// Whether e calls something that may change state or give another value each time: such a
// subexpression cannot be one atom (two occurrences may differ).
bool HasImpureCall(const PrimExpr& e) {
  bool impure = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* call = n.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      if (!op || op->effect > CallEffectKind::kReadState) impure = true;
    }
  });
  return impure;
}

}  // namespace

// ---- the extension's state --------------------------------------------------------------------

struct ProductBoundAnalyzer::State {
  struct Binding {
    Var var;
    Optional<Range> range;
    Optional<PrimExpr> value;
  };
  // `a - b + gap <= 0` (gap 1 for a strict comparison).
  struct Comparison {
    PrimExpr a, b;
    i128 gap;
  };
  std::unordered_map<const VarNode*, Binding> bindings;
  std::vector<ProductBound> products;
  std::vector<Comparison> comparisons;
  // Product bounds of two or more factors in scope: the extension answers only while this is > 0.
  int relational = 0;
  // Set while the polynomials of comparison facts are computed: refinements asked for meanwhile
  // must not use comparison facts (a fact may not vouch for its own sides).
  int no_comparisons = 0;
};

namespace {

// One question: the polynomials and intervals it computes, with a step budget.
class Query {
 public:
  Query(const ProductBoundAnalyzer::State* state, const Analyzer* parent, bool use_comparisons)
      : s_(state), parent_(parent), use_comparisons_(use_comparisons && !state->no_comparisons) {}

  // The polynomial of e's value over atoms, when no `+ - *` in e wraps; else nothing.
  std::optional<Poly> Linear(const PrimExpr& e) {
    if (!IsScalarInt(e) || !Step()) return std::nullopt;
    DepthGuard level;
    if (auto c = IntConst(e)) return Poly::Const(*c);
    if (e.as<VarNode>()) return Poly::Atom(e.get());
    DataType t = e.dtype();
    if (const auto* op = e.as<AddNode>()) return Arith(op->a, op->b, 1, t);
    if (const auto* op = e.as<SubNode>()) return Arith(op->a, op->b, -1, t);
    if (const auto* op = e.as<MulNode>()) {
      auto a = Linear(op->a);
      if (!a) return std::nullopt;
      auto b = Linear(op->b);
      if (!b) return std::nullopt;
      auto p = Multiply(*a, *b);
      if (!p || !Fits(*p, t)) return std::nullopt;
      return p;
    }
    if (const auto* op = e.as<CastNode>()) {
      // A cast that keeps every value of its source is exact.
      if (IsScalarInt(op->value)) {
        IntInterval from = DTypeRange(op->value.dtype());
        if (FitsIn(from, t)) return Linear(op->value);
      }
    }
    return Opaque(e);
  }

  // An interval of the values of p (atoms at their values), using expansion, product bounds and
  // (when enabled) comparison facts.
  IntInterval Interval(const Poly& p) {
    IntInterval best = Plain(p);
    if (!use_comparisons_ || best.is_empty()) return best;
    for (const Poly& g : ComparisonPolys()) {
      // g <= 0: p - k * g >= p for k >= 0 bounds p above, p + k * g <= p bounds it below.
      for (const auto& [m, gc] : g.terms) {
        if (m.empty()) continue;
        i128 pc = p.Coeff(m);
        if (pc == 0 || TruncModI128(pc, gc) != 0) continue;
        i128 k = TruncDivI128(pc, gc);
        if (k > 0) {
          if (auto q = AddScaled(p, g, -k)) best.hi = std::min(best.hi, Plain(*q).hi);
        } else {
          if (auto q = AddScaled(p, g, -k)) best.lo = std::max(best.lo, Plain(*q).lo);
        }
      }
    }
    return best;
  }

 private:
  bool Step() { return ++steps_ <= kMaxSteps; }

  std::optional<Poly> Arith(const PrimExpr& x, const PrimExpr& y, int sign, DataType t) {
    auto a = Linear(x);
    if (!a) return std::nullopt;
    auto b = Linear(y);
    if (!b) return std::nullopt;
    auto p = AddScaled(*a, *b, sign);
    if (!p || !Fits(*p, t)) return std::nullopt;
    return p;
  }

  bool Fits(const Poly& p, DataType t) { return FitsIn(Interval(p), t); }

  // e as one atom with an interval of its own.
  std::optional<Poly> Opaque(const PrimExpr& e) {
    if (HasImpureCall(e)) return std::nullopt;
    if (!opaque_.count(e.get())) {
      IntInterval r = DTypeRange(e.dtype());
      auto operand = [&](const PrimExpr& x) -> IntInterval {
        if (auto p = Linear(x)) return Interval(*p);
        return parent_->const_int_bound_analyzer().Eval(x);
      };
      auto divisor = [](const PrimExpr& b) { return IntConst(b).value_or(0) > 0; };
      std::optional<IntInterval> x;
      if (const auto* op = e.as<FloorDivNode>()) {
        if (divisor(op->b)) x = FloorDivInterval(operand(op->a), operand(op->b));
      } else if (const auto* op = e.as<FloorModNode>()) {
        if (divisor(op->b)) x = FloorModInterval(operand(op->a), operand(op->b));
      } else if (const auto* op = e.as<DivNode>()) {
        if (divisor(op->b)) x = TruncDivInterval(operand(op->a), operand(op->b));
      } else if (const auto* op = e.as<ModNode>()) {
        if (divisor(op->b)) x = TruncModInterval(operand(op->a), operand(op->b));
      } else if (const auto* op = e.as<MinNode>()) {
        x = MinInterval(operand(op->a), operand(op->b));
      } else if (const auto* op = e.as<MaxNode>()) {
        x = MaxInterval(operand(op->a), operand(op->b));
      }
      // Division by a positive constant and min/max never wrap.
      if (!x) x = parent_->const_int_bound_analyzer().Eval(e);
      opaque_[e.get()] = Intersect(*x, r);
      keep_.push_back(e);
    }
    return Poly::Atom(e.get());
  }

  // The interval of a leaf atom (a variable at its known bound, or an opaque subexpression).
  IntInterval AtomInterval(const Object* a) {
    auto it = opaque_.find(a);
    if (it != opaque_.end()) return it->second;
    return parent_->const_int_bound_analyzer().Eval(
        GetRef<PrimExpr>(static_cast<const PrimExprNode*>(a)));
  }

  struct SymRange {
    Poly lo, hi;
  };

  // Symbolic ends of an atom: a bound variable's range or value, expanded recursively; else the
  // atom itself.
  SymRange ExpandAtom(const Object* a, int depth) {
    auto memo = expanded_.find(a);
    if (memo != expanded_.end()) return memo->second;
    SymRange leaf{Poly::Atom(a), Poly::Atom(a)};
    const auto* v = a->IsInstance<VarNode>() ? static_cast<const VarNode*>(a) : nullptr;
    auto it = v ? s_->bindings.find(v) : s_->bindings.end();
    if (it == s_->bindings.end() || depth >= kMaxExpandDepth || active_.count(a)) return leaf;
    active_.insert(a);
    std::optional<SymRange> out;
    const auto& b = it->second;
    if (b.value) {
      if (auto p = Linear(*b.value)) out = Expand(*p, depth + 1);
    } else if (b.range) {
      auto mn = Linear((*b.range)->min);
      auto ext = mn ? Linear((*b.range)->extent) : std::nullopt;
      if (mn && ext) {
        auto emn = Expand(*mn, depth + 1);
        auto eext = Expand(*ext, depth + 1);
        if (emn && eext) {
          auto hi = AddScaled(emn->hi, eext->hi, 1);
          if (hi) hi = AddScaled(*hi, Poly::Const(1), -1);
          if (hi) out = SymRange{emn->lo, *hi};
        }
      }
    }
    active_.erase(a);
    SymRange r = out ? *out : leaf;
    expanded_[a] = r;
    return r;
  }

  // Symbolic lower and upper ends of p, every expandable atom replaced by its ends.
  std::optional<SymRange> Expand(const Poly& p, int depth) {
    SymRange out{Poly(), Poly()};
    for (const auto& [m, c] : p.terms) {
      if (!Step()) return std::nullopt;
      Poly lo, hi;
      if (m.empty()) {
        lo = hi = Poly::Const(1);
      } else {
        std::vector<SymRange> ends;
        bool nonneg = true;
        for (const Object* a : m) {
          ends.push_back(ExpandAtom(a, depth));
          // The ends are polynomials over leaf atoms already.
          if (m.size() > 1 && Numeric(ends.back().lo).lo < 0) nonneg = false;
        }
        std::optional<Poly> l = ends[0].lo, h = ends[0].hi;
        if (m.size() > 1) {
          if (nonneg) {
            // Every factor >= 0: the product grows with each of them.
            for (size_t k = 1; k < ends.size() && l && h; ++k) {
              l = Multiply(*l, ends[k].lo);
              h = Multiply(*h, ends[k].hi);
            }
          } else {
            l = h = std::nullopt;
          }
          if (!l || !h) {
            // Numerically, over the atoms' own intervals.
            IntInterval x{1, 1};
            for (const Object* a : m) x = MulInterval(x, AtomInterval(a));
            l = Poly::Const(x.lo);
            h = Poly::Const(x.hi);
            if (!Representable(x.lo) || !Representable(x.hi)) return std::nullopt;
          }
        }
        lo = *l;
        hi = *h;
      }
      auto nlo = AddScaled(out.lo, c > 0 ? lo : hi, c);
      auto nhi = AddScaled(out.hi, c > 0 ? hi : lo, c);
      if (!nlo || !nhi) return std::nullopt;
      out.lo = *nlo;
      out.hi = *nhi;
    }
    return out;
  }

  // p's interval by expansion alone (no comparison facts).
  IntInterval Plain(const Poly& p) {
    auto e = Expand(p, 0);
    if (!e) return {-kIntervalInf, kIntervalInf};
    return {Numeric(e->lo).lo, Numeric(e->hi).hi};
  }

  // The interval of a polynomial over leaf atoms.
  IntInterval Numeric(const Poly& p) {
    IntInterval sum{0, 0};
    for (const auto& [m, c] : p.terms) {
      IntInterval x = m.empty() ? IntInterval{1, 1} : MonoInterval(m);
      if (x.is_empty()) return x;
      sum = AddInterval(sum, MulInterval(x, {c, c}));
    }
    return {ClampInf(sum.lo), ClampInf(sum.hi)};
  }

  IntInterval MonoInterval(const Mono& m) {
    std::vector<IntInterval> xs;
    bool nonneg = true;
    for (const Object* a : m) {
      xs.push_back(AtomInterval(a));
      if (xs.back().is_empty()) return xs.back();
      if (xs.back().lo < 0) nonneg = false;
    }
    IntInterval x{1, 1};
    for (const IntInterval& a : xs) x = MulInterval(x, a);
    if (nonneg) x.hi = std::min(x.hi, ProductUpper(m, xs));
    return x;
  }

  // The least upper bound of the monomial (all atoms >= 0) that a product bound gives.
  i128 ProductUpper(const Mono& m, const std::vector<IntInterval>& xs) {
    i128 best = kIntervalInf;
    for (const ProductBound& f : s_->products) {
      std::vector<const Object*> rest;
      for (const Var& v : f.factors) rest.push_back(v.get());
      std::vector<size_t> common, others;
      for (size_t k = 0; k < m.size(); ++k) {
        auto it = std::find(rest.begin(), rest.end(), m[k]);
        if (it != rest.end()) {
          rest.erase(it);
          common.push_back(k);
        } else {
          others.push_back(k);
        }
      }
      if (common.empty()) continue;
      // Every factor >= 0 and the factors outside the monomial >= 1.
      i128 divisor = 1;
      bool ok = true;
      for (const Var& v : f.factors) {
        if (AtomInterval(v.get()).lo < 0) ok = false;
      }
      for (const Object* a : rest) {
        i128 lo = AtomInterval(a).lo;
        if (lo < 1) ok = false;
        divisor = SatMul(divisor, lo);
      }
      if (!ok || divisor >= kIntervalInf) continue;
      i128 bound = f.limit / divisor;
      for (size_t k : others) bound = SatMul(bound, xs[k].hi);
      best = std::min(best, bound);
    }
    return best;
  }

  // The comparison facts whose sides are exact, as `g <= 0`.
  const std::vector<Poly>& ComparisonPolys() {
    if (comparisons_) return *comparisons_;
    comparisons_.emplace();
    auto* state = const_cast<ProductBoundAnalyzer::State*>(s_);
    ++state->no_comparisons;
    Query sides(s_, parent_, false);
    for (const auto& c : s_->comparisons) {
      auto a = sides.Linear(c.a);
      auto b = a ? sides.Linear(c.b) : std::nullopt;
      if (!a || !b) continue;
      auto g = AddScaled(*a, *b, -1);
      if (g) g = AddScaled(*g, Poly::Const(c.gap), 1);
      if (g) comparisons_->push_back(*g);
    }
    --state->no_comparisons;
    // Atoms of the facts (opaque subexpressions) keep their intervals for this query.
    for (const auto& [a, x] : sides.opaque_) {
      if (!opaque_.count(a)) opaque_[a] = x;
    }
    for (const PrimExpr& e : sides.keep_) keep_.push_back(e);
    return *comparisons_;
  }

  const ProductBoundAnalyzer::State* s_;
  const Analyzer* parent_;
  bool use_comparisons_;
  int steps_ = 0;
  std::unordered_map<const Object*, IntInterval> opaque_;
  std::vector<PrimExpr> keep_;  // keeps opaque atoms alive (their nodes key opaque_)
  std::unordered_map<const Object*, SymRange> expanded_;
  std::unordered_set<const Object*> active_;
  std::optional<std::vector<Poly>> comparisons_;
};

// The comparison facts a condition states (conjunctions, negations of comparisons).
void CollectComparisons(const PrimExpr& cond, bool negate,
                        std::vector<ProductBoundAnalyzer::State::Comparison>* out) {
  if (const auto* op = cond.as<NotNode>()) return CollectComparisons(op->a, !negate, out);
  if (const auto* op = cond.as<AndNode>()) {
    if (negate) return;
    CollectComparisons(op->a, false, out);
    CollectComparisons(op->b, false, out);
    return;
  }
  if (const auto* op = cond.as<OrNode>()) {
    if (!negate) return;
    CollectComparisons(op->a, true, out);
    CollectComparisons(op->b, true, out);
    return;
  }
  auto add = [&](const PrimExpr& a, const PrimExpr& b, i128 gap) {
    if (!IsScalarInt(a) || (IntConst(a) && IntConst(b))) return;
    out->push_back({a, b, gap});
  };
  // a < b: a - b + 1 <= 0; not (a < b): b - a <= 0.
  if (const auto* op = cond.as<LTNode>())
    return negate ? add(op->b, op->a, 0) : add(op->a, op->b, 1);
  if (const auto* op = cond.as<LENode>())
    return negate ? add(op->b, op->a, 1) : add(op->a, op->b, 0);
  if (const auto* op = cond.as<GTNode>())
    return negate ? add(op->a, op->b, 0) : add(op->b, op->a, 1);
  if (const auto* op = cond.as<GENode>())
    return negate ? add(op->a, op->b, 1) : add(op->b, op->a, 0);
  const auto* eq = cond.as<EQNode>();
  const auto* ne = cond.as<NENode>();
  if ((eq && !negate) || (ne && negate)) {
    PrimExpr a = eq ? eq->a : ne->a, b = eq ? eq->b : ne->b;
    add(a, b, 0);
    add(b, a, 0);
  }
}

// Product bounds stated by a condition or its conjuncts.
void CollectProducts(const PrimExpr& cond, std::vector<ProductBound>* out) {
  if (const auto* op = cond.as<AndNode>()) {
    CollectProducts(op->a, out);
    CollectProducts(op->b, out);
    return;
  }
  if (auto p = ParseProductBound(cond)) out->push_back(*p);
}

}  // namespace

// ---- the extension --------------------------------------------------------------------------

ProductBoundAnalyzer::ProductBoundAnalyzer(Analyzer* parent)
    : parent_(parent), state_(std::make_unique<State>()) {
  Install();
}

ProductBoundAnalyzer::~ProductBoundAnalyzer() {
  parent_->const_int_bound_analyzer().SetRefiner(nullptr);
}

void ProductBoundAnalyzer::Install() {
  parent_->const_int_bound_analyzer().SetRefiner(
      [this](const PrimExprNode* op) -> std::optional<IntInterval> {
        if (state_->relational == 0) return std::nullopt;
        return ExactBound(GetRef<PrimExpr>(op));
      });
}

std::unique_ptr<AnalyzerExtension> ProductBoundAnalyzer::Clone(Analyzer* parent) const {
  auto copy = std::make_unique<ProductBoundAnalyzer>(parent);
  *copy->state_ = *state_;
  copy->state_->no_comparisons = 0;
  parent->const_int_bound_analyzer().Invalidate();
  return copy;
}

void ProductBoundAnalyzer::OnBind(const Var& var, const Optional<Range>& range,
                                  const Optional<PrimExpr>& value) {
  state_->bindings[var.get()] = State::Binding{var, range, value};
}

std::function<void()> ProductBoundAnalyzer::EnterConstraint(const PrimExpr& constraint) {
  std::vector<ProductBound> products;
  CollectProducts(constraint, &products);
  std::vector<State::Comparison> comparisons;
  CollectComparisons(constraint, false, &comparisons);
  if (products.empty() && comparisons.empty()) return nullptr;
  size_t old_products = state_->products.size();
  size_t old_comparisons = state_->comparisons.size();
  int old_relational = state_->relational;
  for (ProductBound& p : products) {
    if (p.factors.size() >= 2) ++state_->relational;
    state_->products.push_back(std::move(p));
  }
  for (auto& c : comparisons) {
    if (state_->comparisons.size() >= kMaxComparisons) break;
    state_->comparisons.push_back(std::move(c));
  }
  if (state_->relational) parent_->const_int_bound_analyzer().Invalidate();
  State* s = state_.get();
  Analyzer* parent = parent_;
  return [s, parent, old_products, old_comparisons, old_relational]() {
    bool was_active = s->relational > 0;
    s->products.resize(old_products);
    s->comparisons.resize(old_comparisons);
    s->relational = old_relational;
    if (was_active) parent->const_int_bound_analyzer().Invalidate();
  };
}

std::optional<IntInterval> ProductBoundAnalyzer::ExactBound(const PrimExpr& e) {
  if (state_->relational == 0 || !IsScalarInt(e)) return std::nullopt;
  Query q(state_.get(), parent_, true);
  auto p = q.Linear(e);
  if (!p) return std::nullopt;
  IntInterval x = q.Interval(*p);
  if (!FitsIn(x, e.dtype())) return std::nullopt;
  return x;
}

ProofResult ProductBoundAnalyzer::TryProve(const PrimExpr& cond, ProofStrength strength) {
  if (state_->relational == 0 || !cond.defined()) return ProofResult::kUnknown;
  if (const auto* op = cond.as<NotNode>()) {
    ProofResult r = TryProve(op->a, strength);
    if (r == ProofResult::kProved) return ProofResult::kDisproved;
    if (r == ProofResult::kDisproved) return ProofResult::kProved;
    return r;
  }
  if (const auto* op = cond.as<AndNode>()) {
    ProofResult a = TryProve(op->a, strength);
    if (a == ProofResult::kDisproved) return a;
    ProofResult b = TryProve(op->b, strength);
    if (b == ProofResult::kDisproved) return b;
    return a == ProofResult::kProved && b == ProofResult::kProved ? a : ProofResult::kUnknown;
  }
  if (const auto* op = cond.as<OrNode>()) {
    ProofResult a = TryProve(op->a, strength);
    if (a == ProofResult::kProved) return a;
    ProofResult b = TryProve(op->b, strength);
    if (b == ProofResult::kProved) return b;
    return a == ProofResult::kDisproved && b == ProofResult::kDisproved ? a : ProofResult::kUnknown;
  }
  // lhs - rhs, and what must hold of it: < 0 (strict) or <= 0, == 0, != 0.
  PrimExpr lhs, rhs;
  enum { kLess, kLessEq, kEq, kNe } kind;
  if (const auto* op = cond.as<LTNode>()) {
    lhs = op->a, rhs = op->b, kind = kLess;
  } else if (const auto* op = cond.as<LENode>()) {
    lhs = op->a, rhs = op->b, kind = kLessEq;
  } else if (const auto* op = cond.as<GTNode>()) {
    lhs = op->b, rhs = op->a, kind = kLess;
  } else if (const auto* op = cond.as<GENode>()) {
    lhs = op->b, rhs = op->a, kind = kLessEq;
  } else if (const auto* op = cond.as<EQNode>()) {
    lhs = op->a, rhs = op->b, kind = kEq;
  } else if (const auto* op = cond.as<NENode>()) {
    lhs = op->a, rhs = op->b, kind = kNe;
  } else {
    return ProofResult::kUnknown;
  }
  if (!IsScalarInt(lhs)) return ProofResult::kUnknown;
  Query q(state_.get(), parent_, true);
  auto a = q.Linear(lhs);
  auto b = a ? q.Linear(rhs) : std::nullopt;
  if (!a || !b) return ProofResult::kUnknown;
  auto d = AddScaled(*a, *b, -1);
  if (!d) return ProofResult::kUnknown;
  IntInterval x = q.Interval(*d);
  if (x.is_empty()) return ProofResult::kProved;
  switch (kind) {
    case kLess:
      if (x.hi <= -1) return ProofResult::kProved;
      if (x.lo >= 0) return ProofResult::kDisproved;
      break;
    case kLessEq:
      if (x.hi <= 0) return ProofResult::kProved;
      if (x.lo >= 1) return ProofResult::kDisproved;
      break;
    case kEq:
      if (x.lo == 0 && x.hi == 0) return ProofResult::kProved;
      if (x.lo > 0 || x.hi < 0) return ProofResult::kDisproved;
      break;
    case kNe:
      if (x.lo > 0 || x.hi < 0) return ProofResult::kProved;
      if (x.lo == 0 && x.hi == 0) return ProofResult::kDisproved;
      break;
  }
  return ProofResult::kUnknown;
}

TESSEL_REGISTER_ANALYZER_EXTENSION([](Analyzer* parent) -> std::unique_ptr<AnalyzerExtension> {
  return std::make_unique<ProductBoundAnalyzer>(parent);
});

}  // namespace arith
}  // namespace tessel
