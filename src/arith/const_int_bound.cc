// Constant integer bounds (contract in const_int_bound.h). Each node's bound is computed exactly
// over __int128 from its operands' bounds, then kept only if it fits the node's dtype.
#include <tessel/arith/const_int_bound.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "arith/depth_guard.h"
#include "arith/node_cache.h"

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)

ConstIntBound::ConstIntBound(int64_t min_value, int64_t max_value) {
  auto n = make_object<ConstIntBoundNode>();
  n->min_value = min_value;
  n->max_value = max_value;
  data_ = std::move(n);
}

ConstIntBound ToConstIntBound(const IntInterval& x) {
  constexpr i128 kMin = ConstIntBound::kNegInf, kMax = ConstIntBound::kPosInf;
  int64_t lo =
      x.lo <= kMin ? ConstIntBound::kNegInf : static_cast<int64_t>(std::min<i128>(x.lo, kMax));
  int64_t hi =
      x.hi >= kMax ? ConstIntBound::kPosInf : static_cast<int64_t>(std::max<i128>(x.hi, kMin));
  return ConstIntBound(lo, hi);
}

IntInterval ToInterval(const ConstIntBound& b, DataType t) {
  IntInterval r = DTypeRange(t.element_of());
  i128 lo = b->min_value == ConstIntBound::kNegInf ? r.lo : b->min_value;
  i128 hi = b->max_value == ConstIntBound::kPosInf ? r.hi : b->max_value;
  return Intersect({lo, hi}, r);
}

struct ConstIntBoundAnalyzer::Impl {
  using VarMap =
      std::unordered_map<Var, IntInterval, tvm::ffi::ObjectPtrHash, tvm::ffi::ObjectPtrEqual>;
  VarMap bound;  // from Bind / Update: permanent
  // The symbolic range each variable was bound to: its ends are re-evaluated at query time, so
  // that facts learnt later about them (`i in [0, n)`, then `n <= 64`) tighten the variable too.
  std::unordered_map<Var, Range, tvm::ffi::ObjectPtrHash, tvm::ffi::ObjectPtrEqual> ranges;
  // Constraint-scope facts, innermost last; a variable's bound is the intersection of all.
  std::vector<std::pair<Var, IntInterval>> scoped;
  // Bounds already computed, stamped with the generation of the state they hold for.
  // Simplify asks for the bound of every node and then of its parents, which re-walks the
  // subtrees: this makes that linear. Never copied to a clone.
  NodeCache<IntInterval> cache;
  // Bumped on every change of state (a binding, a scope entered or left), so that answers
  // derived from the bounds (here and in the modular sets) are recomputed.
  uint64_t generation = 1;
  // Analyzer::SetAssumeNoOverflow.
  bool assume_no_overflow = false;
  // SetRefiner; `refining` is set while it runs. Neither is copied to a clone.
  ConstIntBoundAnalyzer::Refiner refiner;
  bool refining = false;

  void Changed() { ++generation; }

  IntInterval VarBound(const VarNode* v) const {
    IntInterval r = DTypeRange(v->dtype.element_of());
    if (v->IsInstance<SizeVarNode>()) r.lo = std::max<i128>(r.lo, 0);
    if (!bound.empty()) {
      auto it = bound.find(GetRef<Var>(v));
      if (it != bound.end()) r = Intersect(r, it->second);
    }
    for (const auto& [var, x] : scoped) {
      if (var.get() == v) r = Intersect(r, x);
    }
    return r;
  }
};

namespace {

IntInterval Point(i128 v) { return {v, v}; }
const IntInterval kBoolUnknown{0, 1};

// The exact value of an integer constant (uint64 constants above INT64_MAX are stored as their
// bit pattern).
i128 ConstValue(const IntImmNode* op) {
  if (op->dtype.is_uint() && op->dtype.bits() == 64 && op->value < 0) {
    return static_cast<i128>(static_cast<uint64_t>(op->value));
  }
  return op->value;
}

class BoundEvaluator : public ExprFunctor<IntInterval(const PrimExpr&)> {
 public:
  explicit BoundEvaluator(ConstIntBoundAnalyzer::Impl* state)
      : state_(state), cache_(&state->cache) {}

  using ExprFunctor::VisitExpr_;

  IntInterval VisitExpr(const PrimExpr& e) final {
    // Inside a Let body a variable may stand for the let's value: those bounds are not cached.
    const Object* n = e.get();
    if (n->IsInstance<IntImmNode>()) return ExprFunctor::VisitExpr(e);
    uint64_t gen = state_->generation;
    if (lets_.empty()) {
      if (const IntInterval* hit = cache_->Find(n, gen)) return *hit;
    }
    DepthGuard level;  // only where the walk may descend
    if (!lets_.empty()) return ExprFunctor::VisitExpr(e);
    IntInterval r = ExprFunctor::VisitExpr(e);
    cache_->Put(e, gen, r);
    return r;
  }

  IntInterval VisitExprDefault_(const Object* op) final {
    return DTypeRange(static_cast<const PrimExprNode*>(op)->dtype.element_of());
  }

  IntInterval VisitExpr_(const IntImmNode* op) final { return Point(ConstValue(op)); }

  IntInterval VisitExpr_(const VarNode* op) final {
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) {
      if (it->first == op) return it->second;
    }
    IntInterval r = state_->VarBound(op);
    if (state_->ranges.empty()) return r;
    auto it = state_->ranges.find(GetRef<Var>(op));
    // A variable met again while its own range is evaluated (a cyclic binding) adds nothing.
    if (it == state_->ranges.end() || expanding_.size() >= 8 ||
        std::find(expanding_.begin(), expanding_.end(), op) != expanding_.end()) {
      return r;
    }
    expanding_.push_back(op);
    IntInterval mn = VisitExpr(it->second->min), ext = VisitExpr(it->second->extent);
    expanding_.pop_back();
    if (mn.is_empty() || ext.is_empty()) return r;
    return Intersect(r, {mn.lo, mn.hi + ext.hi - 1});
  }

  IntInterval VisitExpr_(const LetNode* op) final {
    lets_.emplace_back(op->var.get(), VisitExpr(op->value));
    IntInterval r = VisitExpr(op->body);
    lets_.pop_back();
    return r;
  }

  IntInterval VisitExpr_(const CastNode* op) final {
    DataType to = op->dtype.element_of();
    DataType from = op->value.dtype().element_of();
    if (to.is_bool()) {
      IntInterval v = VisitExpr(op->value);
      if (!from.is_int_or_uint() && !from.is_bool()) return kBoolUnknown;
      if (v.is_empty()) return v;
      if (!v.contains(0)) return Point(1);
      return v.is_point() ? Point(0) : kBoolUnknown;
    }
    if (!to.is_int_or_uint()) return DTypeRange(to);
    if (!from.is_int_or_uint() && !from.is_bool()) return DTypeRange(to);
    return FitOrFull(VisitExpr(op->value), to);
  }

  IntInterval VisitExpr_(const AddNode* op) final {
    return Arith(op, AddInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const SubNode* op) final {
    return Arith(op, SubInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const MulNode* op) final {
    return Arith(op, MulInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const DivNode* op) final {
    return Arith(op, TruncDivInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const ModNode* op) final {
    return Arith(op, TruncModInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const FloorDivNode* op) final {
    return Arith(op, FloorDivInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const FloorModNode* op) final {
    return Arith(op, FloorModInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const MinNode* op) final {
    return Arith(op, MinInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }
  IntInterval VisitExpr_(const MaxNode* op) final {
    return Arith(op, MaxInterval(VisitExpr(op->a), VisitExpr(op->b)));
  }

  // Comparisons are decided when the operands' bounds do not overlap.
  IntInterval VisitExpr_(const EQNode* op) final { return CompareEq(op->a, op->b, false); }
  IntInterval VisitExpr_(const NENode* op) final { return CompareEq(op->a, op->b, true); }
  IntInterval VisitExpr_(const LTNode* op) final { return CompareLess(op->a, op->b, true); }
  IntInterval VisitExpr_(const LENode* op) final { return CompareLess(op->a, op->b, false); }
  IntInterval VisitExpr_(const GTNode* op) final { return CompareLess(op->b, op->a, true); }
  IntInterval VisitExpr_(const GENode* op) final { return CompareLess(op->b, op->a, false); }

  IntInterval VisitExpr_(const AndNode* op) final {
    IntInterval a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  }
  IntInterval VisitExpr_(const OrNode* op) final {
    IntInterval a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  }
  IntInterval VisitExpr_(const NotNode* op) final {
    IntInterval a = VisitExpr(op->a);
    return {1 - a.hi, 1 - a.lo};
  }

  IntInterval VisitExpr_(const SelectNode* op) final {
    return Choose(op->condition, op->true_value, op->false_value);
  }

  IntInterval VisitExpr_(const BroadcastNode* op) final { return VisitExpr(op->value); }

  IntInterval VisitExpr_(const RampNode* op) final {
    IntInterval base = VisitExpr(op->base), stride = VisitExpr(op->stride);
    IntInterval offsets = MulInterval(stride, IntInterval{0, op->lanes - 1});
    return FitOrExact(AddInterval(base, offsets), op->dtype.element_of(),
                      state_->assume_no_overflow);
  }

  IntInterval VisitExpr_(const CallNode* op) final {
    DataType t = op->dtype.element_of();
    if (op->op.same_as(builtin::if_then_else())) {
      return Choose(op->args[0], op->args[1], op->args[2]);
    }
    if (op->op.same_as(builtin::likely())) return VisitExpr(op->args[0]);
    if (!t.is_int_or_uint() && !t.is_bool()) return DTypeRange(t);
    if (op->op.same_as(builtin::shift_left()) || op->op.same_as(builtin::shift_right())) {
      IntInterval a = VisitExpr(op->args[0]), s = VisitExpr(op->args[1]);
      // A shift amount outside [0, bits) has no defined result.
      if (s.is_empty() || s.lo < 0 || s.hi >= t.bits()) return DTypeRange(t);
      IntInterval scale{static_cast<i128>(1) << static_cast<int>(s.lo),
                        static_cast<i128>(1) << static_cast<int>(s.hi)};
      if (op->op.same_as(builtin::shift_left())) return FitOrFull(MulInterval(a, scale), t);
      // Arithmetic (signed) and logical (unsigned) right shifts are both floor(a / 2^s).
      return FitOrFull(*FloorDivInterval(a, scale), t);
    }
    if (op->op.same_as(builtin::bitwise_and())) {
      return FitOrFull(BitAndInterval(VisitExpr(op->args[0]), VisitExpr(op->args[1])), t);
    }
    if (op->op.same_as(builtin::bitwise_or())) {
      return FitOrFull(BitOrInterval(VisitExpr(op->args[0]), VisitExpr(op->args[1])), t);
    }
    if (op->op.same_as(builtin::bitwise_xor())) {
      return FitOrFull(BitXorInterval(VisitExpr(op->args[0]), VisitExpr(op->args[1])), t);
    }
    if (op->op.same_as(builtin::bitwise_not())) {
      IntInterval a = VisitExpr(op->args[0]);
      if (a.is_empty()) return a;
      // Signed: ~x = -x - 1. Unsigned (and bool): ~x = max - x.
      if (t.is_int()) return {-a.hi - 1, -a.lo - 1};
      i128 m = DTypeRange(t).hi;
      return {m - a.hi, m - a.lo};
    }
    return DTypeRange(t);
  }

 private:
  IntInterval Arith(const PrimExprNode* op, const IntInterval& exact) {
    DataType t = op->dtype.element_of();
    if (state_->refiner && !state_->refining && !state_->assume_no_overflow && lets_.empty() &&
        !FitsIn(exact, t) &&
        (op->IsInstance<AddNode>() || op->IsInstance<SubNode>() || op->IsInstance<MulNode>())) {
      state_->refining = true;
      struct Reset {  // however the refiner returns
        bool* flag;
        ~Reset() { *flag = false; }
      } reset{&state_->refining};
      std::optional<IntInterval> r = state_->refiner(op);
      if (r && FitsIn(*r, t)) return *r;
    }
    return FitOrExact(exact, t, state_->assume_no_overflow);
  }
  IntInterval Arith(const PrimExprNode* op, const std::optional<IntInterval>& exact) {
    if (!exact) return DTypeRange(op->dtype.element_of());
    return FitOrExact(*exact, op->dtype.element_of(), state_->assume_no_overflow);
  }

  IntInterval Choose(const PrimExpr& cond, const PrimExpr& t, const PrimExpr& f) {
    IntInterval c = VisitExpr(cond);
    if (c.lo >= 1) return VisitExpr(t);
    if (c.hi <= 0) return VisitExpr(f);
    return Union(VisitExpr(t), VisitExpr(f));
  }

  bool IsIntegral(const PrimExpr& e) const {
    DataType t = e.dtype();
    return t.is_int_or_uint() || t.is_bool();
  }

  IntInterval CompareLess(const PrimExpr& lhs, const PrimExpr& rhs, bool strict) {
    if (!IsIntegral(lhs)) return kBoolUnknown;
    IntInterval a = VisitExpr(lhs), b = VisitExpr(rhs);
    if (a.is_empty() || b.is_empty()) return {1, 0};
    if (strict ? a.hi < b.lo : a.hi <= b.lo) return Point(1);
    if (strict ? a.lo >= b.hi : a.lo > b.hi) return Point(0);
    return kBoolUnknown;
  }

  IntInterval CompareEq(const PrimExpr& lhs, const PrimExpr& rhs, bool negate) {
    if (!IsIntegral(lhs)) return kBoolUnknown;
    IntInterval a = VisitExpr(lhs), b = VisitExpr(rhs);
    if (a.is_empty() || b.is_empty()) return {1, 0};
    int verdict = -1;
    if (a.is_point() && b.is_point() && a.lo == b.lo) verdict = 1;
    if (a.hi < b.lo || b.hi < a.lo) verdict = 0;
    if (verdict < 0) return kBoolUnknown;
    return Point(negate ? 1 - verdict : verdict);
  }

  ConstIntBoundAnalyzer::Impl* state_;
  NodeCache<IntInterval>* cache_;
  std::vector<std::pair<const VarNode*, IntInterval>> lets_;
  std::vector<const VarNode*> expanding_;
};

// Facts `var in x` that a condition implies.
class ConstraintCollector {
 public:
  explicit ConstraintCollector(const ConstIntBoundAnalyzer* analyzer) : analyzer_(analyzer) {}

  void Collect(const PrimExpr& cond, bool negated) {
    if (const auto* op = cond.as<AndNode>()) {
      if (!negated) {
        Collect(op->a, false);
        Collect(op->b, false);
      }
      return;
    }
    if (const auto* op = cond.as<OrNode>()) {
      // not (a or b) == not a and not b
      if (negated) {
        Collect(op->a, true);
        Collect(op->b, true);
      }
      return;
    }
    if (const auto* op = cond.as<NotNode>()) return Collect(op->a, !negated);
    if (const auto* op = cond.as<CallNode>()) {
      if (op->op.same_as(builtin::likely())) Collect(op->args[0], negated);
      return;
    }
    // a < b, with negation folded in: not (a < b) == b <= a.
    if (const auto* op = cond.as<LTNode>()) return Less(op->a, op->b, !negated, negated);
    if (const auto* op = cond.as<LENode>()) return Less(op->a, op->b, negated, negated);
    if (const auto* op = cond.as<GTNode>()) return Less(op->b, op->a, !negated, negated);
    if (const auto* op = cond.as<GENode>()) return Less(op->b, op->a, negated, negated);
    const EQNode* eq = cond.as<EQNode>();
    const NENode* ne = cond.as<NENode>();
    if ((eq && !negated) || (ne && negated)) {
      PrimExpr a = eq ? eq->a : ne->a, b = eq ? eq->b : ne->b;
      if (!IsIntegral(a)) return;
      IntInterval ba = analyzer_->Eval(a), bb = analyzer_->Eval(b);
      if (const auto* v = a.as<VarNode>()) Add(v, bb);
      if (const auto* v = b.as<VarNode>()) Add(v, ba);
    }
  }

  std::vector<std::pair<Var, IntInterval>> facts;

 private:
  static bool IsIntegral(const PrimExpr& e) {
    return e.dtype().is_int_or_uint() && e.dtype().is_scalar();
  }

  // lhs < rhs (strict) or lhs <= rhs; when `swapped` the comparison came from a negation, in
  // which the operands were exchanged: the relation between them holds all the same.
  void Less(const PrimExpr& lhs, const PrimExpr& rhs, bool strict, bool swapped) {
    if (swapped) return Less2(rhs, lhs, strict);
    Less2(lhs, rhs, strict);
  }
  void Less2(const PrimExpr& lhs, const PrimExpr& rhs, bool strict) {
    if (!IsIntegral(lhs)) return;
    i128 gap = strict ? 1 : 0;
    if (const auto* v = lhs.as<VarNode>()) {
      IntInterval r = analyzer_->Eval(rhs);
      if (!r.is_empty()) Add(v, {-kIntervalInf, r.hi - gap});
    }
    if (const auto* v = rhs.as<VarNode>()) {
      IntInterval l = analyzer_->Eval(lhs);
      if (!l.is_empty()) Add(v, {l.lo + gap, kIntervalInf});
    }
  }

  void Add(const VarNode* v, const IntInterval& x) { facts.emplace_back(GetRef<Var>(v), x); }

  const ConstIntBoundAnalyzer* analyzer_;
};

}  // namespace

ConstIntBoundAnalyzer::ConstIntBoundAnalyzer(Analyzer*) : impl_(std::make_unique<Impl>()) {}
ConstIntBoundAnalyzer::~ConstIntBoundAnalyzer() = default;

void ConstIntBoundAnalyzer::CopyStateFrom(const ConstIntBoundAnalyzer& other) {
  uint64_t generation = impl_->generation;
  Refiner refiner = std::move(impl_->refiner);
  *impl_ = *other.impl_;
  impl_->cache.Reset();
  impl_->generation = generation + 1;
  impl_->refiner = std::move(refiner);
  impl_->refining = false;
}

void ConstIntBoundAnalyzer::SetRefiner(Refiner refiner) {
  impl_->refiner = std::move(refiner);
  impl_->Changed();
}

void ConstIntBoundAnalyzer::Invalidate() { impl_->Changed(); }

IntInterval ConstIntBoundAnalyzer::Eval(const PrimExpr& expr) const {
  if (!expr.defined()) TVM_FFI_THROW(ValueError) << "ConstIntBound: undefined expression";
  return BoundEvaluator(impl_.get())(expr);
}

IntInterval ConstIntBoundAnalyzer::Eval(const PrimExprNode* expr) const {
  if (!expr) TVM_FFI_THROW(ValueError) << "ConstIntBound: undefined expression";
  if (const IntInterval* hit = impl_->cache.Find(expr, impl_->generation)) return *hit;
  return BoundEvaluator(impl_.get())(GetRef<PrimExpr>(expr));
}

uint64_t ConstIntBoundAnalyzer::generation() const { return impl_->generation; }

void ConstIntBoundAnalyzer::SetAssumeNoOverflow(bool on) {
  if (impl_->assume_no_overflow == on) return;
  impl_->assume_no_overflow = on;
  impl_->Changed();
}

ConstIntBound ConstIntBoundAnalyzer::operator()(const PrimExpr& expr) const {
  return ToConstIntBound(Eval(expr));
}

void ConstIntBoundAnalyzer::Bind(const Var& var, const Range& range, bool allow_override) {
  IntInterval mn = Eval(range->min), ext = Eval(range->extent);
  IntInterval x{mn.lo, mn.hi + ext.hi - 1};
  Update(var, ToConstIntBound(Intersect(x, DTypeRange(var.dtype().element_of()))), allow_override);
  if (!range->min.as<IntImmNode>() || !range->extent.as<IntImmNode>()) {
    impl_->ranges.insert_or_assign(var, range);
    impl_->Changed();
  }
}

void ConstIntBoundAnalyzer::Update(const Var& var, const ConstIntBound& info, bool allow_override) {
  IntInterval x = ToInterval(info, var.dtype());
  auto it = impl_->bound.find(var);
  if (it != impl_->bound.end() && !allow_override &&
      (it->second.lo != x.lo || it->second.hi != x.hi)) {
    ConstIntBound old = ToConstIntBound(it->second);
    TVM_FFI_THROW(ValueError) << "ConstIntBoundAnalyzer::Update: " << var->name_hint
                              << " is already bound to [" << old->min_value << ", "
                              << old->max_value << "], cannot re-bind it to [" << info->min_value
                              << ", " << info->max_value << "] without allow_override";
  }
  impl_->bound[var] = x;
  impl_->ranges.erase(var);
  impl_->Changed();
}

std::function<void()> ConstIntBoundAnalyzer::EnterConstraint(const PrimExpr& constraint) {
  ConstraintCollector collector(this);
  collector.Collect(constraint, false);
  if (collector.facts.empty()) return nullptr;
  size_t old_size = impl_->scoped.size();
  for (auto& f : collector.facts) impl_->scoped.push_back(std::move(f));
  impl_->Changed();
  Impl* impl = impl_.get();
  return [impl, old_size]() {
    impl->scoped.resize(old_size);
    impl->Changed();
  };
}

std::function<void()> ConstIntBoundAnalyzer::EnterBound(const Var& var, const IntInterval& x) {
  size_t old_size = impl_->scoped.size();
  impl_->scoped.emplace_back(var, x);
  impl_->Changed();
  Impl* impl = impl_.get();
  return [impl, old_size]() {
    impl->scoped.resize(old_size);
    impl->Changed();
  };
}

}  // namespace arith
}  // namespace tessel
