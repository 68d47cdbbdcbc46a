// The IR verifier (see verify_well_formed.h for the rules). One depth-first walk per function keeps
// the variables and buffers in scope, and every variable's first binding site.
#include <tessel/ir/builtin_hopper.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace tessel {
namespace transform {

namespace {

using namespace ir;  // NOLINT(build/namespaces): the verifier names most IR node kinds

constexpr char kFreeVar[] = "free_var";
constexpr char kUndeclaredBuffer[] = "undeclared_buffer";
constexpr char kReboundVar[] = "rebound_var";
constexpr char kVectorIndex[] = "vector_index";
constexpr char kAllocateDtype[] = "allocate_dtype";
constexpr char kIterVarDtype[] = "iter_var_dtype";
constexpr char kNegativeSize[] = "negative_size";
constexpr char kDivByZero[] = "div_by_zero";
constexpr char kHopperBuiltin[] = "hopper_builtin";

// The value of an integer constant (also a broadcast one), if `e` is one.
std::optional<int64_t> ConstValue(const PrimExpr& e) {
  if (const auto* imm = e.as<IntImmNode>()) return imm->value;
  if (const auto* b = e.as<BroadcastNode>()) return ConstValue(b->value);
  return std::nullopt;
}

// Lines of a printed node kept in an error message.
constexpr int kMaxPrintedLines = 8;

enum class BindKind {
  kParam,
  kBufferShape,
  kBufferData,
  kFor,
  kLetStmt,
  kLet,
  kAllocate,
  kIterVar,
  kMatchBuffer,
  kThread
};

const char* BindKindName(BindKind k) {
  switch (k) {
    case BindKind::kParam:
      return "a function parameter";
    case BindKind::kBufferShape:
      return "a parameter buffer's shape";
    case BindKind::kBufferData:
      return "a buffer declaration (its data variable)";
    case BindKind::kFor:
      return "a For loop";
    case BindKind::kLetStmt:
      return "a LetStmt";
    case BindKind::kLet:
      return "a Let expression";
    case BindKind::kAllocate:
      return "an Allocate";
    case BindKind::kIterVar:
      return "a block iteration variable";
    case BindKind::kMatchBuffer:
      return "a match_buffer shape";
    case BindKind::kThread:
      return "a thread_extent attribute";
  }
  return "a binder";
}

std::string Describe(const Var& v) {
  return "'" + std::string(v->name_hint) + "' (" + v->dtype.str() + ")";
}

// AsText of `node`, indented, cut after kMaxPrintedLines lines.
std::string PrintIndented(const ObjectRef& node) {
  std::string text;
  try {
    text = AsText(node);
  } catch (const tvm::ffi::Error& e) {
    text = "<" + std::string(node->GetTypeKey()) + " that does not print: " + e.message() + ">";
    ir::ClearErrorSpan();  // the printer's error is dropped here: its location must not linger
  }
  std::istringstream in(text);
  std::ostringstream out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (n++ == kMaxPrintedLines) {
      out << "      ...\n";
      break;
    }
    out << "      " << line << "\n";
  }
  return out.str();
}

class Checker : public StmtExprVisitor {
 public:
  Checker(std::string function, std::vector<VerifyError>* errors)
      : function_(std::move(function)), errors_(errors) {}

  void CheckFunction(const PrimFunc& func) {
    ReadAllowedFreeVars(func);
    for (const Var& p : func->params) Bind(p, BindKind::kParam, func);
    // Bare variables in parameter buffers are bound by the caller's arguments, whichever buffer
    // they appear in first; other shape expressions then use them.
    std::vector<Buffer> buffers;
    for (const Var& p : func->params) {
      auto it = func->buffer_map.find(p);
      if (it == func->buffer_map.end()) continue;
      Buffer buf = (*it).second;
      buffers.push_back(buf);
      DeclareBuffer(buf);
      if (!buf->data.same_as(p)) Bind(buf->data, BindKind::kBufferData, func);
    }
    for (const Buffer& buf : buffers) BindBareShapeVars(buf, BindKind::kBufferShape, func);
    for (const Buffer& buf : buffers) VisitBufferExprs(buf);
    VisitStmt(func->body);
  }

  void VisitStmt(const Stmt& s) override {
    stmts_.push_back(s);
    StmtExprVisitor::VisitStmt(s);
    stmts_.pop_back();
  }

  // ---- expressions ----
  void VisitExpr_(const VarNode* op) override { Use(GetRef<Var>(op), GetRef<ObjectRef>(op)); }

  // Integer division or remainder by the constant 0 has no value (floats give inf or nan).
#define TESSEL_X(Name)                                                                    \
  void VisitExpr_(const Name##Node* op) override {                                        \
    auto b = ConstValue(op->b);                                                           \
    if (b && *b == 0 && op->dtype.is_int_or_uint()) {                                     \
      Report(kDivByZero, "integer division or remainder by zero", GetRef<ObjectRef>(op)); \
    }                                                                                     \
    StmtExprVisitor::VisitExpr_(op);                                                      \
  }
  TESSEL_X(Div)
  TESSEL_X(Mod)
  TESSEL_X(FloorDiv)
  TESSEL_X(FloorMod)
#undef TESSEL_X

  void VisitExpr_(const CallNode* op) override {
    if (auto o = op->op.as<Op>();
        o && (IsHopperBuiltin((*o)->name) || (*o)->name == "tma_descriptor")) {
      std::string error = CheckHopperCall(op);
      if (!error.empty()) Report(kHopperBuiltin, error, GetRef<ObjectRef>(op));
    }
    StmtExprVisitor::VisitExpr_(op);
  }

  void VisitExpr_(const LetNode* op) override {
    VisitExpr(op->value);
    Bind(op->var, BindKind::kLet, GetRef<ObjectRef>(op), op->value);
    VisitExpr(op->body);
    Unbind(op->var);
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    UseBuffer(op->buffer, GetRef<ObjectRef>(op));
    CheckIndices(op->buffer, op->indices, GetRef<ObjectRef>(op));
    for (const PrimExpr& i : op->indices) VisitExpr(i);
  }

  // ---- statements ----
  void VisitStmt_(const BufferStoreNode* op) override {
    UseBuffer(op->buffer, GetRef<ObjectRef>(op));
    CheckIndices(op->buffer, op->indices, GetRef<ObjectRef>(op));
    VisitExpr(op->value);
    for (const PrimExpr& i : op->indices) VisitExpr(i);
  }

  void VisitStmt_(const LetStmtNode* op) override {
    VisitExpr(op->value);
    Bind(op->var, BindKind::kLetStmt, GetRef<ObjectRef>(op));
    VisitStmt(op->body);
    Unbind(op->var);
  }

  void VisitStmt_(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    auto extent = ConstValue(op->extent);
    if (op->kind == ForKind::kVectorized && extent && *extent <= 0) {
      Report(kNegativeSize,
             "vectorized loop '" + std::string(op->loop_var->name_hint) + "' has extent " +
                 std::to_string(*extent) + "; a vectorized loop needs a positive extent",
             GetRef<ObjectRef>(op));
    }
    Bind(op->loop_var, BindKind::kFor, GetRef<ObjectRef>(op));
    VisitStmt(op->body);
    Unbind(op->loop_var);
  }

  void VisitStmt_(const AllocateNode* op) override {
    for (size_t i = 0; i < op->extents.size(); ++i) {
      VisitExpr(op->extents[i]);
      auto v = ConstValue(op->extents[i]);
      if (v && *v < 0) {
        Report(kNegativeSize,
               "Allocate " + Describe(op->buffer_var) + " has extents[" + std::to_string(i) +
                   "] = " + std::to_string(*v) + "; a size cannot be negative",
               GetRef<ObjectRef>(op));
      }
    }
    VisitExpr(op->condition);
    DataType pointee = op->buffer_var->pointee;
    if (!(pointee == op->dtype)) {
      std::ostringstream msg;
      msg << "Allocate of " << op->dtype.str() << " elements: its buffer_var "
          << Describe(op->buffer_var) << " points to "
          << (pointee.is_void() ? std::string("void (no element type)") : pointee.str());
      Report(kAllocateDtype, msg.str(), GetRef<ObjectRef>(op));
    }
    Bind(op->buffer_var, BindKind::kAllocate, GetRef<ObjectRef>(op));
    VisitStmt(op->body);
    Unbind(op->buffer_var);
  }

  void VisitStmt_(const DeclBufferNode* op) override {
    Use(op->buffer->data, GetRef<ObjectRef>(op));
    VisitBufferExprs(op->buffer);
    DeclareBuffer(op->buffer);
    VisitStmt(op->body);
    UndeclareBuffer(op->buffer);
  }

  void VisitStmt_(const AttrStmtNode* op) override {
    VisitExpr(op->value);
    // A null node (None in the text) converts to a null Var: test the pointer. An IterVar node
    // (TVM's spelling of a thread axis) stands for its variable.
    std::optional<Var> var;
    if (const auto* v = op->node.as<VarNode>()) {
      var = GetRef<Var>(v);
    } else if (const auto* iv = op->node.as<IterVarNode>()) {
      var = iv->var;
    }
    bool binds = var && (op->attr_key == "thread_extent" || op->attr_key == "virtual_thread");
    if (binds) {
      Bind(*var, BindKind::kThread, GetRef<ObjectRef>(op));
    } else if (var) {
      Use(*var, GetRef<ObjectRef>(op));
    }
    VisitStmt(op->body);
    if (binds) Unbind(*var);
  }

  void VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    for (size_t i = 0; i < op->iter_values.size() && i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      DataType want = iv->var->dtype;
      auto check = [&](const PrimExpr& e, const char* what) {
        if (e->dtype == want) return;
        std::ostringstream msg;
        msg << "block '" << block->name_hint << "': iteration variable " << Describe(iv->var)
            << " has " << what << " of dtype " << e->dtype.str();
        Report(kIterVarDtype, msg.str(), e);
      };
      check(op->iter_values[i], "a bound value");
      check(iv->dom->min, "a domain min");
      check(iv->dom->extent, "a domain extent");
    }
    for (const PrimExpr& v : op->iter_values) VisitExpr(v);
    VisitExpr(op->predicate);
    VisitStmt(op->block);
  }

  void VisitStmt_(const BlockNode* op) override {
    ObjectRef self = GetRef<ObjectRef>(op);
    std::vector<Var> bound;
    auto bind = [&](const Var& v, BindKind kind) {
      Bind(v, kind, self);
      bound.push_back(v);
    };
    for (const IterVar& iv : op->iter_vars) {
      VisitExpr(iv->dom->min);
      VisitExpr(iv->dom->extent);
    }
    for (const IterVar& iv : op->iter_vars) bind(iv->var, BindKind::kIterVar);
    for (const Buffer& b : op->alloc_buffers) {
      VisitBufferExprs(b);
      bind(b->data, BindKind::kBufferData);
      DeclareBuffer(b);
    }
    for (const MatchBufferRegion& m : op->match_buffers) {
      CheckRegion(m->source, self);
      for (const Var& v : BindBareShapeVars(m->buffer, BindKind::kMatchBuffer, self)) {
        bound.push_back(v);
      }
      VisitBufferExprs(m->buffer);
      bind(m->buffer->data, BindKind::kBufferData);
      DeclareBuffer(m->buffer);
    }
    for (const BufferRegion& r : op->reads) CheckRegion(r, self);
    for (const BufferRegion& r : op->writes) CheckRegion(r, self);
    if (op->init) VisitStmt(*op->init);
    VisitStmt(op->body);
    for (const MatchBufferRegion& m : op->match_buffers) UndeclareBuffer(m->buffer);
    for (const Buffer& b : op->alloc_buffers) UndeclareBuffer(b);
    for (auto it = bound.rbegin(); it != bound.rend(); ++it) Unbind(*it);
  }

 private:
  struct Site {
    BindKind kind;
    ObjectRef node;
    PrimExpr let_value;
  };

  void ReadAllowedFreeVars(const PrimFunc& func) {
    auto it = func->attrs.find("tessel.free_vars");
    if (it == func->attrs.end()) return;
    auto names = (*it).second.try_cast<Array<String>>();
    if (!names) {
      Report(kFreeVar, "attrs[\"tessel.free_vars\"] must be a list of variable names (strings)",
             func);
      return;
    }
    for (const String& n : *names) allowed_free_.insert(n);
  }

  void Bind(const Var& v, BindKind kind, const ObjectRef& site, PrimExpr let_value = PrimExpr()) {
    const VarNode* key = v.get();
    auto prev = first_site_.find(key);
    if (prev != first_site_.end()) {
      const Site& p = prev->second;
      bool in_scope = scope_count_[key] > 0;
      bool same_let = kind == BindKind::kLet && p.kind == BindKind::kLet &&
                      tvm::ffi::StructuralEqual::Equal(p.let_value, let_value);
      bool sibling_thread = !in_scope && kind == BindKind::kThread && p.kind == BindKind::kThread;
      if (!same_let && !sibling_thread) {
        std::ostringstream msg;
        msg << "variable " << Describe(v) << " is bound by " << BindKindName(kind) << ", but "
            << (in_scope ? "it is already in scope, bound by "
                         : "it is already bound elsewhere by ")
            << BindKindName(p.kind);
        if (kind == BindKind::kLet && p.kind == BindKind::kLet) msg << " to a different value";
        ReportOnce(kReboundVar, v.get(), msg.str(), site);
      }
    } else {
      first_site_.emplace(key, Site{kind, site, let_value});
    }
    ++scope_count_[key];
  }

  void Unbind(const Var& v) { --scope_count_[v.get()]; }

  void Use(const Var& v, const ObjectRef& node) {
    auto it = scope_count_.find(v.get());
    if (it != scope_count_.end() && it->second > 0) return;
    if (allowed_free_.count(std::string(v->name_hint))) return;
    std::ostringstream msg;
    msg << "variable " << Describe(v) << " is used where nothing binds it";
    auto site = first_site_.find(v.get());
    if (site != first_site_.end()) {
      msg << " (it is bound by " << BindKindName(site->second.kind)
          << " whose scope does not include this use)";
    } else {
      msg << " (declare it in the function's attrs under \"tessel.free_vars\" if it is meant to "
             "be free)";
    }
    ReportOnce(kFreeVar, v.get(), msg.str(), node);
  }

  // Binds the bare variables of a buffer's shape, strides and elem_offset that are not in scope;
  // returns them.
  std::vector<Var> BindBareShapeVars(const Buffer& buf, BindKind kind, const ObjectRef& site) {
    std::vector<Var> out;
    auto consider = [&](const PrimExpr& e) {
      if (!e.defined()) return;
      auto v = e.as<Var>();
      if (!v) return;
      auto it = scope_count_.find(v->get());
      if (it != scope_count_.end() && it->second > 0) return;
      Bind(*v, kind, site);
      out.push_back(*v);
    };
    for (const PrimExpr& e : buf->shape) consider(e);
    for (const PrimExpr& e : buf->strides) consider(e);
    consider(buf->elem_offset);
    return out;
  }

  void VisitBufferExprs(const Buffer& buf) {
    for (size_t i = 0; i < buf->shape.size(); ++i) {
      auto v = ConstValue(buf->shape[i]);
      if (v && *v < 0) {
        ReportOnce(kNegativeSize, buf.get(),
                   "buffer '" + std::string(buf->name) + "' has shape[" + std::to_string(i) +
                       "] = " + std::to_string(*v) + "; a dimension cannot be negative",
                   buf);
      }
    }
    for (const PrimExpr& e : buf->shape) VisitExpr(e);
    for (const PrimExpr& e : buf->strides) VisitExpr(e);
    if (buf->elem_offset.defined()) VisitExpr(buf->elem_offset);
  }

  void DeclareBuffer(const Buffer& b) { ++buffer_count_[b.get()]; }
  void UndeclareBuffer(const Buffer& b) { --buffer_count_[b.get()]; }

  void UseBuffer(const Buffer& b, const ObjectRef& node) {
    auto it = buffer_count_.find(b.get());
    if (it != buffer_count_.end() && it->second > 0) return;
    std::ostringstream msg;
    msg << "buffer '" << b->name << "' is used where it is not declared (declare it in the "
        << "buffer_map, a DeclBuffer, or a block's alloc_buffers or match_buffers around the use)";
    ReportOnce(kUndeclaredBuffer, b.get(), msg.str(), node);
  }

  void CheckRegion(const BufferRegion& r, const ObjectRef& node) {
    UseBuffer(r->buffer, node);
    for (const Range& range : r->region) {
      VisitExpr(range->min);
      VisitExpr(range->extent);
    }
  }

  void CheckIndices(const Buffer& b, const Array<PrimExpr>& indices, const ObjectRef& node) {
    for (size_t i = 0; i + 1 < indices.size(); ++i) {
      if (indices[i]->dtype.lanes() == 1) continue;
      std::ostringstream msg;
      msg << "index " << i << " of an access to buffer '" << b->name << "' is a vector ("
          << indices[i]->dtype.str() << "); only the last index may be a vector";
      Report(kVectorIndex, msg.str(), node);
      return;
    }
  }

  void ReportOnce(const char* check, const Object* subject, const std::string& message,
                  const ObjectRef& node) {
    if (!reported_.insert({check, subject}).second) return;
    Report(check, message, node);
  }

  void Report(const char* check, const std::string& message, const ObjectRef& node) {
    VerifyError e;
    e.check = check;
    e.function = function_;
    e.message = message;
    e.node = node;
    if (!stmts_.empty()) e.stmt = stmts_.back();
    for (auto it = stmts_.rbegin(); it != stmts_.rend() && !e.span.has_value(); ++it) {
      e.span = (*it)->span;
    }
    errors_->push_back(std::move(e));
  }

  std::string function_;
  std::vector<VerifyError>* errors_;
  std::set<std::string> allowed_free_;
  std::unordered_map<const VarNode*, int> scope_count_;
  std::unordered_map<const VarNode*, Site> first_site_;
  std::unordered_map<const BufferNode*, int> buffer_count_;
  std::set<std::pair<std::string, const Object*>> reported_;
  std::vector<Stmt> stmts_;
};

}  // namespace

std::string VerifyError::ToString() const {
  std::ostringstream os;
  if (span.has_value()) os << (*span)->ToString() << ": ";
  os << "[" << check << "]";
  if (!function.empty()) os << " in function '" << function << "'";
  os << ": " << message << "\n";
  if (node.defined()) os << "    at " << node->GetTypeKey() << ":\n" << PrintIndented(node);
  if (stmt.defined() && !stmt.same_as(node)) os << "    in statement:\n" << PrintIndented(stmt);
  return os.str();
}

std::vector<VerifyError> VerifyWellFormed(const PrimFunc& func, const std::string& name) {
  std::vector<VerifyError> errors;
  Checker(name, &errors).CheckFunction(func);
  return errors;
}

std::vector<VerifyError> VerifyWellFormed(const IRModule& mod) {
  std::vector<VerifyError> errors;
  for (const String& name : mod.FunctionNames()) {
    Checker(name, &errors).CheckFunction(mod->functions.at(name));
  }
  return errors;
}

Pass VerifyWellFormedPass() {
  return CreateModulePass(
      [](IRModule mod) {
        std::vector<VerifyError> errors = VerifyWellFormed(mod);
        if (!errors.empty()) {
          std::string more =
              errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : "";
          TVM_FFI_THROW(ValueError) << "VerifyWellFormed" << more << ": " << errors[0].ToString();
        }
        return mod;
      },
      0, "VerifyWellFormed");
}

}  // namespace transform
}  // namespace tessel
