// FreshCopy (include/tessel/ir/fresh_copy.h).
#include <tessel/ir/fresh_copy.h>
#include <tessel/ir/functor.h>
#include <tvm/ffi/error.h>

#include <unordered_map>

namespace tessel {
namespace ir {

namespace {

class Renamer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? GetRef<PrimExpr>(op) : PrimExpr(it->second);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Var v = Fresh(op->loop_var);
    return WithSpan(For(v, VisitExpr(op->min), VisitExpr(op->extent), op->kind, VisitStmt(op->body),
                        op->thread_tag, op->annotations),
                    op->span);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var v = Fresh(op->var);
    return WithSpan(LetStmt(v, value, VisitStmt(op->body)), op->span);
  }

  PrimExpr VisitExpr_(const LetNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var v = Fresh(op->var);
    return Let(v, value, VisitExpr(op->body));
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Array<PrimExpr> extents;
    for (const PrimExpr& e : op->extents) extents.push_back(VisitExpr(e));
    PrimExpr cond = VisitExpr(op->condition);
    Var v = Fresh(op->buffer_var);
    return WithSpan(Allocate(v, op->dtype, extents, cond, VisitStmt(op->body), op->annotations),
                    op->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer b = Remap(op->buffer, true);
    return WithSpan(DeclBuffer(b, VisitStmt(op->body)), op->span);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    Array<PrimExpr> idx;
    for (const PrimExpr& i : op->indices) idx.push_back(VisitExpr(i));
    return BufferLoad(Remap(op->buffer, false), idx);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Array<PrimExpr> idx;
    for (const PrimExpr& i : op->indices) idx.push_back(VisitExpr(i));
    return WithSpan(BufferStore(Remap(op->buffer, false), VisitExpr(op->value), idx), op->span);
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    TVM_FFI_THROW(ValueError) << "FreshCopy: a block (its variables are not renamed here)";
    TVM_FFI_UNREACHABLE();
  }

 private:
  Var Fresh(const Var& v) {
    // A new node: the same name and type, another identity.
    Var out(tvm::ffi::make_object<VarNode>(*v.get()));
    vars_[v.get()] = out;
    return out;
  }

  // The buffer of the copy: a new one over the renamed data variable when its data was rebound
  // (declared == true makes it, at its DeclBuffer).
  Buffer Remap(const Buffer& b, bool declared) {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    auto data = vars_.find(b->data.get());
    if (!declared || data == vars_.end()) return b;
    Buffer out(b->name, data->second, b->dtype, b->shape, b->strides, b->elem_offset, b->scope,
               b->data_alignment, b->offset_factor);
    buffers_[b.get()] = out;
    return out;
  }

  std::unordered_map<const VarNode*, Var> vars_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

}  // namespace

Stmt FreshCopy(const Stmt& s) { return Renamer().VisitStmt(s); }

}  // namespace ir
}  // namespace tessel
