// Sums of products over interned atoms: building, ordering, bounding, and printing back to IR.
#include "arith/canonical/sum_form.h"

#include <tessel/arith/canonical_simplify.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/module.h>
#include <tessel/ir/op.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace canonical {

using namespace ir;  // NOLINT(build/namespaces)

int64_t Wrap(i128 v, int bits) {
  // The low `bits` bits, sign-extended (two's complement: the same as the floor modulo 2^bits
  // moved into the signed range, without a 128-bit division).
  uint64_t u = static_cast<uint64_t>(static_cast<unsigned __int128>(v));
  if (bits >= 64) return static_cast<int64_t>(u);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  u &= mask;
  if ((u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

namespace {

int Sign(i128 v) { return v < 0 ? -1 : (v > 0 ? 1 : 0); }

int CompareDType(DataType a, DataType b) {
  if (a.code() != b.code()) return a.code() < b.code() ? -1 : 1;
  if (a.bits() != b.bits()) return a.bits() < b.bits() ? -1 : 1;
  return Sign(static_cast<i128>(a.lanes()) - b.lanes());
}

PrimExpr Imm(DataType t, i128 v) { return IntImm(t, WrapToDType(t, v)); }

}  // namespace

// ---- atoms ----

int Context::VarAtom(const VarNode* var) {
  for (size_t i = 0; i < atoms_.size(); ++i) {
    if (atoms_[i].kind == Atom::Kind::kVar && atoms_[i].expr.get() == var) {
      return static_cast<int>(i);
    }
  }
  Atom a;
  a.kind = Atom::Kind::kVar;
  a.dtype = var->dtype;
  a.expr = GetRef<Var>(var);
  a.ir = a.expr;
  atoms_.push_back(std::move(a));
  return static_cast<int>(atoms_.size() - 1);
}

int Context::ExprAtom(const PrimExpr& expr, bool pure) {
  if (const auto* v = expr.as<VarNode>()) return VarAtom(v);
  if (pure) {
    for (size_t i = 0; i < atoms_.size(); ++i) {
      const Atom& a = atoms_[i];
      if (a.kind == Atom::Kind::kExpr && a.pure && rewrite::SameExpr(a.expr.get(), expr.get())) {
        return static_cast<int>(i);
      }
    }
  }
  Atom a;
  a.kind = Atom::Kind::kExpr;
  a.dtype = expr.dtype();
  a.expr = expr;
  a.ir = expr;
  a.pure = pure;
  atoms_.push_back(std::move(a));
  return static_cast<int>(atoms_.size() - 1);
}

int Context::Dividend(const Sum& s) {
  for (size_t i = 0; i < dividends_.size(); ++i) {
    if (SameSum(dividends_[i], s)) return static_cast<int>(i);
  }
  dividends_.push_back(s);
  return static_cast<int>(dividends_.size() - 1);
}

int Context::SplitAtom(const Sum& dividend, int64_t lower, int64_t upper) {
  int d = Dividend(dividend);
  for (size_t i = 0; i < atoms_.size(); ++i) {
    const Atom& a = atoms_[i];
    if (a.kind == Atom::Kind::kSplit && a.dividend == d && a.lower == lower && a.upper == upper) {
      return static_cast<int>(i);
    }
  }
  Atom a;
  a.kind = Atom::Kind::kSplit;
  a.dtype = dividend.dtype;
  a.dividend = d;
  a.lower = lower;
  a.upper = upper;
  atoms_.push_back(std::move(a));
  return static_cast<int>(atoms_.size() - 1);
}

// ---- sums ----

Sum Context::Constant(DataType t, i128 value) {
  Sum s;
  s.dtype = t;
  s.constant = Wrap(value, t.bits());
  return s;
}

Sum Context::OfAtom(DataType t, int atom, int64_t coeff) {
  Sum s;
  s.dtype = t;
  int64_t c = Wrap(coeff, t.bits());
  if (c != 0) s.terms.push_back(Term{c, {atom}});
  return s;
}

void Context::AddTerm(Sum* acc, Term term) {
  term.coeff = Rep(term.coeff, acc->dtype);
  if (term.coeff == 0) return;
  auto& terms = acc->terms;
  // Binary search for the term's place; equal atoms merge.
  size_t lo = 0, hi = terms.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = CompareTerms(terms[mid], term);
    if (c == 0) {
      int64_t merged = Rep(static_cast<i128>(terms[mid].coeff) + term.coeff, acc->dtype);
      if (merged == 0) {
        terms.erase(terms.begin() + mid);
      } else {
        terms[mid].coeff = merged;
      }
      return;
    }
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (static_cast<int>(terms.size()) >= CanonicalSimplifier::kMaxTerms) throw TooManyTerms{};
  terms.insert(terms.begin() + lo, std::move(term));
}

void Context::AddTo(Sum* acc, const Sum& other, i128 scale) {
  DataType dt = acc->dtype;
  int64_t k = Rep(scale, dt);
  if (k == 0) return;
  for (const Term& t : other.terms) {
    AddTerm(acc, Term{Rep(static_cast<i128>(t.coeff) * k, dt), t.atoms});
  }
  acc->constant = Rep(static_cast<i128>(acc->constant) + static_cast<i128>(other.constant) * k, dt);
}

Sum Context::Scale(const Sum& s, i128 scale) {
  Sum r;
  r.dtype = s.dtype;
  AddTo(&r, s, scale);
  return r;
}

std::optional<Sum> Context::Multiply(const Sum& a, const Sum& b) {
  if (a.is_const()) return Scale(b, a.constant);
  if (b.is_const()) return Scale(a, b.constant);
  // Distribute only over a monomial: (x + 1) * (y + 1) stays a product.
  auto monomial = [](const Sum& s) { return s.terms.size() == 1 && s.constant == 0; };
  if (!monomial(a) && !monomial(b)) return std::nullopt;
  DataType dt = a.dtype;
  Sum r;
  r.dtype = a.dtype;
  for (const Term& ta : a.terms) {
    for (const Term& tb : b.terms) {
      Term t;
      t.coeff = Rep(static_cast<i128>(ta.coeff) * tb.coeff, dt);
      std::merge(ta.atoms.begin(), ta.atoms.end(), tb.atoms.begin(), tb.atoms.end(),
                 std::back_inserter(t.atoms),
                 [this](int x, int y) { return CompareAtoms(x, y) < 0; });
      AddTerm(&r, std::move(t));
    }
    AddTerm(&r, Term{Rep(static_cast<i128>(ta.coeff) * b.constant, dt), ta.atoms});
  }
  for (const Term& tb : b.terms) {
    AddTerm(&r, Term{Rep(static_cast<i128>(tb.coeff) * a.constant, dt), tb.atoms});
  }
  r.constant = Rep(static_cast<i128>(a.constant) * b.constant, dt);
  return r;
}

bool Context::SameSum(const Sum& a, const Sum& b) const {
  if (a.dtype != b.dtype || a.constant != b.constant || a.terms.size() != b.terms.size()) {
    return false;
  }
  for (size_t i = 0; i < a.terms.size(); ++i) {
    if (a.terms[i].coeff != b.terms[i].coeff || a.terms[i].atoms != b.terms[i].atoms) return false;
  }
  return true;
}

// ---- bounds ----

IntInterval Context::AtomBound(int id) {
  if (atoms_[id].bound) return *atoms_[id].bound;
  IntInterval b;
  if (atoms_[id].kind != Atom::Kind::kSplit) {
    b = analyzer_->const_int_bound_analyzer().Eval(atoms_[id].expr);
  } else {
    int64_t lower = atoms_[id].lower, upper = atoms_[id].upper;
    // Bounding never adds atoms or dividends, so the reference stays valid.
    const Sum& dividend = dividends_[atoms_[id].dividend];
    b = ActualBound(dividend);
    if (!b.is_empty()) {
      if (upper != 0) b = FloorModInterval(b, IntInterval{upper, upper}).value();
      b = FloorDivInterval(b, IntInterval{lower, lower}).value();
    }
  }
  atoms_[id].bound = b;
  return b;
}

IntInterval Context::TermBound(const Term& term) {
  IntInterval b{term.coeff, term.coeff};
  for (int a : term.atoms) b = MulInterval(b, AtomBound(a));
  return b;
}

IntInterval Context::Bound(const Sum& s) {
  IntInterval b{s.constant, s.constant};
  for (const Term& t : s.terms) {
    IntInterval tb = TermBound(t);
    // A saturated product is no bound at all: two of them could otherwise cancel into a
    // small, wrong interval.
    if (tb.lo <= -kIntervalInf || tb.hi >= kIntervalInf) return {-kIntervalInf, kIntervalInf};
    b = AddInterval(b, tb);
  }
  return b;
}

IntInterval Context::ActualBound(const Sum& s) {
  IntInterval b = Bound(s);
  if (FitsIn(b, s.dtype)) return b;
  if (analyzer_->assume_no_overflow() && NoOverflowDType(s.dtype)) {
    return FitOrExact(b, s.dtype, true);
  }
  if (s.is_const()) {
    i128 v = s.dtype.is_uint() ? static_cast<i128>(s.constant) +
                                     (s.constant < 0 ? static_cast<i128>(1) << s.dtype.bits() : 0)
                               : static_cast<i128>(s.constant);
    return IntInterval{v, v};
  }
  return DTypeRange(s.dtype);
}

// ---- order ----

int Context::VarOrder(const VarNode* v) {
  for (size_t i = 0; i < var_order_.size(); ++i) {
    if (var_order_[i] == v) return static_cast<int>(i);
  }
  var_order_.push_back(v);
  return static_cast<int>(var_order_.size() - 1);
}

int Context::CompareVars(const VarNode* a, const VarNode* b) {
  if (a == b) return 0;
  if (int c = a->name_hint.compare(b->name_hint)) return c < 0 ? -1 : 1;
  if (int c = CompareDType(a->dtype, b->dtype)) return c;
  // Sequenced: the first of the two to be met gets the smaller order.
  int oa = VarOrder(a);
  int ob = VarOrder(b);
  return oa < ob ? -1 : 1;
}

int Context::CompareExpr(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return 0;
  ExprKind ka = KindOf(a.get()), kb = KindOf(b.get());
  if (ka == ExprKind::kSizeVar) ka = ExprKind::kVar;
  if (kb == ExprKind::kSizeVar) kb = ExprKind::kVar;
  if (ka != kb) return ka < kb ? -1 : 1;
  if (int c = CompareDType(a.dtype(), b.dtype())) return c;
  auto array = [this](const Array<PrimExpr>& x, const Array<PrimExpr>& y) {
    if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
    for (size_t i = 0; i < x.size(); ++i) {
      if (int c = CompareExpr(x[i], y[i])) return c;
    }
    return 0;
  };
  switch (ka) {
    case ExprKind::kIntImm:
      return Sign(static_cast<i128>(a.as<IntImmNode>()->value) - b.as<IntImmNode>()->value);
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return x < y ? -1 : (y < x ? 1 : 0);
    }
    case ExprKind::kVar:
      return CompareVars(a.as<VarNode>(), b.as<VarNode>());
    case ExprKind::kCast:
      return CompareExpr(a.as<CastNode>()->value, b.as<CastNode>()->value);
#define TESSEL_CMP_BINARY(Name)                    \
  case ExprKind::k##Name: {                        \
    const auto* x = a.as<Name##Node>();            \
    const auto* y = b.as<Name##Node>();            \
    if (int c = CompareExpr(x->a, y->a)) return c; \
    return CompareExpr(x->b, y->b);                \
  }
      TESSEL_FOR_EACH_BINARY_NODE(TESSEL_CMP_BINARY)
      TESSEL_FOR_EACH_CMP_NODE(TESSEL_CMP_BINARY)
      TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_CMP_BINARY)
#undef TESSEL_CMP_BINARY
    case ExprKind::kNot:
      return CompareExpr(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ExprKind::kSelect: {
      const auto* x = a.as<SelectNode>();
      const auto* y = b.as<SelectNode>();
      if (int c = CompareExpr(x->condition, y->condition)) return c;
      if (int c = CompareExpr(x->true_value, y->true_value)) return c;
      return CompareExpr(x->false_value, y->false_value);
    }
    case ExprKind::kBufferLoad: {
      const auto* x = a.as<BufferLoadNode>();
      const auto* y = b.as<BufferLoadNode>();
      if (int c = x->buffer->name.compare(y->buffer->name)) return c < 0 ? -1 : 1;
      return array(x->indices, y->indices);
    }
    case ExprKind::kCall: {
      const auto* x = a.as<CallNode>();
      const auto* y = b.as<CallNode>();
      auto name = [](const ObjectRef& op) -> String {
        if (const auto* o = op.as<OpNode>()) return o->name;
        if (const auto* g = op.as<GlobalVarNode>()) return g->name_hint;
        return String("");
      };
      if (int c = name(x->op).compare(name(y->op))) return c < 0 ? -1 : 1;
      return array(x->args, y->args);
    }
    case ExprKind::kLet: {
      const auto* x = a.as<LetNode>();
      const auto* y = b.as<LetNode>();
      if (int c = CompareExpr(x->value, y->value)) return c;
      return CompareExpr(x->body, y->body);
    }
    default:
      return 0;  // Ties are broken by the atoms' first appearance.
  }
}

int Context::CompareSums(const Sum& a, const Sum& b) {
  size_t n = std::min(a.terms.size(), b.terms.size());
  for (size_t i = 0; i < n; ++i) {
    if (int c = CompareTerms(a.terms[i], b.terms[i])) return c;
    if (a.terms[i].coeff != b.terms[i].coeff) return a.terms[i].coeff < b.terms[i].coeff ? -1 : 1;
  }
  if (a.terms.size() != b.terms.size()) return a.terms.size() < b.terms.size() ? -1 : 1;
  if (a.constant != b.constant) return a.constant < b.constant ? -1 : 1;
  return CompareDType(a.dtype, b.dtype);
}

int Context::CompareAtoms(int a, int b) {
  if (a == b) return 0;
  const Atom& x = atoms_[a];
  const Atom& y = atoms_[b];
  if (x.kind != y.kind) return x.kind < y.kind ? -1 : 1;
  int c = 0;
  switch (x.kind) {
    case Atom::Kind::kVar:
      c = CompareVars(x.expr.as<VarNode>(), y.expr.as<VarNode>());
      break;
    case Atom::Kind::kExpr:
      c = CompareExpr(x.expr, y.expr);
      break;
    case Atom::Kind::kSplit: {
      if (x.dividend != y.dividend) {
        c = CompareSums(dividends_[x.dividend], dividends_[y.dividend]);
      }
      if (c == 0 && x.lower != y.lower) c = x.lower < y.lower ? -1 : 1;
      if (c == 0 && x.upper != y.upper) {
        // upper 0 (no remainder) orders last.
        uint64_t ux = static_cast<uint64_t>(x.upper - 1), uy = static_cast<uint64_t>(y.upper - 1);
        c = ux < uy ? -1 : 1;
      }
      break;
    }
  }
  if (c != 0) return c;
  return a < b ? -1 : 1;
}

int Context::CompareTerms(const Term& a, const Term& b) {
  size_t n = std::min(a.atoms.size(), b.atoms.size());
  for (size_t i = 0; i < n; ++i) {
    if (int c = CompareAtoms(a.atoms[i], b.atoms[i])) return c;
  }
  if (a.atoms.size() != b.atoms.size()) return a.atoms.size() < b.atoms.size() ? -1 : 1;
  return 0;
}

// ---- back to IR ----

PrimExpr Context::AtomExpr(int id) {
  if (atoms_[id].ir.defined()) return atoms_[id].ir;
  DataType t = atoms_[id].dtype;
  int64_t lower = atoms_[id].lower, upper = atoms_[id].upper;
  PrimExpr a = ToExpr(dividends_[atoms_[id].dividend]);
  PrimExpr e;
  if (upper == 0) {
    e = lower == 1 ? a : FloorDiv(a, Imm(t, lower));
  } else if (lower == 1) {
    e = FloorMod(a, Imm(t, upper));
  } else {
    e = FloorMod(FloorDiv(a, Imm(t, lower)), Imm(t, upper / lower));
  }
  atoms_[id].ir = e;
  return e;
}

PrimExpr Context::TermExpr(const Term& term, int64_t multiplier) {
  PrimExpr e;
  for (int a : term.atoms) {
    PrimExpr x = AtomExpr(a);
    e = e.defined() ? Mul(e, x) : x;
  }
  if (multiplier != 1) e = Mul(e, Imm(e.dtype(), multiplier));
  return e;
}

Context::Plan Context::Spell(const Sum& s) const {
  DataType t = s.dtype;
  const int bits = t.bits();
  // The signed minimum has no negation in a signed type: such a term stays an added product.
  const int64_t min_rep = Wrap(static_cast<i128>(1) << (bits - 1), bits);
  auto negatable = [&](int64_t v) { return v < 0 && !(t.is_int() && v == min_rep); };
  // The largest coefficients first (ties in term order), as index arithmetic is written
  // (`bx * 512 + ty * 16 + tx`) and as TVM prints it: such an input comes back as itself, and
  // the stages after this one see no change.
  support::SmallVector<int, 8> order;
  for (size_t i = 0; i < s.terms.size(); ++i) order.push_back(static_cast<int>(i));
  auto magnitude = [&](int i) {
    int64_t c = s.terms[i].coeff;
    return c < 0 ? -static_cast<i128>(c) : static_cast<i128>(c);
  };
  // Insertion sort: stable, and sums have a few terms (std::stable_sort allocates a buffer).
  for (size_t i = 1; i < order.size(); ++i) {
    for (size_t j = i; j > 0 && magnitude(order[j]) > magnitude(order[j - 1]); --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  Plan plan;
  auto push = [&](int term, int64_t multiplier, i128 constant, bool subtract) {
    Step::Op op = plan.empty() ? Step::kInit : subtract ? Step::kSub : Step::kAdd;
    plan.push_back(Step{op, term, multiplier, constant});
  };
  for (int i : order) {
    if (!negatable(s.terms[i].coeff)) push(i, s.terms[i].coeff, 0, false);
  }
  bool constant_done = false;
  for (int i : order) {
    if (!negatable(s.terms[i].coeff)) continue;
    if (plan.empty()) {
      // `c - x` reads better than `0 - x + c`.
      constant_done = s.constant > 0;
      push(-1, 0, constant_done ? s.constant : 0, false);
    }
    push(i, -s.terms[i].coeff, 0, true);
  }
  if (!constant_done && s.constant != 0) {
    if (plan.empty() || !negatable(s.constant)) {
      push(-1, 0, s.constant, false);
    } else {
      push(-1, 0, -static_cast<i128>(s.constant), true);
    }
  }
  if (plan.empty()) push(-1, 0, 0, false);
  return plan;
}

PrimExpr Context::ToExpr(const Sum& s) { return Build(s, Spell(s)); }

PrimExpr Context::ToExprOr(const Sum& s, const PrimExpr& e) {
  Plan plan = Spell(s);
  return Matches(s, plan, e.get()) ? e : Build(s, plan);
}

PrimExpr Context::Build(const Sum& s, const Plan& plan) {
  PrimExpr e;
  for (const Step& step : plan) {
    PrimExpr x = step.term >= 0 ? TermExpr(s.terms[step.term], step.multiplier)
                                : Imm(s.dtype, step.constant);
    if (step.op == Step::kInit) {
      e = x;
    } else if (step.op == Step::kAdd) {
      e = Add(e, x);
    } else {
      e = Sub(e, x);
    }
  }
  return e;
}

namespace {

// e is the constant v of dtype t, as Imm(t, v) would build it.
bool IsImm(const PrimExprNode* e, DataType t, i128 v) {
  const auto* imm = e->IsInstance<IntImmNode>() ? static_cast<const IntImmNode*>(e) : nullptr;
  return imm && imm->dtype == t && imm->value == WrapToDType(t, v);
}

// e is a binary node of kind k and dtype t: its operands, else nullptr.
template <typename Node>
const Node* AsBinary(const PrimExprNode* e, DataType t) {
  return e->dtype == t && e->IsInstance<Node>() ? static_cast<const Node*>(e) : nullptr;
}

}  // namespace

bool Context::Matches(const Sum& s, const PrimExprNode* e) { return Matches(s, Spell(s), e); }

bool Context::Matches(const Sum& s, const Plan& plan, const PrimExprNode* e) {
  DataType t = s.dtype;
  for (size_t k = plan.size(); k-- > 0;) {
    const Step& step = plan[k];
    const PrimExprNode* operand = e;
    if (step.op != Step::kInit) {
      if (step.op == Step::kAdd) {
        const auto* add = AsBinary<AddNode>(e, t);
        if (!add) return false;
        operand = add->b.get();
        e = add->a.get();
      } else {
        const auto* sub = AsBinary<SubNode>(e, t);
        if (!sub) return false;
        operand = sub->b.get();
        e = sub->a.get();
      }
    }
    bool ok = step.term >= 0 ? MatchesTerm(s.terms[step.term], step.multiplier, t, operand)
                             : IsImm(operand, t, step.constant);
    if (!ok) return false;
  }
  return true;
}

bool Context::MatchesTerm(const Term& term, int64_t multiplier, DataType t, const PrimExprNode* e) {
  if (multiplier != 1) {
    const auto* mul = AsBinary<MulNode>(e, t);
    if (!mul || !IsImm(mul->b.get(), t, multiplier)) return false;
    e = mul->a.get();
  }
  for (size_t i = term.atoms.size(); i-- > 1;) {
    const auto* mul = AsBinary<MulNode>(e, t);
    if (!mul || !MatchesAtom(term.atoms[i], mul->b.get())) return false;
    e = mul->a.get();
  }
  return MatchesAtom(term.atoms[0], e);
}

bool Context::MatchesAtom(int id, const PrimExprNode* e) {
  const Atom& atom = atoms_[id];
  if (atom.ir.defined()) return rewrite::SameExpr(atom.ir.get(), e);
  // A split not yet spelled: the shapes AtomExpr builds.
  DataType t = atom.dtype;
  if (atom.upper == 0) {
    if (atom.lower == 1) return Matches(dividends_[atom.dividend], e);
    const auto* div = AsBinary<FloorDivNode>(e, t);
    return div && IsImm(div->b.get(), t, atom.lower) &&
           Matches(dividends_[atom.dividend], div->a.get());
  }
  const auto* mod = AsBinary<FloorModNode>(e, t);
  if (!mod) return false;
  if (atom.lower == 1) {
    return IsImm(mod->b.get(), t, atom.upper) && Matches(dividends_[atom.dividend], mod->a.get());
  }
  const auto* div = AsBinary<FloorDivNode>(mod->a.get(), t);
  return div && IsImm(mod->b.get(), t, atom.upper / atom.lower) &&
         IsImm(div->b.get(), t, atom.lower) && Matches(dividends_[atom.dividend], div->a.get());
}

}  // namespace canonical
}  // namespace arith
}  // namespace tessel
