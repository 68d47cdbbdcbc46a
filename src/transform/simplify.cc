// The statement-level Simplify pass (contract in include/tessel/transform/simplify.h).
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/host_facts.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/simplify.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)
using arith::Analyzer;
using arith::ConstraintScope;

namespace {

// Whether evaluating e has no effect (it may read memory).
bool IsSideEffectFree(const PrimExpr& e) {
  bool ok = true;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* call = n.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      if (!op || (op->effect != CallEffectKind::kPure && op->effect != CallEffectKind::kReadState &&
                  op->effect != CallEffectKind::kEmbedding)) {
        ok = false;
      }
    }
  });
  return ok;
}

// Whether e's value depends on nothing but variables: no memory reads, no stateful calls. Only
// such conditions stay true throughout the statements they guard.
bool IsStable(const PrimExpr& e) {
  bool ok = true;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (n.as<BufferLoadNode>()) ok = false;
    if (const auto* call = n.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      if (!op || op->effect != CallEffectKind::kPure) ok = false;
    }
  });
  return ok;
}

// The part of cond that may be used as a fact: cond itself when stable, else the conjunction of
// its stable conjuncts (undefined when there is none).
PrimExpr StablePart(const PrimExpr& cond) {
  if (IsStable(cond)) return cond;
  if (const auto* op = cond.as<AndNode>()) {
    PrimExpr a = StablePart(op->a), b = StablePart(op->b);
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    return And(a, b);
  }
  return PrimExpr();
}

Stmt NoOp() { return Evaluate(Int32(0)); }

bool IsNoOp(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  return ev && ev->value.as<IntImmNode>();
}

// The condition of `T.assume(c)` as a statement.
PrimExpr AssumedCondition(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  if (!ev) return PrimExpr();
  const auto* call = ev->value.as<CallNode>();
  if (!call || !call->op.same_as(builtin::assume()) || call->args.size() != 1) return PrimExpr();
  return call->args[0];
}

// A constraint scope over the stable part of cond, or none.
std::unique_ptr<ConstraintScope> Assume(Analyzer* analyzer, const PrimExpr& cond) {
  if (!cond.defined() || !cond.dtype().is_bool() || !cond.dtype().is_scalar()) return nullptr;
  PrimExpr fact = StablePart(cond);
  if (!fact.defined()) return nullptr;
  return std::make_unique<ConstraintScope>(analyzer, fact);
}

// `shape[i] >= 0` for every integer shape entry of the buffers (undefined when none).
PrimExpr ShapesNonNegative(const std::vector<Buffer>& buffers) {
  PrimExpr all;
  for (const Buffer& buf : buffers) {
    for (const PrimExpr& e : buf->shape) {
      if (!e.dtype().is_int() || !e.dtype().is_scalar() || e.as<IntImmNode>() || !IsStable(e)) {
        continue;
      }
      PrimExpr f = GE(e, MakeConst(e.dtype(), 0));
      all = all.defined() ? PrimExpr(And(all, f)) : f;
    }
  }
  return all;
}

class StmtSimplifier : public StmtExprMutator {
 public:
  explicit StmtSimplifier(Analyzer* analyzer) : analyzer_(analyzer) {}

  using StmtExprMutator::VisitExpr;
  using StmtExprMutator::VisitStmt;

  PrimExpr VisitExpr(const PrimExpr& e) override {
    // Strings (assert messages) and other non-arithmetic leaves have nothing to simplify.
    if (e.as<StringImmNode>()) return e;
    PrimExpr s = analyzer_->Simplify(e);
    // The analyzer may rebuild an unchanged expression: keep the input object then.
    if (s.same_as(e) || tvm::ffi::StructuralEqual::Equal(s, e)) return e;
    return s;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    PrimExpr mn = VisitExpr(op->min);
    PrimExpr extent = VisitExpr(op->extent);
    if (IsSideEffectFree(extent) && analyzer_->CanProve(LE(extent, MakeConst(extent.dtype(), 0)))) {
      return NoOp();
    }
    std::unique_ptr<ConstraintScope> runs;
    if (IsStable(mn) && IsStable(extent) && analyzer_->MayBeNonEmpty(Range(mn, extent))) {
      analyzer_->Bind(op->loop_var, Range(mn, extent), /*allow_override=*/true);
      // The body runs only when the loop does (a fact of the body alone: after the loop, the
      // extent may be 0).
      if (!AsConstInt(extent)) runs = Assume(analyzer_, GT(extent, MakeConst(extent.dtype(), 0)));
    }
    Stmt body = VisitStmt(op->body);
    runs.reset();
    if (mn.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) {
      return GetRef<Stmt>(op);
    }
    return WithSpan(For(op->loop_var, mn, extent, op->kind, body, op->thread_tag, op->annotations),
                    op->span);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "thread_extent") {
      Optional<Var> var;
      if (auto v = op->node.try_cast<Var>()) var = *v;
      if (auto iv = op->node.try_cast<IterVar>()) var = (*iv)->var;
      PrimExpr value = VisitExpr(op->value);
      std::unique_ptr<ConstraintScope> runs;
      if (var && IsStable(value) && value.dtype() == var.value().dtype()) {
        Range r(MakeConst(value.dtype(), 0), value);
        if (analyzer_->MayBeNonEmpty(r)) {
          analyzer_->Bind(*var, r, /*allow_override=*/true);
          if (!AsConstInt(value)) runs = Assume(analyzer_, GT(value, MakeConst(value.dtype(), 0)));
        }
      }
      Stmt body = VisitStmt(op->body);
      runs.reset();
      if (value.same_as(op->value) && body.same_as(op->body)) return GetRef<Stmt>(op);
      return WithSpan(AttrStmt(op->node, op->attr_key, value, body), op->span);
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    PrimExpr cond = VisitExpr(op->condition);
    if (IsSideEffectFree(cond)) {
      if (analyzer_->CanProve(cond)) return VisitStmt(op->then_case);
      if (analyzer_->CanProve(logical_not(cond))) {
        return op->else_case ? VisitStmt(*op->else_case) : NoOp();
      }
    }
    Stmt then_case;
    {
      auto scope = Assume(analyzer_, cond);
      then_case = VisitStmt(op->then_case);
    }
    Optional<Stmt> else_case = op->else_case;
    if (op->else_case) {
      std::unique_ptr<ConstraintScope> scope;
      if (IsStable(cond)) scope = Assume(analyzer_, logical_not(cond));
      else_case = VisitStmt(*op->else_case);
      if (IsNoOp(*else_case)) else_case = std::nullopt;
    }
    bool same_else = (!op->else_case && !else_case) ||
                     (op->else_case && else_case && else_case.value().same_as(*op->else_case));
    if (cond.same_as(op->condition) && then_case.same_as(op->then_case) && same_else) {
      return GetRef<Stmt>(op);
    }
    if (IsNoOp(then_case) && !else_case && IsSideEffectFree(cond)) return NoOp();
    return WithSpan(IfThenElse(cond, then_case, else_case), op->span);
  }

  Stmt VisitStmt_(const AssertStmtNode* op) override {
    PrimExpr cond = VisitExpr(op->condition);
    if (IsSideEffectFree(cond) && analyzer_->CanProve(cond)) return VisitStmt(op->body);
    Stmt body;
    {
      auto scope = Assume(analyzer_, cond);
      body = VisitStmt(op->body);
    }
    if (cond.same_as(op->condition) && body.same_as(op->body)) return GetRef<Stmt>(op);
    return WithSpan(AssertStmt(cond, op->message, body), op->span);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    if (op->var.dtype().is_scalar() && op->var.dtype().is_int_or_uint() &&
        value.dtype() == op->var.dtype() && IsStable(value)) {
      analyzer_->Bind(op->var, value, /*allow_override=*/true);
    }
    Stmt body = VisitStmt(op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) return GetRef<Stmt>(op);
    return WithSpan(LetStmt(op->var, value, body), op->span);
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    std::vector<std::unique_ptr<ConstraintScope>> scopes;
    Array<Stmt> out;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt n = VisitStmt(s);
      if (!n.same_as(s)) changed = true;
      if (IsNoOp(n)) {
        changed = true;
        continue;
      }
      out.push_back(n);
      if (auto scope = Assume(analyzer_, AssumedCondition(n))) scopes.push_back(std::move(scope));
    }
    // Scopes end in reverse order of entry.
    while (!scopes.empty()) scopes.pop_back();
    if (!changed) return GetRef<Stmt>(op);
    if (out.empty()) return NoOp();
    return SeqStmt::Flatten(out);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    auto scope = Assume(analyzer_, ShapesNonNegative({op->buffer}));
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) {
      if (IsStable(iv->dom->min) && IsStable(iv->dom->extent) &&
          iv->dom->min.dtype() == iv->var.dtype() && analyzer_->MayBeNonEmpty(iv->dom)) {
        analyzer_->Bind(iv->var, iv->dom, /*allow_override=*/true);
      }
    }
    std::vector<Buffer> allocs(op->alloc_buffers.begin(), op->alloc_buffers.end());
    auto scope = Assume(analyzer_, ShapesNonNegative(allocs));
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    Array<PrimExpr> values = VisitArray(op->iter_values);
    PrimExpr pred = VisitExpr(op->predicate);
    Stmt block;
    {
      std::unique_ptr<ConstraintScope> scope;
      if (!AsConstInt(pred)) scope = Assume(analyzer_, pred);
      block = VisitStmt(op->block);
    }
    if (values.same_as(op->iter_values) && pred.same_as(op->predicate) &&
        block.same_as(op->block)) {
      return GetRef<Stmt>(op);
    }
    const auto* b = block.as<BlockNode>();
    if (!b) TVM_FFI_THROW(InternalError) << "Simplify: a block was rewritten into a non-block";
    return BlockRealize(values, pred, GetRef<Block>(b));
  }

 private:
  Analyzer* analyzer_;
};

}  // namespace

Stmt Simplify(const Stmt& stmt, Analyzer* analyzer) {
  if (!stmt.defined()) TVM_FFI_THROW(ValueError) << "Simplify: undefined statement";
  if (!analyzer) {
    Analyzer local;
    return StmtSimplifier(&local).VisitStmt(stmt);
  }
  return StmtSimplifier(analyzer).VisitStmt(stmt);
}

namespace {

PrimFunc SimplifyFunction(const PrimFunc& func, bool host_checked) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "Simplify: undefined function";
  Analyzer analyzer;
  std::vector<Buffer> buffers;
  for (const auto& kv : func->buffer_map) buffers.push_back(kv.second);
  Stmt body;
  {
    std::vector<std::unique_ptr<ConstraintScope>> scopes;
    scopes.push_back(Assume(&analyzer, ShapesNonNegative(buffers)));
    if (host_checked) {
      for (const PrimExpr& fact : HostCheckedFacts(func)) {
        scopes.push_back(Assume(&analyzer, fact));
      }
    }
    body = StmtSimplifier(&analyzer).VisitStmt(func->body);
    while (!scopes.empty()) scopes.pop_back();
  }
  return WithBody(func, body);
}

// The names of the functions that another function of mod calls (T.call_global): their bodies
// also run without their host wrappers.
std::unordered_set<std::string> CalledFunctions(const IRModule& mod) {
  std::unordered_set<std::string> called;
  for (const auto& kv : mod->functions) {
    PostOrderVisit(kv.second->body, [&](const ObjectRef& n) {
      if (const auto* call = n.as<CallNode>()) {
        if (const auto* g = call->op.as<GlobalVarNode>()) called.insert(g->name_hint);
      }
    });
  }
  return called;
}

}  // namespace

PrimFunc Simplify(const PrimFunc& func) { return SimplifyFunction(func, /*host_checked=*/true); }

IRModule Simplify(const IRModule& mod) {
  std::unordered_set<std::string> called = CalledFunctions(mod);
  return MapFunctions(mod, [&](const String& name, const PrimFunc& f) {
    return SimplifyFunction(f, !called.count(std::string(name)));
  });
}

TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def(
      "tessel.transform.Simplify", [](ObjectRef node) -> ObjectRef {
        if (auto f = node.as<PrimFunc>()) return Simplify(*f);
        if (auto m = node.as<IRModule>()) return Simplify(*m);
        TVM_FFI_THROW(TypeError)
            << "tessel.transform.Simplify expects a PrimFunc or an IRModule, got "
            << node->GetTypeKey();
        TVM_FFI_UNREACHABLE();
      });
}

}  // namespace transform
}  // namespace tessel
