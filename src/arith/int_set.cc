// Interval sets with symbolic ends and EvalSet (contract in int_set.h).
//
// While evaluating, each domain variable is also given a scoped constant bound (the hull of its
// set), so ConstIntBound can tell, at each operation, whether any point of the domains makes it
// overflow; if so the operation's set is Everything.
#include <tessel/arith/analyzer.h>
#include <tessel/arith/int_set.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <unordered_map>
#include <utility>
#include <vector>

#include "arith/depth_guard.h"

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)
using tvm::ffi::Optional;

bool IntSetNode::IsSinglePoint() const {
  return min_value.has_value() && max_value.has_value() &&
         (min_value.value().same_as(max_value.value()) ||
          tvm::ffi::StructuralEqual::Equal(min_value.value(), max_value.value()));
}

IntSet::IntSet(Optional<PrimExpr> min_value, Optional<PrimExpr> max_value) {
  auto n = make_object<IntSetNode>();
  n->min_value = std::move(min_value);
  n->max_value = std::move(max_value);
  data_ = std::move(n);
}
IntSet IntSet::Everything() { return IntSet(std::nullopt, std::nullopt); }
IntSet IntSet::SinglePoint(PrimExpr value) { return IntSet(value, value); }
IntSet IntSet::Interval(PrimExpr min_value, PrimExpr max_value) {
  return IntSet(std::move(min_value), std::move(max_value));
}
IntSet IntSet::FromRange(const Range& range) {
  return IntSet(range->min, sub(add(range->min, range->extent), MakeConst(range->min.dtype(), 1)));
}

namespace {

using OptExpr = Optional<PrimExpr>;

// Combines two optional ends; an absent (infinite) end makes the result absent.
template <typename F>
OptExpr Both(const OptExpr& a, const OptExpr& b, F f) {
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  return f(a.value(), b.value());
}

class SetEvaluator : public ExprFunctor<IntSet(const PrimExpr&)> {
 public:
  SetEvaluator(Analyzer* analyzer, std::unordered_map<const VarNode*, IntSet> dom)
      : analyzer_(analyzer), dom_(std::move(dom)) {}

  IntSet VisitExpr(const PrimExpr& e) final {
    DepthGuard level;
    if (!UsesDomain(e)) return IntSet::SinglePoint(e);
    DataType t = e.dtype();
    if (!t.is_scalar() || !t.is_int_or_uint()) return IntSet::Everything();
    return ExprFunctor::VisitExpr(e);
  }

  using ExprFunctor::VisitExpr_;
  IntSet VisitExprDefault_(const Object*) final { return IntSet::Everything(); }

  IntSet VisitExpr_(const VarNode* op) final {
    auto it = dom_.find(op);
    return it != dom_.end() ? it->second : IntSet::SinglePoint(GetRef<Var>(op));
  }

  IntSet VisitExpr_(const LetNode* op) final {
    IntSet value = VisitExpr(op->value);
    auto [it, inserted] = dom_.emplace(op->var.get(), value);
    std::function<void()> undo = EnterHull(op->var, value);
    IntSet r = VisitExpr(op->body);
    if (undo) undo();
    if (inserted) dom_.erase(it);
    return r;
  }

  IntSet VisitExpr_(const AddNode* op) final {
    if (MayOverflow(op)) return IntSet::Everything();
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    return IntSet(Exact(a->min_value, b->min_value, add, AddInterval),
                  Exact(a->max_value, b->max_value, add, AddInterval));
  }
  IntSet VisitExpr_(const SubNode* op) final {
    if (MayOverflow(op)) return IntSet::Everything();
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    return IntSet(Exact(a->min_value, b->max_value, sub, SubInterval),
                  Exact(a->max_value, b->min_value, sub, SubInterval));
  }
  IntSet VisitExpr_(const MulNode* op) final {
    if (MayOverflow(op)) return IntSet::Everything();
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (b->IsSinglePoint()) return Scale(a, b->min_value.value());
    if (a->IsSinglePoint()) return Scale(b, a->min_value.value());
    // Two non-negative sets: the product is monotone in both.
    if (NonNegative(a) && NonNegative(b)) {
      return IntSet(Exact(a->min_value, b->min_value, mul, MulInterval),
                    Exact(a->max_value, b->max_value, mul, MulInterval));
    }
    return IntSet::Everything();
  }
  IntSet VisitExpr_(const FloorDivNode* op) final { return Divide(op, floordiv); }
  IntSet VisitExpr_(const DivNode* op) final { return Divide(op, truncdiv); }
  IntSet VisitExpr_(const FloorModNode* op) final { return Remainder(op, true); }
  IntSet VisitExpr_(const ModNode* op) final { return Remainder(op, false); }

  IntSet VisitExpr_(const MinNode* op) final {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    OptExpr lo = Both(a->min_value, b->min_value, min);
    OptExpr hi = !a->max_value.has_value() ? b->max_value
                 : !b->max_value.has_value()
                     ? a->max_value
                     : OptExpr(min(a->max_value.value(), b->max_value.value()));
    return IntSet(lo, hi);
  }
  IntSet VisitExpr_(const MaxNode* op) final {
    IntSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    OptExpr lo = !a->min_value.has_value() ? b->min_value
                 : !b->min_value.has_value()
                     ? a->min_value
                     : OptExpr(max(a->min_value.value(), b->min_value.value()));
    return IntSet(lo, Both(a->max_value, b->max_value, max));
  }
  IntSet VisitExpr_(const SelectNode* op) final {
    return Join(VisitExpr(op->true_value), VisitExpr(op->false_value));
  }
  IntSet VisitExpr_(const CallNode* op) final {
    if (op->op.same_as(builtin::if_then_else())) {
      return Join(VisitExpr(op->args[1]), VisitExpr(op->args[2]));
    }
    return IntSet::Everything();
  }
  IntSet VisitExpr_(const CastNode* op) final {
    DataType from = op->value.dtype();
    if (!from.is_int_or_uint()) return IntSet::Everything();
    // Integer casts are monotone where the value fits the target type.
    if (!FitsIn(Bound(op->value), op->dtype)) return IntSet::Everything();
    IntSet v = VisitExpr(op->value);
    auto c = [&](const OptExpr& x) -> OptExpr {
      if (!x.has_value() || !FitsIn(Bound(x.value()), op->dtype)) return std::nullopt;
      return cast(op->dtype, x.value());
    };
    return IntSet(c(v->min_value), c(v->max_value));
  }

  std::function<void()> EnterHull(const Var& var, const IntSet& set) {
    IntInterval r = DTypeRange(var.dtype());
    if (set->min_value.has_value()) r.lo = std::max(r.lo, Bound(set->min_value.value()).lo);
    if (set->max_value.has_value()) r.hi = std::min(r.hi, Bound(set->max_value.value()).hi);
    return analyzer_->const_int_bound_analyzer().EnterBound(var, r);
  }

 private:
  IntInterval Bound(const PrimExpr& e) { return analyzer_->const_int_bound_analyzer().Eval(e); }

  bool UsesDomain(const PrimExpr& e) {
    bool uses = false;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>()) uses = uses || dom_.count(v);
    });
    return uses;
  }

  // Whether, for some point of the domains, the operation's exact result leaves its dtype.
  bool MayOverflow(const PrimExprNode* op) {
    if (analyzer_->assume_no_overflow() && NoOverflowDType(op->dtype.element_of())) return false;
    IntInterval r = Bound(GetRef<PrimExpr>(op));
    IntInterval full = DTypeRange(op->dtype);
    return r.lo <= full.lo && r.hi >= full.hi;
  }

  // build(x, y), or infinite when that end expression could itself overflow: an end is only
  // trusted when its own evaluation is exact (the node's values may lie far inside it). Under
  // assume_no_overflow an end of a NoOverflowDType is kept where its exact value may leave the
  // dtype (the set's values fit by assumption), except that two constant ends fold modulo 2^bits
  // in build: that end becomes the dtype's end nearest its exact value, which bounds the same
  // values.
  template <typename F, typename G>
  OptExpr Exact(const OptExpr& x, const OptExpr& y, F build, G interval_op) {
    if (!x.has_value() || !y.has_value()) return std::nullopt;
    PrimExpr r = build(x.value(), y.value());
    IntInterval exact = interval_op(Bound(x.value()), Bound(y.value()));
    if (FitsIn(exact, r.dtype())) return r;
    if (!FitsOrAssumed(exact, r.dtype(), analyzer_->assume_no_overflow())) return std::nullopt;
    if (r.as<IntImmNode>()) {
      IntInterval full = DTypeRange(r.dtype());
      if (exact.lo > full.hi) return MakeConst(r.dtype(), static_cast<int64_t>(full.hi));
      if (exact.hi < full.lo) return MakeConst(r.dtype(), static_cast<int64_t>(full.lo));
      return std::nullopt;
    }
    return r;
  }

  bool NonNegative(const IntSet& s) {
    return s->min_value.has_value() && Bound(s->min_value.value()).lo >= 0;
  }

  IntSet Scale(const IntSet& s, const PrimExpr& k) {
    IntInterval kb = Bound(k);
    auto lo = [&](const OptExpr& x) { return Exact(x, OptExpr(k), mul, MulInterval); };
    if (kb.lo >= 0) return IntSet(lo(s->min_value), lo(s->max_value));
    if (kb.hi <= 0) return IntSet(lo(s->max_value), lo(s->min_value));
    return IntSet::Everything();
  }

  template <typename F>
  IntSet Divide(const PrimExprNode* op, F f) {
    const auto* bin = static_cast<const FloorDivNode*>(op);  // Div and FloorDiv share the layout
    auto d = AsConstInt(bin->b);
    if (!d || *d == 0 || MayOverflow(op)) return IntSet::Everything();
    IntSet a = VisitExpr(bin->a);
    auto q = [&](const OptExpr& x) {
      return Exact(x, OptExpr(bin->b), f, [](const IntInterval& x, const IntInterval& y) {
        return FloorDivInterval(x, y).value_or(IntInterval{-kIntervalInf, kIntervalInf});
      });
    };
    // Both rounding modes are monotone in the dividend: increasing for d > 0, decreasing for d < 0.
    if (*d > 0) return IntSet(q(a->min_value), q(a->max_value));
    return IntSet(q(a->max_value), q(a->min_value));
  }

  IntSet Remainder(const PrimExprNode* op, bool floor) {
    const auto* bin = static_cast<const FloorModNode*>(op);
    auto d = AsConstInt(bin->b);
    if (!d || *d <= 0) return IntSet::Everything();
    IntInterval a = Bound(bin->a);
    DataType t = op->dtype;
    // A dividend known to lie in [0, d) is its own remainder.
    if (a.lo >= 0 && a.hi < *d) return VisitExpr(bin->a);
    if (floor || a.lo >= 0) return IntSet(MakeConst(t, 0), MakeConst(t, *d - 1));
    return IntSet(MakeConst(t, -(*d - 1)), MakeConst(t, *d - 1));
  }

  IntSet Join(const IntSet& a, const IntSet& b) {
    return IntSet(Both(a->min_value, b->min_value, min), Both(a->max_value, b->max_value, max));
  }

  Analyzer* analyzer_;
  std::unordered_map<const VarNode*, IntSet> dom_;
};

}  // namespace

IntSet IntSetAnalyzer::operator()(const PrimExpr& expr, const Map<Var, IntSet>& dom_map) const {
  if (!expr.defined()) TVM_FFI_THROW(ValueError) << "IntSet: undefined expression";
  std::unordered_map<const VarNode*, IntSet> dom;
  for (const auto& [var, set] : dom_map) dom.emplace(var.get(), set);
  SetEvaluator eval(parent_, std::move(dom));
  // Leaves the scoped hulls again even when evaluation throws.
  struct Undo {
    std::vector<std::function<void()>> fns;
    ~Undo() {
      for (auto it = fns.rbegin(); it != fns.rend(); ++it) (*it)();
    }
  } undo;
  for (const auto& [var, set] : dom_map) undo.fns.push_back(eval.EnterHull(var, set));
  return eval(expr);
}

IntSet IntSetAnalyzer::operator()(const PrimExpr& expr, const Map<Var, Range>& dom_map) const {
  Map<Var, IntSet> sets;
  for (const auto& [var, range] : dom_map) sets.Set(var, IntSet::FromRange(range));
  return (*this)(expr, sets);
}

IntSet EvalSet(const PrimExpr& expr, const Map<Var, IntSet>& dom_map) {
  Analyzer analyzer;
  return analyzer.IntSet(expr, dom_map);
}

IntSet EvalSet(const PrimExpr& expr, const Map<Var, Range>& dom_map) {
  Analyzer analyzer;
  return analyzer.IntSet(expr, dom_map);
}

}  // namespace arith
}  // namespace tessel
