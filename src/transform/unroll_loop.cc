// The UnrollLoop pass (contract in include/tessel/transform/unroll_loop.h).
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/unroll_loop.h>

#include <unordered_map>
#include <utility>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

using VarMap = std::unordered_map<const VarNode*, PrimExpr>;

// A new variable with the same name, type, pointee and scope as v.
Var FreshVar(const Var& v) {
  if (const auto* sv = v.as<SizeVarNode>()) return Var(make_object<SizeVarNode>(*sv));
  return Var(make_object<VarNode>(*v.get()));
}

// Copies a statement with variables replaced per `map`; with `fresh`, every variable bound inside
// becomes a new variable (and every buffer over a renamed data variable a new buffer), so that
// copies placed side by side bind distinct variables.
class BodyCopier : public StmtExprMutator {
 public:
  BodyCopier(VarMap map, bool fresh) : map_(std::move(map)), fresh_(fresh) {}

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = map_.find(op);
    return it == map_.end() ? GetRef<PrimExpr>(op) : it->second;
  }

  PrimExpr VisitExpr_(const LetNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var var = Bind(op->var);
    PrimExpr body = VisitExpr(op->body);
    if (var.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) {
      return GetRef<PrimExpr>(op);
    }
    return Let(var, value, body);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var var = Bind(op->var);
    Stmt body = VisitStmt(op->body);
    if (var.same_as(op->var) && value.same_as(op->value) && body.same_as(op->body)) {
      return GetRef<Stmt>(op);
    }
    return LetStmt(var, value, body);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    PrimExpr mn = VisitExpr(op->min);
    PrimExpr extent = VisitExpr(op->extent);
    Var var = Bind(op->loop_var);
    Stmt body = VisitStmt(op->body);
    if (var.same_as(op->loop_var) && mn.same_as(op->min) && extent.same_as(op->extent) &&
        body.same_as(op->body)) {
      return GetRef<Stmt>(op);
    }
    return For(var, mn, extent, op->kind, body, op->thread_tag, op->annotations);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Array<PrimExpr> extents = VisitArray(op->extents);
    PrimExpr cond = VisitExpr(op->condition);
    Var var = Bind(op->buffer_var);
    Stmt body = VisitStmt(op->body);
    if (var.same_as(op->buffer_var) && extents.same_as(op->extents) &&
        cond.same_as(op->condition) && body.same_as(op->body)) {
      return GetRef<Stmt>(op);
    }
    return WithSpan(Allocate(var, op->dtype, extents, cond, body, op->annotations), op->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer buf = VisitBufferUse(op->buffer);
    Stmt body = VisitStmt(op->body);
    if (buf.same_as(op->buffer) && body.same_as(op->body)) return GetRef<Stmt>(op);
    return DeclBuffer(buf, body);
  }

  // The same buffer object for every use, so a DeclBuffer and the accesses under it agree.
  Buffer VisitBufferUse(const Buffer& buf) override {
    auto it = buffers_.find(buf.get());
    if (it != buffers_.end()) return it->second;
    PrimExpr data = VisitExpr(buf->data);
    Array<PrimExpr> shape = VisitArray(buf->shape);
    Array<PrimExpr> strides = VisitArray(buf->strides);
    PrimExpr offset = buf->elem_offset.defined() ? VisitExpr(buf->elem_offset) : buf->elem_offset;
    Buffer out = buf;
    const auto* data_var = data.as<VarNode>();
    if (!data.same_as(buf->data) || !shape.same_as(buf->shape) || !strides.same_as(buf->strides) ||
        !offset.same_as(buf->elem_offset)) {
      // A data variable replaced by a non-variable cannot happen: only Allocate renames handles.
      TVM_FFI_ICHECK(data_var) << "UnrollLoop: buffer " << buf->name << " lost its data variable";
      auto n = make_object<BufferNode>(*buf.get());
      n->data = GetRef<Var>(data_var);
      n->shape = shape;
      n->strides = strides;
      n->elem_offset = offset;
      out = Buffer(n);
    }
    buffers_.emplace(buf.get(), out);
    return out;
  }

 private:
  Var Bind(const Var& v) {
    if (!fresh_) return v;
    Var nv = FreshVar(v);
    map_[v.get()] = nv;
    return nv;
  }

  VarMap map_;
  bool fresh_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

bool HasBlock(const Stmt& s) {
  struct Finder : StmtExprVisitor {
    bool found = false;
    void VisitStmt_(const BlockNode*) override { found = true; }
  } finder;
  finder.VisitStmt(s);
  return finder.found;
}

class Unroller : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* loop = visited.as<ForNode>();
    const auto* extent = loop->extent.as<IntImmNode>();
    if (!extent) return visited;
    bool unroll = loop->kind == ForKind::kUnrolled;
    if (unroll && extent->value > kMaxUnrollRequest) {
      TVM_FFI_THROW(ValueError) << "UnrollLoop: the unroll loop over " << loop->loop_var->name_hint
                                << " has " << extent->value
                                << " iterations, more than the limit of " << kMaxUnrollRequest
                                << " (kMaxUnrollRequest); use T.serial, or unroll an inner loop "
                                   "split from it";
    }
    if (extent->value == 1 && (unroll || loop->kind == ForKind::kSerial)) {
      return BodyCopier({{loop->loop_var.get(), loop->min}}, /*fresh=*/false).VisitStmt(loop->body);
    }
    if (!unroll || extent->value < 0 || extent->value > kMaxUnrollExtent || HasBlock(loop->body)) {
      return visited;
    }
    if (extent->value == 0) return Evaluate(Int32(0));
    Array<Stmt> copies;
    for (int64_t k = 0; k < extent->value; ++k) {
      PrimExpr value = add(loop->min, MakeConst(loop->loop_var.dtype(), k));
      copies.push_back(
          BodyCopier({{loop->loop_var.get(), value}}, /*fresh=*/true).VisitStmt(loop->body));
    }
    return SeqStmt::Flatten(copies);
  }
};

}  // namespace

Stmt UnrollLoop(const Stmt& stmt) { return Unroller().VisitStmt(stmt); }

PrimFunc UnrollLoop(const PrimFunc& func) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "UnrollLoop: undefined function";
  Stmt body = UnrollLoop(func->body);
  return WithBody(func, body);
}

IRModule UnrollLoop(const IRModule& mod) {
  return MapFunctions(mod, [](const String&, const PrimFunc& f) { return UnrollLoop(f); });
}

Pass UnrollLoopPass() {
  return CreatePrimFuncPass([](PrimFunc f) { return UnrollLoop(f); }, 0, "UnrollLoop");
}

}  // namespace transform
}  // namespace tessel
