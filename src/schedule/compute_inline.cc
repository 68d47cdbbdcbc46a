// compute_inline: a block `X[v0, v1, ...] = f(v)` that computes an intermediate buffer is removed
// and every load of X becomes f at the load's indices.
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// Replaces loads of `buffer` by the inlined value, drops `buffer` from block reads and from the
// allocations, and removes the statement `producer` (the producer's loop nest).
class Inliner : public StmtExprMutator {
 public:
  Inliner(Buffer buffer, std::vector<Var> params, PrimExpr value, Stmt producer)
      : buffer_(std::move(buffer)),
        params_(std::move(params)),
        value_(std::move(value)),
        producer_(std::move(producer)) {}

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    if (!op->buffer.same_as(buffer_)) return StmtExprMutator::VisitExpr_(op);
    std::unordered_map<const VarNode*, PrimExpr> vmap;
    for (size_t i = 0; i < params_.size(); ++i) vmap[params_[i].get()] = VisitExpr(op->indices[i]);
    ++inlined_;
    return VarSubstituter(vmap).VisitExpr(value_);
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    Array<Stmt> seq;
    for (const Stmt& s : op->seq) {
      if (s.same_as(producer_)) continue;
      seq.push_back(VisitStmt(s));
    }
    return seq.size() == 1 ? seq[0] : SeqStmt(seq);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* b = visited.as<BlockNode>();
    Array<BufferRegion> reads;
    for (const BufferRegion& r : b->reads) {
      if (!r->buffer.same_as(buffer_)) reads.push_back(r);
    }
    Array<Buffer> allocs;
    for (const Buffer& a : b->alloc_buffers) {
      if (!a.same_as(buffer_)) allocs.push_back(a);
    }
    Block out(b->iter_vars, reads, b->writes, b->name_hint, b->body, b->init, allocs,
              b->match_buffers, b->annotations);
    return WithSpan(out, op->span);
  }

  int inlined() const { return inlined_; }

 private:
  Buffer buffer_;
  std::vector<Var> params_;
  PrimExpr value_;
  Stmt producer_;
  int inlined_ = 0;
};

}  // namespace

void ScheduleNode::ComputeInline(const RV& block) {
  Impl impl(this, "compute_inline");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockRealizeNode* realize = site.realize;
  const BlockNode* b = realize->block.get();
  std::string name = b->name_hint;
  std::string mark = BlockMark(name);
  if (b->init) impl.Fail("block \"" + name + "\" is a reduction (it has an init)", f, mark);
  for (const IterVar& iv : b->iter_vars) {
    if (iv->iter_type != IterVarType::kDataPar) {
      impl.Fail("block \"" + name + "\" has the " + std::string(IterVarTypeName(iv->iter_type)) +
                    " iterator " + std::string(iv->var->name_hint) +
                    "; only a block of data-parallel iterators can be inlined",
                f, mark);
    }
  }
  auto pred = AsConstInt(realize->predicate);
  if (!pred || *pred != 1) {
    impl.Fail("block \"" + name + "\" has the predicate " + AsText(realize->predicate) +
                  "; a predicated block cannot be inlined",
              f, mark);
  }
  if (!b->alloc_buffers.empty() || !b->match_buffers.empty()) {
    impl.Fail("block \"" + name + "\" allocates or matches buffers", f, mark);
  }
  const auto* store = b->body.as<BufferStoreNode>();
  if (store == nullptr) {
    impl.Fail("the body of block \"" + name + "\" is not one store X[v, ...] = value", f, mark);
  }
  // The store's indices are the block's iterators, each exactly once.
  std::vector<Var> params;
  for (const PrimExpr& idx : store->indices) {
    const auto* v = idx.as<VarNode>();
    bool iter = false;
    for (const IterVar& iv : b->iter_vars) iter = iter || iv->var.get() == v;
    for (const Var& p : params) iter = iter && p.get() != v;
    if (v == nullptr || !iter) {
      impl.Fail("block \"" + name + "\" stores to " + std::string(store->buffer->name) + "[" +
                    AsText(idx) + ", ...]; every index must be a distinct iterator of the block",
                f, mark);
    }
    params.push_back(GetRef<Var>(v));
  }
  if (params.size() != b->iter_vars.size()) {
    impl.Fail("block \"" + name + "\" does not use every iterator in its store's indices", f, mark);
  }
  const Buffer& buffer = store->buffer;
  std::string buf = buffer->name;
  // The buffer must be an intermediate, written by this block only, not read by its own value.
  bool allocated = false, other_writer = false, self_read = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* blk = n.as<BlockNode>()) {
      for (const Buffer& a : blk->alloc_buffers) allocated = allocated || a.same_as(buffer);
    }
    if (const auto* s = n.as<BufferStoreNode>()) {
      other_writer = other_writer || (s->buffer.same_as(buffer) && s != store);
    }
  });
  PostOrderVisit(store->value, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) self_read = self_read || l->buffer.same_as(buffer);
  });
  if (!allocated) {
    impl.Fail("block \"" + name + "\" writes " + buf +
                  ", which the function does not allocate (a parameter or an output)",
              f, mark);
  }
  if (other_writer) impl.Fail(buf + " is written by another block too", f, mark);
  if (self_read) impl.Fail("block \"" + name + "\" reads " + buf + ", which it writes", f, mark);
  // The statement to remove: the outermost loop whose whole body is this block.
  Stmt producer = GetRef<Stmt>(realize);
  for (size_t i = site.loops.size(); i-- > 0;) {
    if (!site.loops[i]->body.same_as(producer)) break;
    producer = GetRef<Stmt>(site.loops[i]);
  }
  Inliner inliner(buffer, params, store->value, producer);
  Stmt body = inliner.VisitStmt(f->body);
  PrimFunc g = f;
  g.CopyOnWrite()->body = body;
  mod_.CopyOnWrite()->functions.Set(e.func, g);
  rvs_[block->id].removed_by = "compute_inline";
  impl.Record({block}, {});
}

}  // namespace schedule
}  // namespace tessel
