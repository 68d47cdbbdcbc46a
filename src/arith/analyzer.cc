// The Analyzer facade: bindings, constraint scopes, proofs and the constant-folding Simplify.
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "arith/depth_guard.h"
#include "arith/expr_walk.h"

namespace tessel {
namespace arith {

using namespace ir;  // NOLINT(build/namespaces)

namespace {
std::vector<ExtensionFactory>& DefaultExtensionFactories() {
  static auto* factories = new std::vector<ExtensionFactory>();
  return *factories;
}
}  // namespace

int RegisterDefaultExtension(ExtensionFactory factory) {
  DefaultExtensionFactories().push_back(std::move(factory));
  return 0;
}

Analyzer::Analyzer(NoExtensions) : const_int_bound_(this), modular_set_(this), int_set_(this) {}

Analyzer::Analyzer() : Analyzer(NoExtensions{}) {
  for (const ExtensionFactory& make : DefaultExtensionFactories()) AddExtension(make(this));
}
Analyzer::~Analyzer() = default;

std::unique_ptr<Analyzer> Analyzer::Clone() const {
  // Extensions come from this analyzer's clones, not from the defaults.
  std::unique_ptr<Analyzer> copy(new Analyzer(NoExtensions{}));
  copy->const_int_bound_.CopyStateFrom(const_int_bound_);
  copy->modular_set_.CopyStateFrom(modular_set_);
  copy->bindings_ = bindings_;
  copy->facts_ = facts_;
  copy->assume_no_overflow_ = assume_no_overflow_;
  for (const auto& ext : extensions_) copy->extensions_.push_back(ext->Clone(copy.get()));
  return copy;
}

void Analyzer::SetAssumeNoOverflow(bool on) {
  if (on == assume_no_overflow_) return;
  // Facts already recorded (transitive offsets, the rewrite of bindings) were read under the
  // old semantics: the mode is chosen before anything is bound.
  if (!bindings_.empty() || !facts_.empty()) {
    TVM_FFI_THROW(ValueError) << "Analyzer::SetAssumeNoOverflow: the overflow mode must be set "
                                 "before any variable is bound or constraint scope entered";
  }
  assume_no_overflow_ = on;
  const_int_bound_.SetAssumeNoOverflow(on);  // a new generation: modular sets recompute too
}

void Analyzer::CheckRebind(const Var& var, const ObjectRef& binding, bool allow_override) {
  if (!var.defined()) TVM_FFI_THROW(ValueError) << "Analyzer::Bind: undefined variable";
  auto it = bindings_.find(var);
  if (it != bindings_.end() && !allow_override &&
      !tvm::ffi::StructuralEqual::Equal((*it).second, binding)) {
    TVM_FFI_THROW(ValueError) << "Analyzer::Bind: " << var->name_hint
                              << " is already bound to a different "
                              << ((*it).second.as<RangeNode>() ? "range" : "value")
                              << "; pass allow_override=true to re-bind it";
  }
  bindings_.Set(var, binding);
}

bool Analyzer::MayBeNonEmpty(const Range& range) const {
  return range.defined() && const_int_bound_(range->extent)->max_value >= 1;
}

void Analyzer::Bind(const Var& var, const Range& range, bool allow_override) {
  if (!range.defined()) TVM_FFI_THROW(ValueError) << "Analyzer::Bind: undefined range";
  // An empty range makes every later fact about var vacuously true: refuse it rather than let
  // `y == 0` and `y == 5` both be "proved".
  if (!MayBeNonEmpty(range)) {
    TVM_FFI_THROW(ValueError) << "Analyzer::Bind: " << var->name_hint << ": the range with min "
                              << ir::AsText(range->min) << " and extent "
                              << ir::AsText(range->extent)
                              << " is empty; a range needs an extent of at least 1";
  }
  if (auto ext = AsConstInt(range->extent); ext && *ext == 1) {
    return Bind(var, range->min, allow_override);
  }
  bool was_bound = bindings_.count(var) != 0;
  CheckRebind(var, range, allow_override);
  const_int_bound_.Bind(var, range, true);
  // A range says nothing about residues; only an earlier (overridden) value binding must go.
  if (was_bound) modular_set_.Update(var, ModularSet::Everything(), true);
  for (auto& ext : extensions_) ext->OnBind(var, range, std::nullopt);
}

void Analyzer::Bind(const Var& var, const PrimExpr& value, bool allow_override) {
  if (!value.defined()) TVM_FFI_THROW(ValueError) << "Analyzer::Bind: undefined value";
  if (value.dtype() != var.dtype()) {
    TVM_FFI_THROW(TypeError) << "Analyzer::Bind: " << var->name_hint << " has dtype " << var.dtype()
                             << " but the value has " << value.dtype();
  }
  CheckRebind(var, value, allow_override);
  const_int_bound_.Update(var, const_int_bound_(value), true);
  modular_set_.Update(var, modular_set_(value), true);
  for (auto& ext : extensions_) ext->OnBind(var, std::nullopt, value);
}

arith::ConstIntBound Analyzer::ConstIntBound(const PrimExpr& expr) const {
  return const_int_bound_(expr);
}
arith::ModularSet Analyzer::ModularSet(const PrimExpr& expr) const { return modular_set_(expr); }
arith::IntSet Analyzer::IntSet(const PrimExpr& expr, const Map<Var, arith::IntSet>& dom) const {
  return int_set_(expr, dom);
}
arith::IntSet Analyzer::IntSet(const PrimExpr& expr, const Map<Var, Range>& dom) const {
  return int_set_(expr, dom);
}

std::function<void()> Analyzer::EnterConstraint(const PrimExpr& cond) {
  if (!cond.defined()) TVM_FFI_THROW(ValueError) << "ConstraintScope: undefined condition";
  std::vector<std::function<void()>> undo;
  // Facts are computed from the state before this scope, then recorded, so each sub-analyzer
  // sees the same picture.
  undo.push_back(const_int_bound_.EnterConstraint(cond));
  undo.push_back(modular_set_.EnterConstraint(cond));
  for (auto& ext : extensions_) undo.push_back(ext->EnterConstraint(cond));
  size_t old_facts = facts_.size();
  facts_.push_back(cond);
  return [this, undo = std::move(undo), old_facts]() {
    facts_.resize(old_facts);
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (*it) (*it)();
    }
  };
}

namespace {

ProofResult Negate(ProofResult r) {
  if (r == ProofResult::kProved) return ProofResult::kDisproved;
  if (r == ProofResult::kDisproved) return ProofResult::kProved;
  return r;
}

bool IsPure(const PrimExpr& e) {
  bool pure = true;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* call = n.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      if (!op || op->effect > CallEffectKind::kReadState) pure = false;
    }
  });
  return pure;
}

}  // namespace

ProofResult Analyzer::Decide(const PrimExpr& cond) {
  DepthGuard level;
  if (auto c = AsConstInt(cond)) return *c ? ProofResult::kProved : ProofResult::kDisproved;
  if (const auto* op = cond.as<NotNode>()) return Negate(Decide(op->a));
  if (const auto* op = cond.as<AndNode>()) {
    ProofResult a = Decide(op->a), b = Decide(op->b);
    if (a == ProofResult::kDisproved || b == ProofResult::kDisproved) {
      return ProofResult::kDisproved;
    }
    if (a == ProofResult::kProved && b == ProofResult::kProved) return ProofResult::kProved;
    return ProofResult::kUnknown;
  }
  if (const auto* op = cond.as<OrNode>()) {
    ProofResult a = Decide(op->a), b = Decide(op->b);
    if (a == ProofResult::kProved || b == ProofResult::kProved) return ProofResult::kProved;
    if (a == ProofResult::kDisproved && b == ProofResult::kDisproved) {
      return ProofResult::kDisproved;
    }
    return ProofResult::kUnknown;
  }
  for (const PrimExpr& fact : facts_) {
    if (tvm::ffi::StructuralEqual::Equal(fact, cond)) return ProofResult::kProved;
  }
  if (!cond.dtype().is_scalar()) return ProofResult::kUnknown;
  IntInterval b = const_int_bound_.Eval(cond);
  if (b.lo >= 1) return ProofResult::kProved;
  if (b.hi <= 0) return ProofResult::kDisproved;
  // Equality from residues: a == b is impossible when their modular sets do not meet.
  const EQNode* eq = cond.as<EQNode>();
  const NENode* ne = cond.as<NENode>();
  if ((eq || ne) && (eq ? eq->a : ne->a).dtype().is_int_or_uint()) {
    arith::ModularSet ma = modular_set_(eq ? eq->a : ne->a);
    arith::ModularSet mb = modular_set_(eq ? eq->b : ne->b);
    ProofResult r = ProofResult::kUnknown;
    i128 g = GcdI128(ma->coeff, mb->coeff);
    i128 diff = static_cast<i128>(ma->base) - mb->base;
    if (g == 0) {
      r = diff == 0 ? ProofResult::kProved : ProofResult::kDisproved;
    } else if (diff % g != 0) {
      r = ProofResult::kDisproved;
    }
    return eq ? r : Negate(r);
  }
  return ProofResult::kUnknown;
}

bool Analyzer::CanProve(const PrimExpr& cond, ProofStrength strength) {
  if (!cond.defined()) TVM_FFI_THROW(ValueError) << "CanProve: undefined condition";
  if (!cond.dtype().is_bool()) {
    TVM_FFI_THROW(TypeError) << "CanProve: condition must be bool, got " << cond.dtype();
  }
  ++stats_can_prove_calls_;
  if (Decide(cond) == ProofResult::kProved) return true;
  using Stage = AnalyzerExtension::Stage;
  auto try_cheap_extensions = [&](const PrimExpr& c) {
    for (auto& ext : extensions_) {
      if (ext->stage() == Stage::kProver) break;
      if (ext->TryProve(c, strength) == ProofResult::kProved) return true;
    }
    return false;
  };
  if (try_cheap_extensions(cond)) return true;
  // Simplifying can decide what the parts could not (a canonical form turns
  // `(bx * 64 + tx) // 64 == bx` into true). Simplification may itself ask CanProve; the guard
  // keeps that inner question to the methods above, so the recursion is one level deep.
  PrimExpr target = cond;
  if (!in_prove_simplify_) {
    in_prove_simplify_ = true;
    PrimExpr simplified;
    try {
      simplified = Simplify(cond);
    } catch (...) {
      in_prove_simplify_ = false;
      throw;
    }
    in_prove_simplify_ = false;
    if (auto v = AsConstInt(simplified)) return *v != 0;
    if (!simplified.same_as(cond)) {
      if (Decide(simplified) == ProofResult::kProved) return true;
      if (try_cheap_extensions(simplified)) return true;
      target = simplified;
    }
  }
  // The last resort (the Z3 prover), only after every cheap method failed.
  for (auto& ext : extensions_) {
    if (ext->stage() != Stage::kProver) continue;
    if (ext->TryProve(target, strength) == ProofResult::kProved) return true;
  }
  return false;
}

bool Analyzer::CanProveGreaterEqual(const PrimExpr& expr, int64_t lower_bound) {
  IntInterval b = const_int_bound_.Eval(expr);
  if (b.lo >= lower_bound) return true;
  if (!extensions_.empty()) return CanProve(ge(expr, MakeConst(expr.dtype(), lower_bound)));
  return false;
}

bool Analyzer::CanProveLess(const PrimExpr& expr, int64_t upper_bound) {
  IntInterval b = const_int_bound_.Eval(expr);
  if (b.hi < upper_bound) return true;
  if (!extensions_.empty()) return CanProve(lt(expr, MakeConst(expr.dtype(), upper_bound)));
  return false;
}

bool Analyzer::CanProveEqual(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b) || (IsPure(a) && tvm::ffi::StructuralEqual::Equal(a, b))) return true;
  if (a.dtype().is_int_or_uint() && a.dtype() == b.dtype()) {
    // a - b == 0 (mod 2^bits) exactly when a == b, so a [0, 0] bound of the wrapped difference
    // proves equality even where the subtraction overflows.
    IntInterval d = const_int_bound_.Eval(Simplify(sub(a, b)));
    if (d.lo == 0 && d.hi == 0) return true;
  }
  return CanProve(eq(a, b));
}

namespace {

// Rebuilds an expression through the folding helpers of ops.h and replaces known-valued pure
// integer subexpressions by constants.
class ConstantSimplifier : public ExprMutator {
 public:
  explicit ConstantSimplifier(Analyzer* analyzer) : analyzer_(analyzer) {}

  PrimExpr VisitExpr(const PrimExpr& e) final {
    DepthGuard level;
    return Known(ExprMutator::VisitExpr(e));
  }

  using ExprMutator::VisitExpr_;
  // A node whose operands came back unchanged is returned as itself when its helper could only
  // rebuild it: no allocation, and the bound caches keyed by node stay valid for later stages.
#define TESSEL_FOLD_BINARY(Node, helper)                  \
  PrimExpr VisitExpr_(const Node* op) final {             \
    PrimExpr a = VisitExpr(op->a), b = VisitExpr(op->b);  \
    if (Unchanged(op, a, b)) return GetRef<PrimExpr>(op); \
    return helper(a, b);                                  \
  }
  TESSEL_FOLD_BINARY(AddNode, add)
  TESSEL_FOLD_BINARY(SubNode, sub)
  TESSEL_FOLD_BINARY(MulNode, mul)
  TESSEL_FOLD_BINARY(MinNode, min)
  TESSEL_FOLD_BINARY(MaxNode, max)
  TESSEL_FOLD_BINARY(EQNode, eq)
  TESSEL_FOLD_BINARY(NENode, ne)
  TESSEL_FOLD_BINARY(LTNode, lt)
  TESSEL_FOLD_BINARY(LENode, le)
  TESSEL_FOLD_BINARY(GTNode, gt)
  TESSEL_FOLD_BINARY(GENode, ge)
  TESSEL_FOLD_BINARY(AndNode, logical_and)
  TESSEL_FOLD_BINARY(OrNode, logical_or)
#undef TESSEL_FOLD_BINARY

  // A division by a constant zero is kept as written: it is the program's, not ours to fold.

  PrimExpr VisitExpr_(const DivNode* op) final { return Division<Div>(op, div); }
  PrimExpr VisitExpr_(const ModNode* op) final { return Division<Mod>(op, truncmod); }
  PrimExpr VisitExpr_(const FloorDivNode* op) final { return Division<FloorDiv>(op, floordiv); }
  PrimExpr VisitExpr_(const FloorModNode* op) final { return Division<FloorMod>(op, floormod); }

  PrimExpr VisitExpr_(const NotNode* op) final {
    PrimExpr a = VisitExpr(op->a);
    if (a.same_as(op->a) && !IsConstant(a)) return GetRef<PrimExpr>(op);
    return logical_not(a);
  }
  PrimExpr VisitExpr_(const CastNode* op) final {
    PrimExpr v = VisitExpr(op->value);
    if (v.same_as(op->value) && !IsConstant(v) && v.dtype() != op->dtype && op->dtype.is_scalar() &&
        v.dtype().is_scalar()) {
      return GetRef<PrimExpr>(op);
    }
    return cast(op->dtype, v);
  }
  PrimExpr VisitExpr_(const SelectNode* op) final {
    PrimExpr c = VisitExpr(op->condition), t = VisitExpr(op->true_value),
             f = VisitExpr(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value) &&
        !IsConstant(c) && t.dtype() == f.dtype()) {
      return GetRef<PrimExpr>(op);
    }
    return select(c, t, f);
  }
  PrimExpr VisitExpr_(const CallNode* op) final {
    PrimExpr e = ExprMutator::VisitExpr_(op);
    const auto* call = e.as<CallNode>();
    if (!call) return e;
    const ObjectRef& f = call->op;
    const Array<PrimExpr>& args = call->args;
    if (f.same_as(builtin::if_then_else())) return if_then_else(args[0], args[1], args[2]);
    if (f.same_as(builtin::shift_left())) return shift_left(args[0], args[1]);
    if (f.same_as(builtin::shift_right())) return shift_right(args[0], args[1]);
    if (f.same_as(builtin::bitwise_and())) return bitwise_and(args[0], args[1]);
    if (f.same_as(builtin::bitwise_or())) return bitwise_or(args[0], args[1]);
    if (f.same_as(builtin::bitwise_xor())) return bitwise_xor(args[0], args[1]);
    if (f.same_as(builtin::bitwise_not())) return bitwise_not(args[0]);
    return e;
  }

 private:
  template <typename T, typename F>
  PrimExpr Division(const typename T::ContainerType* op, F helper) {
    PrimExpr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (Unchanged(op, a, b)) return GetRef<PrimExpr>(op);
    auto c = AsConstInt(b);
    if (c && *c == 0) return T(a, b);
    return helper(a, b);
  }

  static bool IsConstant(const PrimExpr& e) {
    if (const auto* b = e.as<BroadcastNode>()) return IsConstant(b->value);
    return e->IsInstance<IntImmNode>() || e->IsInstance<FloatImmNode>();
  }
  // 0 or 1 (or a broadcast of one): the only constants the helpers simplify against a
  // non-constant operand (x + 0, x * 1, x * 0, x // 1, x % 1, b and True, ...).
  static bool IsZeroOrOne(const PrimExpr& e) {
    if (const auto* b = e.as<BroadcastNode>()) return IsZeroOrOne(b->value);
    if (const auto* i = e.as<IntImmNode>()) return i->value == 0 || i->value == 1;
    if (const auto* f = e.as<FloatImmNode>()) return f->value == 0 || f->value == 1;
    return false;
  }
  // The binary helpers of ops.h fold two constant operands, simplify against 0 or 1, collapse
  // min/max of one object and cast mismatched dtypes: with the same operands and none of these,
  // they would rebuild op as it is.
  template <typename N>
  static bool Unchanged(const N* op, const PrimExpr& a, const PrimExpr& b) {
    return a.same_as(op->a) && b.same_as(op->b) && !(IsConstant(a) && IsConstant(b)) &&
           !IsZeroOrOne(a) && !IsZeroOrOne(b) && !a.same_as(b) && a.dtype() == b.dtype();
  }

  // Whether the modular set of e can be a single value when its operands (already visited, so
  // constant when their own sets were) are not constants. Of + - *, division, min, max and select
  // it cannot: their sets are exact constants only over constant operands (or a factor 0, which the
  // helpers fold). A remainder can ((x * 4) % 4), and so can a variable with a modular fact.
  static bool MayBeModularConstant(const PrimExprNode* e) {
    switch (KindOf(e)) {
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kFloorDiv:
      case ExprKind::kMin:
      case ExprKind::kMax:
      case ExprKind::kSelect:
        return false;
      default:
        return true;
    }
  }

  // e by value, moved in and out: an unchanged node costs no reference-count update (an atomic
  // operation, several per node add up to a good part of a simplification).
  PrimExpr Known(PrimExpr e) {
    DataType t = e.dtype();
    if (!t.is_scalar() || !(t.is_int_or_uint() || t.is_bool()) || e.as<IntImmNode>()) return e;
    IntInterval b = analyzer_->const_int_bound_analyzer().Eval(e);
    std::optional<i128> value;
    if (b.is_point()) {
      value = b.lo;
    } else if (t.is_int_or_uint() && MayBeModularConstant(e.get())) {
      auto [coeff, base] = analyzer_->modular_set_analyzer().Eval(e);
      if (coeff == 0) value = base;
    }
    if (!value || !FitsInDType(t, *value) || !IsPure(e)) return e;
    return IntImm(t, WrapToDType(t, *value));
  }

  Analyzer* analyzer_;
};

// Whether the constant pass could fold something in e that the rewrite stage would not: it is
// skipped (a traversal with a reference-count update per node, about a tenth of a call) when e is
// scalar integer arithmetic, comparisons, logic, min/max and select over variables and constants,
// all of which the rewriter folds itself (constant operands, bounds that pin a value down,
// variables bound to a value). Floats, vectors, casts, calls, lets and loads go through it.
bool NeedsConstantPass(const PrimExprNode* e) {
  return AnyNode(e, [](const PrimExprNode* n) -> std::optional<bool> {
    DataType t = n->dtype;
    if (!t.is_scalar() || !(t.is_int_or_uint() || t.is_bool())) return true;
    switch (KindOf(n)) {
      case ExprKind::kIntImm:
      case ExprKind::kVar:
      case ExprKind::kSizeVar:
        return false;
      case ExprKind::kNot:
      case ExprKind::kCast:
        return true;
      default:
        return std::nullopt;  // operands of arithmetic, comparisons, logic, select; else yes
    }
  });
}

}  // namespace

PrimExpr Analyzer::Simplify(const PrimExpr& expr, int steps) {
  if (!expr.defined()) TVM_FFI_THROW(ValueError) << "Simplify: undefined expression";
  bool rewrites = false;
  for (const auto& ext : extensions_)
    rewrites = rewrites || ext->stage() == AnalyzerExtension::Stage::kRewrite;
  PrimExpr e = steps > 0 && rewrites && !NeedsConstantPass(expr.get())
                   ? expr
                   : ConstantSimplifier(this)(expr);
  // Rewriting can expose canonical forms and vice versa: run the stages in order until nothing
  // changes or the step budget is spent. Each stage returns a fixed point of its own (its output
  // run through it again comes back unchanged), so once every other stage has left the
  // expression alone, the stage that changed it last need not see it again.
  const size_t n = extensions_.size();
  size_t last_changed = n;
  for (int round = 0; round < steps; ++round) {
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      if (i == last_changed && !changed && round > 0) return e;
      PrimExpr next = extensions_[i]->Simplify(e);
      if (!next.same_as(e)) {
        e = std::move(next);
        last_changed = i;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return e;
}

PrimExpr Analyzer::SimplifyWithStage(const PrimExpr& expr, AnalyzerExtension::Stage stage) {
  if (!expr.defined()) TVM_FFI_THROW(ValueError) << "Simplify: undefined expression";
  PrimExpr e = expr;
  for (auto& ext : extensions_) {
    if (ext->stage() == stage) e = ext->Simplify(e);
  }
  return e;
}

PrimExpr Analyzer::RewriteSimplify(const PrimExpr& expr) {
  return SimplifyWithStage(expr, AnalyzerExtension::Stage::kRewrite);
}

PrimExpr Analyzer::CanonicalSimplify(const PrimExpr& expr) {
  return SimplifyWithStage(expr, AnalyzerExtension::Stage::kCanonical);
}

bool Analyzer::RemoveExtension(const std::string& name) {
  // An open scope's undo refers to every extension that saw its fact.
  if (!facts_.empty()) {
    TVM_FFI_THROW(ValueError) << "Analyzer::RemoveExtension(\"" << name << "\"): " << facts_.size()
                              << " constraint scope(s) are open; remove "
                              << "extensions before entering scopes";
  }
  for (auto it = extensions_.begin(); it != extensions_.end(); ++it) {
    if (name == (*it)->name()) {
      extensions_.erase(it);
      return true;
    }
  }
  return false;
}

AnalyzerExtension* Analyzer::FindExtension(const std::string& name) const {
  for (const auto& ext : extensions_) {
    if (name == ext->name()) return ext.get();
  }
  return nullptr;
}

void Analyzer::AddExtension(std::unique_ptr<AnalyzerExtension> extension) {
  if (!extension) TVM_FFI_THROW(ValueError) << "Analyzer::AddExtension: null extension";
  auto pos =
      std::upper_bound(extensions_.begin(), extensions_.end(), extension->stage(),
                       [](AnalyzerExtension::Stage s, const auto& e) { return s < e->stage(); });
  extensions_.insert(pos, std::move(extension));
}

ConstraintScope::ConstraintScope(Analyzer* analyzer, const PrimExpr& constraint)
    : exit_(analyzer->EnterConstraint(constraint)) {}

ConstraintScope::~ConstraintScope() {
  if (exit_) exit_();
}

}  // namespace arith
}  // namespace tessel
