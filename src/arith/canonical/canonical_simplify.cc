// The canonical simplifier's rules: how each integer operator combines sums (sum_form.h), the
// floordiv/floormod rules of tiled index arithmetic, and the fusion of split terms
// (`(x // 8) * 8 + x % 8` -> `x`). The soundness argument of each rule is next to it; the
// representation's contract (ring value, exactness, actual values of atoms) is in sum_form.h.
#include <tessel/arith/canonical_simplify.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <utility>

#include "arith/canonical/sum_form.h"
#include "arith/depth_guard.h"
#include "arith/expr_walk.h"
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)
using canonical::Atom;
using canonical::Context;
using canonical::Sum;
using canonical::Term;
using canonical::Wrap;

namespace {

bool IsIndexType(DataType t) { return t.is_scalar() && t.is_int_or_uint(); }

bool IsArith(ExprKind k) {
  switch (k) {
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      return true;
    default:
      return false;
  }
}

// The value of an IR constant of dtype t whose representative is rep.
i128 ActualConst(DataType t, int64_t rep) {
  if (t.is_uint() && rep < 0) return static_cast<i128>(rep) + (static_cast<i128>(1) << t.bits());
  return rep;
}

class Canonicalizer : public ExprMutator {
 public:
  explicit Canonicalizer(Analyzer* analyzer) : ctx_(analyzer) {}

  bool saw_impure() const { return impure_calls_ > 0; }

  PrimExpr VisitExpr(const PrimExpr& e) final {
    if (IsIndexType(e.dtype()) && IsArith(KindOf(e.get()))) {
      // Already canonical (the common case): e itself, with nothing built.
      return ctx_.ToExprOr(Canon(e), e);
    }
    DepthGuard level;
    return ExprMutator::VisitExpr(e);
  }

  using ExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const CallNode* op) final {
    const auto* f = op->op.as<OpNode>();
    if (!f || f->effect > CallEffectKind::kReadState) ++impure_calls_;
    return ExprMutator::VisitExpr_(op);
  }

 private:
  Sum Canon(const PrimExpr& e) {
    DataType t = e.dtype();
    ExprKind kind = KindOf(e.get());
    if (kind == ExprKind::kVar || kind == ExprKind::kSizeVar) {
      return Context::OfAtom(t, ctx_.VarAtom(static_cast<const VarNode*>(e.get())));
    }
    DepthGuard level;  // past the leaves: only where the walk may descend
    switch (kind) {
      case ExprKind::kIntImm:
        return Context::Constant(t, e.as<IntImmNode>()->value);
      case ExprKind::kVar:
      case ExprKind::kSizeVar:
        return Context::OfAtom(t, ctx_.VarAtom(static_cast<const VarNode*>(e.get())));
      case ExprKind::kAdd: {
        const auto* op = e.as<AddNode>();
        Sum s = Canon(op->a);
        ctx_.AddTo(&s, Canon(op->b), 1);
        Fuse(&s);
        return s;
      }
      case ExprKind::kSub: {
        const auto* op = e.as<SubNode>();
        Sum s = Canon(op->a);
        ctx_.AddTo(&s, Canon(op->b), -1);
        Fuse(&s);
        return s;
      }
      case ExprKind::kMul: {
        const auto* op = e.as<MulNode>();
        Sum a = Canon(op->a), b = Canon(op->b);
        if (std::optional<Sum> m = ctx_.Multiply(a, b)) {
          Fuse(&*m);
          return *m;
        }
        // A product of two sums stays a product (expanding it would rarely help and can blow up).
        if (ctx_.CompareSums(a, b) > 0) std::swap(a, b);
        return Opaque(Mul(ctx_.ToExpr(a), ctx_.ToExpr(b)));
      }
      case ExprKind::kFloorDiv: {
        const auto* op = e.as<FloorDivNode>();
        return FloorDivide(Canon(op->a), Canon(op->b));
      }
      case ExprKind::kFloorMod: {
        const auto* op = e.as<FloorModNode>();
        return FloorModulo(Canon(op->a), Canon(op->b));
      }
      case ExprKind::kDiv: {
        const auto* op = e.as<DivNode>();
        Sum a = Canon(op->a), b = Canon(op->b);
        // Truncation equals flooring for a non-negative dividend and a positive divisor.
        if (b.is_const() && ActualConst(t, b.constant) > 0 && ctx_.ActualBound(a).lo >= 0) {
          return FloorDivide(std::move(a), std::move(b));
        }
        return Opaque(Div(ctx_.ToExpr(a), ctx_.ToExpr(b)));
      }
      case ExprKind::kMod: {
        const auto* op = e.as<ModNode>();
        Sum a = Canon(op->a), b = Canon(op->b);
        if (b.is_const() && ActualConst(t, b.constant) > 0 && ctx_.ActualBound(a).lo >= 0) {
          return FloorModulo(std::move(a), std::move(b));
        }
        return Opaque(Mod(ctx_.ToExpr(a), ctx_.ToExpr(b)));
      }
      default:
        return Opaque(ExprMutator::VisitExpr(e));
    }
  }

  // An expression the sum form does not look into (its children are already canonical).
  Sum Opaque(const PrimExpr& e) {
    return Context::OfAtom(e.dtype(), ctx_.ExprAtom(e, impure_calls_ == 0));
  }

  // The constant divisor of a division, when it is one (its value, not its representative).
  static std::optional<i128> ConstDivisor(const Sum& d) {
    if (!d.is_const()) return std::nullopt;
    return ActualConst(d.dtype, d.constant);
  }

  Sum FloorDivide(Sum a, Sum b) {
    DataType t = a.dtype;
    std::optional<i128> c = ConstDivisor(b);
    // Division by zero is the program's to keep; negative divisors are left as written.
    if (!c || *c <= 0) return Opaque(FloorDiv(ctx_.ToExpr(a), ctx_.ToExpr(b)));
    if (*c == 1) return a;
    if (a.is_const()) return Context::Constant(t, FloorDivI128(ActualConst(t, a.constant), *c));
    // Splitting off multiples of c reasons about the value: only for an exact dividend.
    if (!ctx_.Exact(a)) return Context::OfAtom(t, ctx_.SplitAtom(a, *c, 0));
    // a = c * q + r  =>  a // c = q + r // c (exact integers).
    Sum q, r;
    SplitMultiples(a, *c, &q, &r);
    q.constant = Wrap(FloorDivI128(a.constant, *c), t.bits());
    i128 rc = FloorModI128(a.constant, *c);
    r.constant = Wrap(rc, t.bits());
    // r // c is computed from r's wrapped value: r itself must fit too, and its constant
    // (in [0, c)) must be stored as itself, not as a representative 2^bits away.
    if (r.constant != rc || !ctx_.Fits(r)) return Context::OfAtom(t, ctx_.SplitAtom(a, *c, 0));
    i128 d = ReduceByGcd(&r, *c);
    IntInterval rb = ctx_.Bound(r);
    if (rb.is_empty()) return a;  // unreachable under the facts: any value will do
    i128 lo_q = FloorDivI128(rb.lo, d), hi_q = FloorDivI128(rb.hi, d);
    if (lo_q == hi_q) {
      q.constant = ctx_.Rep(static_cast<i128>(q.constant) + lo_q, t);
      return q;
    }
    if (std::optional<LowSplit> low = SplitLow(r, d)) {
      // (g * h + l) // (g * e) == h // e for l in [0, g).
      ctx_.AddTo(&q, FloorDivide(low->high, Context::Constant(t, d / low->g)), 1);
      return q;
    }
    int atom = -1;
    if (const Atom* s = SingleSplit(r)) {
      // (A % u // l) // d == A % u // (l * d) when l * d divides u (or there is no u).
      i128 l = static_cast<i128>(s->lower) * d;
      if (FitsIn(IntInterval{l, l}, t) && (s->upper == 0 || s->upper % l == 0)) {
        atom = ctx_.SplitAtom(ctx_.dividend(s->dividend), static_cast<int64_t>(l), s->upper);
      }
    }
    if (atom < 0) atom = ctx_.SplitAtom(r, static_cast<int64_t>(d), 0);
    ctx_.AddTerm(&q, Term{1, {atom}});
    return q;
  }

  Sum FloorModulo(Sum a, Sum b) {
    DataType t = a.dtype;
    std::optional<i128> c = ConstDivisor(b);
    if (!c || *c <= 0) return Opaque(FloorMod(ctx_.ToExpr(a), ctx_.ToExpr(b)));
    if (*c == 1) return Context::Constant(t, 0);
    if (a.is_const()) return Context::Constant(t, FloorModI128(ActualConst(t, a.constant), *c));
    // Dropping multiples of c is sound for an exact dividend, and for any dividend when c is a
    // power of two (then c divides 2^bits, and wrapping keeps the residue modulo c).
    bool pow2 = (*c & (*c - 1)) == 0;
    bool exact = ctx_.Exact(a);
    if (!exact && !pow2) return Context::OfAtom(t, ctx_.SplitAtom(a, 1, static_cast<int64_t>(*c)));
    Sum q, r;
    SplitMultiples(a, *c, &q, &r);
    i128 rc = FloorModI128(a.constant, *c);
    r.constant = Wrap(rc, t.bits());
    // Stored 2^bits away (a uint constant past the signed range), r's value is congruent to a
    // modulo c only when c is a power of two: then only the remainder below applies.
    if (r.constant != rc || !ctx_.Fits(r)) {
      // r's wrapped value is congruent to a modulo c exactly when c is a power of two. (A
      // Mathematical r that does not fit would be an output operation that overflows: a's value
      // fits by assumption.)
      bool use_r = pow2 && !ctx_.Mathematical(t);
      return Context::OfAtom(t, ctx_.SplitAtom(use_r ? r : a, 1, static_cast<int64_t>(*c)));
    }
    // r % c == g * ((r / g) % (c / g)).
    i128 d = ReduceByGcd(&r, *c);
    i128 g = *c / d;
    IntInterval rb = ctx_.Bound(r);
    if (rb.is_empty()) return a;
    i128 k = FloorDivI128(rb.lo, d);
    if (k == FloorDivI128(rb.hi, d)) {
      // Within one period: the remainder is r - k * d.
      Sum s = ctx_.Scale(r, g);
      s.constant = ctx_.Rep(static_cast<i128>(s.constant) - g * k * d, t);
      return s;
    }
    if (std::optional<LowSplit> low = SplitLow(r, d)) {
      // (G * h + l) % (G * e) == G * (h % e) + l for l in [0, G); times the gcd g.
      Sum m = ctx_.Scale(FloorModulo(low->high, Context::Constant(t, d / low->g)), low->g);
      ctx_.AddTo(&m, low->low, 1);
      Fuse(&m);
      return ctx_.Scale(m, g);
    }
    int atom = -1;
    if (const Atom* s = SingleSplit(r)) {
      // (A % u // l) % d == A % (l * d) // l when l * d divides u (or there is no u).
      i128 u = static_cast<i128>(s->lower) * d;
      if (FitsIn(IntInterval{u, u}, t) && (s->upper == 0 || s->upper % u == 0)) {
        atom = ctx_.SplitAtom(ctx_.dividend(s->dividend), s->lower, static_cast<int64_t>(u));
      }
    }
    if (atom < 0) atom = ctx_.SplitAtom(r, 1, static_cast<int64_t>(d));
    return Context::OfAtom(t, atom, static_cast<int64_t>(g));
  }

  // q gets the terms whose coefficients are multiples of c (divided by c), r the others.
  static void SplitMultiples(const Sum& a, i128 c, Sum* q, Sum* r) {
    q->dtype = r->dtype = a.dtype;
    for (const Term& term : a.terms) {
      if (term.coeff % c == 0) {
        q->terms.push_back(Term{static_cast<int64_t>(term.coeff / c), term.atoms});
      } else {
        r->terms.push_back(term);
      }
    }
  }

  // Divides r (an exact sum) and c by the gcd of c and all of r's coefficients and constant;
  // returns c / gcd. Division and remainder identities hold for the reduced pair.
  static i128 ReduceByGcd(Sum* r, i128 c) {
    i128 g = GcdI128(c, r->constant);
    for (const Term& term : r->terms) g = GcdI128(g, term.coeff);
    if (g <= 1) return c;
    for (Term& term : r->terms) term.coeff = static_cast<int64_t>(term.coeff / g);
    r->constant = static_cast<int64_t>(r->constant / g);
    return c / g;
  }

  struct LowSplit {
    i128 g;
    Sum high;  // exact
    Sum low;   // within [0, g)
  };
  // r (exact) as g * high + low with g > 1 dividing d and low's bound within [0, g): the part
  // below g cannot carry into a quotient by d. g is tried from the terms' coefficients in order.
  std::optional<LowSplit> SplitLow(const Sum& r, i128 d) {
    for (const Term& candidate : r.terms) {
      i128 g = candidate.coeff < 0 ? -static_cast<i128>(candidate.coeff) : candidate.coeff;
      if (g <= 1 || d % g != 0) continue;
      LowSplit out{g, Sum(), Sum()};
      out.high.dtype = out.low.dtype = r.dtype;
      for (const Term& term : r.terms) {
        if (term.coeff % g == 0) {
          out.high.terms.push_back(Term{static_cast<int64_t>(term.coeff / g), term.atoms});
        } else {
          out.low.terms.push_back(term);
        }
      }
      out.high.constant = static_cast<int64_t>(FloorDivI128(r.constant, g));
      out.low.constant = static_cast<int64_t>(FloorModI128(r.constant, g));
      IntInterval lb = ctx_.Bound(out.low);
      if (lb.lo < 0 || lb.hi >= g || !ctx_.Fits(out.high)) continue;
      return out;
    }
    return std::nullopt;
  }

  // The split atom when s is exactly one split atom (coefficient 1, no constant).
  const Atom* SingleSplit(const Sum& s) {
    if (s.constant != 0 || s.terms.size() != 1 || s.terms[0].coeff != 1 ||
        s.terms[0].atoms.size() != 1) {
      return nullptr;
    }
    const Atom& a = ctx_.atom(s.terms[0].atoms[0]);
    return a.kind == Atom::Kind::kSplit ? &a : nullptr;
  }

  // Merges split terms of one dividend A back together:
  //   c * (A % m // l) + c * (m / l) * (A % u // m) == c * (A % u // l)   (l | m | u)
  // an identity of actual values, so it holds in the ring without any bound; A % inf // 1 is A.
  // Also c * l * (A // l) == c * (A - r) when A's modular set fixes A % l to r.
  void Fuse(Sum* s) {
    const int bits = s->dtype.bits();
    for (int round = 0; round < CanonicalSimplifier::kMaxTerms; ++round) {
      bool changed = false;
      for (size_t i = 0; i < s->terms.size() && !changed; ++i) {
        const Term& ti = s->terms[i];
        if (ti.atoms.size() != 1) continue;
        const Atom& x = ctx_.atom(ti.atoms[0]);
        if (x.kind != Atom::Kind::kSplit) continue;
        if (x.upper != 0) {
          // (Unreduced for a Mathematical dtype, whose coefficients are never reduced.)
          i128 want = static_cast<i128>(ti.coeff) * (x.upper / x.lower);
          if (!ctx_.Mathematical(s->dtype)) want = Wrap(want, bits);
          for (size_t j = 0; j < s->terms.size(); ++j) {
            const Term& tj = s->terms[j];
            if (j == i || tj.atoms.size() != 1 || tj.coeff != want) continue;
            const Atom& y = ctx_.atom(tj.atoms[0]);
            if (y.kind != Atom::Kind::kSplit || y.dividend != x.dividend || y.lower != x.upper) {
              continue;
            }
            int64_t coeff = ti.coeff, lower = x.lower, upper = y.upper, dividend = x.dividend;
            s->terms.erase(s->terms.begin() + std::max(i, j));
            s->terms.erase(s->terms.begin() + std::min(i, j));
            AddSplit(s, coeff, dividend, lower, upper);
            changed = true;
            break;
          }
        } else if (x.lower > 1 && ti.coeff % x.lower == 0) {
          const Sum& a = ctx_.dividend(x.dividend);
          ModularSet m = ctx_.analyzer()->ModularSet(ctx_.ToExpr(a));
          if (m->coeff % x.lower != 0) continue;
          i128 rem = FloorModI128(m->base, x.lower);
          i128 k = ti.coeff / x.lower;
          Sum dividend = a;
          s->terms.erase(s->terms.begin() + i);
          ctx_.AddTo(s, dividend, k);
          s->constant = ctx_.Rep(static_cast<i128>(s->constant) - k * rem, s->dtype);
          changed = true;
        }
      }
      if (!changed) return;
    }
  }

  void AddSplit(Sum* s, int64_t coeff, int dividend, int64_t lower, int64_t upper) {
    if (lower == 1 && upper == 0) {
      Sum a = ctx_.dividend(dividend);
      ctx_.AddTo(s, a, coeff);
      return;
    }
    Sum a = ctx_.dividend(dividend);
    ctx_.AddTerm(s, Term{coeff, {ctx_.SplitAtom(a, lower, upper)}});
  }

  Context ctx_;
  int impure_calls_ = 0;
};

// Whether e holds an integer + - * / % node, the only nodes the canonicalizer rewrites (it
// rebuilds everything else from its children): without one it would return e as it is. Node
// kinds not listed here count as "may hold one".
bool HasIndexArith(const PrimExprNode* e) {
  return AnyNode(e, [](const PrimExprNode* n) -> std::optional<bool> {
    ExprKind k = KindOf(n);
    if (IsArith(k)) return true;
    switch (k) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm:
      case ExprKind::kVar:
      case ExprKind::kSizeVar:
        return false;
      default:
        return std::nullopt;  // operands of min/max, comparisons, logic, not, cast, select
    }
  });
}

}  // namespace

PrimExpr CanonicalSimplifier::Simplify(const PrimExpr& expr) {
  if (!expr.defined()) return expr;
  if (!HasIndexArith(expr.get())) return expr;
  Canonicalizer canonicalizer(parent_);
  PrimExpr result;
  try {
    result = canonicalizer(expr);
  } catch (const canonical::TooManyTerms&) {
    return expr;
  } catch (const canonical::Unrepresentable&) {
    return expr;
  }
  // Rules may drop or merge atoms: an expression with side effects is left exactly as written.
  if (canonicalizer.saw_impure()) return expr;
  if (rewrite::SameExpr(result.get(), expr.get())) return expr;
  return result;
}

TESSEL_REGISTER_ANALYZER_EXTENSION([](Analyzer* parent) -> std::unique_ptr<AnalyzerExtension> {
  return std::make_unique<CanonicalSimplifier>(parent);
});

}  // namespace arith
}  // namespace tessel
