// The LowerThreadBinding pass (contract in include/tessel/transform/lower_thread_binding.h).
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/pass.h>

#include <string>
#include <unordered_map>
#include <utility>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

std::optional<std::string> ThreadTagOf(const Var& var) {
  std::string name = var->name_hint;
  for (const char* prefix : {"blockIdx", "threadIdx"}) {
    std::string p = prefix;
    if (name.size() < p.size() + 2 || name.compare(0, p.size(), p) != 0) continue;
    char sep = name[p.size()], axis = name[p.size() + 1];
    if (sep != '.' && sep != '_') continue;
    if (axis != 'x' && axis != 'y' && axis != 'z') continue;
    if (name.size() > p.size() + 2 && name[p.size() + 2] != '_') continue;
    return p + "." + axis;
  }
  return std::nullopt;
}

namespace {

bool IsKnownTag(const std::string& tag) {
  for (const char* t :
       {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
    if (tag == t) return true;
  }
  return false;
}

class ThreadBindingLowerer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  explicit ThreadBindingLowerer(std::string function) : function_(std::move(function)) {}

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = subst_.find(op);
    return it == subst_.end() ? GetRef<PrimExpr>(op) : it->second;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->kind != ForKind::kThreadBinding) return StmtExprMutator::VisitStmt_(op);
    std::string tag = op->thread_tag;
    if (!IsKnownTag(tag)) {
      TVM_FFI_THROW(ValueError) << "LowerThreadBinding: loop '" << op->loop_var->name_hint
                                << "' in function '" << function_ << "' is bound to thread \""
                                << tag << "\"; expected blockIdx.[xyz] or threadIdx.[xyz]";
    }
    PrimExpr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    // A loop bound to a thread that an enclosing loop already binds, over the same extent, is
    // that same thread (TVM's schedules bind cooperative copies this way inside a thread loop).
    auto outer = active_.find(tag);
    if (outer != active_.end() && is_zero(min) && SameExtent(outer->second.extent, extent)) {
      subst_[op->loop_var.get()] = outer->second.thread;
      Stmt body = VisitStmt(op->body);
      subst_.erase(op->loop_var.get());
      return body;
    }
    std::string name = tag;
    name[name.find('.')] = '_';
    Var thread(name, op->loop_var->dtype);
    Enter(tag, op->loop_var->name_hint, thread, extent);
    subst_[op->loop_var.get()] = is_zero(min) ? PrimExpr(thread) : add(thread, min);
    Stmt body = VisitStmt(op->body);
    subst_.erase(op->loop_var.get());
    Leave(tag);
    // The loop's span stays on its attribute, so an error about the thread names its line.
    return WithSpan(AttrStmt(thread, "thread_extent", extent, body), op->span);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    std::optional<std::string> tag;
    if (op->attr_key == "thread_extent") {
      if (auto v = op->node.as<Var>()) tag = ThreadTagOf(*v);
    }
    if (!tag) return StmtExprMutator::VisitStmt_(op);
    Var thread = op->node.cast<Var>();
    Enter(*tag, thread->name_hint, thread, op->value);
    Stmt out = StmtExprMutator::VisitStmt_(op);
    Leave(*tag);
    return out;
  }

 private:
  struct Binding {
    std::string var;  // the loop's (or attribute's) variable name, for messages
    Var thread;
    PrimExpr extent;
  };

  void Enter(const std::string& tag, const std::string& var, Var thread, PrimExpr extent) {
    auto it = active_.find(tag);
    if (it != active_.end()) {
      TVM_FFI_THROW(ValueError) << "LowerThreadBinding: thread \"" << tag << "\" is bound twice "
                                << "in one kernel of function '" << function_ << "': '" << var
                                << "' inside '" << it->second.var
                                << "' over a different extent or from a non-zero start";
    }
    active_.emplace(tag, Binding{var, std::move(thread), std::move(extent)});
  }
  static bool SameExtent(const PrimExpr& a, const PrimExpr& b) {
    const auto* x = a.as<IntImmNode>();
    const auto* y = b.as<IntImmNode>();
    if (x && y) return x->value == y->value;
    return a.same_as(b) || (a.as<VarNode>() && a.get() == b.get());
  }
  void Leave(const std::string& tag) { active_.erase(tag); }

  static bool is_zero(const PrimExpr& e) {
    const auto* imm = e.as<IntImmNode>();
    return imm && imm->value == 0;
  }

  std::string function_;
  std::unordered_map<const VarNode*, PrimExpr> subst_;
  std::unordered_map<std::string, Binding> active_;
};

bool HasThreadBinding(const Stmt& body) {
  bool found = false;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (const auto* f = n.as<ForNode>()) found = found || f->kind == ForKind::kThreadBinding;
  });
  return found;
}

std::string NameOf(const PrimFunc& func, const std::string& key) {
  if (auto sym = func.GetGlobalSymbol()) return *sym;
  return key.empty() ? "<anonymous>" : key;
}

PrimFunc Lower(const PrimFunc& func, const std::string& key) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "LowerThreadBinding: undefined function";
  if (!HasThreadBinding(func->body)) return func;
  ThreadBindingLowerer lowerer(NameOf(func, key));
  return WithBody(func, lowerer.VisitStmt(func->body));
}

}  // namespace

PrimFunc LowerThreadBinding(const PrimFunc& func) { return Lower(func, ""); }

IRModule LowerThreadBinding(const IRModule& mod) {
  return MapFunctions(mod, [](const String& name, const PrimFunc& f) { return Lower(f, name); });
}

Pass LowerThreadBindingPass() {
  return CreateModulePass([](IRModule m) { return LowerThreadBinding(m); }, 0,
                          "LowerThreadBinding");
}

}  // namespace transform
}  // namespace tessel
