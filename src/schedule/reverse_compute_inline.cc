// reverse_compute_inline: a block `Y[g(v)] = f(X[v...], ...)` that is the only consumer of an
// intermediate buffer X is removed; X's single producer stores f(its value) into Y instead, the
// consumer's iterators read through the producer's X indices.
//
// Soundness rests on three facts checked below: the consumer's iterations are exactly the points
// of its iterator domain (so every point the producer writes is one the consumer read), the map
// from the consumer's iterators to the producer's X indices is a renaming (each X index of the
// consumer a distinct iterator, all of them used), and moving the consumer's work to the
// producer's place is invisible to every other block (none of those that run in between, or that
// share a loop with either, touches Y or writes what the consumer reads).
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <set>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// A block with no blocks inside it, in program order, with every loop above it.
struct Leaf {
  const BlockRealizeNode* realize;
  std::vector<const ForNode*> loops;
  std::set<const BufferNode*> loads, stores;
  std::vector<const BufferNode*> load_order;  // the loads, first appearance first (for messages)
};

class LeafCollector : public StmtExprVisitor {
 public:
  std::vector<Leaf> leaves;
  void VisitStmt_(const ForNode* op) override {
    loops_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    loops_.pop_back();
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    if (ChildRealizes(op->block->body).empty()) {
      Leaf leaf{op, loops_, {}, {}, {}};
      auto collect = [&](const ObjectRef& n) {
        if (const auto* l = n.as<BufferLoadNode>()) {
          if (leaf.loads.insert(l->buffer.get()).second) leaf.load_order.push_back(l->buffer.get());
        }
        if (const auto* s = n.as<BufferStoreNode>()) leaf.stores.insert(s->buffer.get());
      };
      PostOrderVisit(op->block->body, collect);
      if (op->block->init) PostOrderVisit(*op->block->init, collect);
      leaves.push_back(std::move(leaf));
    }
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  std::vector<const ForNode*> loops_;
};

// The producer after inlining: its store to X becomes `store`, its regions take the consumer's;
// the consumer's loop nest `removed` goes, and X's allocation too.
class Rewriter : public StmtExprMutator {
 public:
  Rewriter(const Buffer& x, const BlockNode* producer, Block new_producer, const Stmt& removed)
      : x_(x), producer_(producer), new_producer_(std::move(new_producer)), removed_(removed) {}

  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    Array<Stmt> seq;
    for (const Stmt& s : op->seq) {
      if (s.same_as(removed_)) {
        found_ = true;
        continue;
      }
      seq.push_back(VisitStmt(s));
    }
    return seq.size() == 1 ? seq[0] : SeqStmt(seq);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    if (op == producer_) return new_producer_;
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* b = visited.as<BlockNode>();
    Array<Buffer> allocs;
    for (const Buffer& a : b->alloc_buffers) {
      if (!a.same_as(x_)) allocs.push_back(a);
    }
    if (allocs.size() == b->alloc_buffers.size()) return visited;
    Block out(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, b->init, allocs,
              b->match_buffers, b->annotations);
    return WithSpan(out, op->span);
  }

  bool found() const { return found_; }

 private:
  Buffer x_;
  const BlockNode* producer_;
  Block new_producer_;
  Stmt removed_;
  bool found_ = false;
};

// Replaces every load of `buffer` by `value`.
class LoadReplacer : public StmtExprMutator {
 public:
  LoadReplacer(Buffer buffer, PrimExpr value)
      : buffer_(std::move(buffer)), value_(std::move(value)) {}
  using StmtExprMutator::VisitExpr_;
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    if (op->buffer.same_as(buffer_)) return value_;
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  Buffer buffer_;
  PrimExpr value_;
};

Array<BufferRegion> Regions(const Array<BufferRegion>& regions, const Buffer& drop,
                            VarSubstituter* subst) {
  Array<BufferRegion> out;
  for (const BufferRegion& r : regions) {
    if (r->buffer.same_as(drop)) continue;
    Array<Range> region;
    for (const Range& d : r->region) {
      region.push_back(Range(subst->VisitExpr(d->min), subst->VisitExpr(d->extent)));
    }
    out.push_back(BufferRegion(r->buffer, region));
  }
  return out;
}

}  // namespace

void ScheduleNode::ReverseComputeInline(const RV& block) {
  Impl impl(this, "reverse_compute_inline");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockRealizeNode* realize = site.realize;
  const BlockNode* b = realize->block.get();
  std::string name = b->name_hint;
  std::string mark = BlockMark(name);
  auto fail = [&](const std::string& msg, const std::string& at) { impl.Fail(msg, f, at); };
  // ---- the consumer ----
  if (b->init) fail("block \"" + name + "\" is a reduction (it has an init)", mark);
  for (const IterVar& iv : b->iter_vars) {
    if (iv->iter_type != IterVarType::kDataPar) {
      fail("block \"" + name + "\" has the " + std::string(IterVarTypeName(iv->iter_type)) +
               " iterator " + std::string(iv->var->name_hint) +
               "; only a block of data-parallel iterators can be reverse-inlined",
           mark);
    }
  }
  auto pred = AsConstInt(realize->predicate);
  if (!pred || *pred != 1) {
    fail("block \"" + name + "\" has the predicate " + AsText(realize->predicate) +
             "; a predicated block cannot be reverse-inlined",
         mark);
  }
  if (!b->alloc_buffers.empty() || !b->match_buffers.empty()) {
    fail("block \"" + name + "\" allocates or matches buffers", mark);
  }
  if (!ChildRealizes(b->body).empty()) fail("block \"" + name + "\" has blocks inside", mark);
  const auto* store = b->body.as<BufferStoreNode>();
  if (store == nullptr) {
    fail("the body of block \"" + name + "\" is not one store Y[...] = f(X[v, ...])", mark);
  }
  const Buffer& y = store->buffer;
  // ---- which buffer is X: the one the consumer loads that another block writes ----
  LeafCollector collector;
  collector.VisitStmt(f->body);
  const std::vector<Leaf>& leaves = collector.leaves;
  size_t me = leaves.size();
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (leaves[i].realize == realize) me = i;
  }
  if (me == leaves.size()) TVM_FFI_THROW(InternalError) << "reverse_compute_inline: lost block";
  const Leaf& consumer = leaves[me];
  if (consumer.loads.count(y.get())) {
    fail("block \"" + name + "\" reads " + std::string(y->name) + ", which it writes", mark);
  }
  std::vector<const BufferNode*> produced;
  for (const BufferNode* buf : consumer.load_order) {
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (i != me && leaves[i].stores.count(buf)) {
        produced.push_back(buf);
        break;
      }
    }
  }
  if (produced.empty())
    fail("block \"" + name + "\" reads no buffer that another block writes", mark);
  if (produced.size() > 1) {
    std::string names;
    for (const BufferNode* p : produced)
      names += (names.empty() ? "" : ", ") + std::string(p->name);
    fail("block \"" + name + "\" reads several buffers that other blocks write (" + names +
             "); it must read exactly one",
         mark);
  }
  Buffer x = GetRef<Buffer>(produced[0]);
  std::string xn = x->name;
  bool allocated = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* blk = n.as<BlockNode>()) {
      for (const Buffer& a : blk->alloc_buffers) allocated = allocated || a.same_as(x);
    }
  });
  if (!allocated) {
    fail(xn + " is not allocated in the function (it is a parameter): its values are visible "
              "outside, so it cannot be removed",
         mark);
  }
  // ---- X's other readers and writers ----
  size_t producer_at = leaves.size();
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (i == me) continue;
    std::string other = leaves[i].realize->block->name_hint;
    if (leaves[i].loads.count(x.get()) && !leaves[i].stores.count(x.get())) {
      fail(xn + " is also read by block \"" + other +
               "\"; the block to inline must be its only "
               "consumer",
           BlockMark(other));
    }
    if (leaves[i].stores.count(x.get())) {
      if (producer_at != leaves.size()) {
        fail(xn + " is written by more than one block (\"" +
                 std::string(leaves[producer_at].realize->block->name_hint) + "\", \"" + other +
                 "\")",
             BlockMark(other));
      }
      producer_at = i;
    }
  }
  const Leaf& producer = leaves[producer_at];
  const BlockRealizeNode* prealize = producer.realize;
  const BlockNode* p = prealize->block.get();
  std::string pname = p->name_hint;
  if (producer_at > me) {
    fail("the producer \"" + pname + "\" of " + xn + " runs after block \"" + name + "\"",
         BlockMark(pname));
  }
  if (p->init) {
    fail("the producer \"" + pname + "\" of " + xn +
             " is a reduction (it has an init): its store is a read-modify-write, not a "
             "final value",
         BlockMark(pname));
  }
  const auto* pstore = p->body.as<BufferStoreNode>();
  if (pstore == nullptr || !pstore->buffer.same_as(x)) {
    fail("the body of the producer \"" + pname + "\" is not one store to " + xn + " (it writes " +
             xn + " more than once or does more)",
         BlockMark(pname));
  }
  if (producer.loads.count(x.get())) {
    fail("the producer \"" + pname + "\" reads " + xn + ", which it writes", BlockMark(pname));
  }
  if (producer.loads.count(y.get()) || producer.stores.count(y.get())) {
    fail("the producer \"" + pname + "\" accesses " + std::string(y->name) + ", which block \"" +
             name + "\" writes",
         BlockMark(pname));
  }
  // ---- the consumer's loads of X: the same distinct iterators, all of them ----
  std::vector<const BufferLoadNode*> xloads;
  PostOrderVisit(store->value, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) {
      if (l->buffer.same_as(x)) xloads.push_back(l);
    }
  });
  if (xloads.empty()) {
    fail("block \"" + name + "\" reads " + xn + " only in its store's indices", mark);
  }
  std::unordered_map<const VarNode*, size_t> iter_index;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) iter_index[b->iter_vars[i]->var.get()] = i;
  std::unordered_map<const VarNode*, PrimExpr> vmap;
  for (size_t d = 0; d < xloads[0]->indices.size(); ++d) {
    const PrimExpr& idx = xloads[0]->indices[d];
    const auto* v = idx.as<VarNode>();
    if (v == nullptr || !iter_index.count(v) || vmap.count(v)) {
      fail("block \"" + name + "\" loads " + xn + "[..., " + AsText(idx) +
               ", ...]; every index of " + xn + " must be a distinct iterator of the block",
           mark);
    }
    vmap[v] = pstore->indices[d];
  }
  for (const BufferLoadNode* l : xloads) {
    for (size_t d = 0; d < l->indices.size(); ++d) {
      if (l->indices[d].as<VarNode>() != xloads[0]->indices[d].as<VarNode>()) {
        fail("block \"" + name + "\" loads " + xn + " at different indices", mark);
      }
    }
  }
  if (vmap.size() != b->iter_vars.size()) {
    fail("block \"" + name + "\" has iterators that its load of " + xn +
             " does not use; the producer could not say which point to compute",
         mark);
  }
  // ---- the consumer visits exactly its iterator domain ----
  Map<Var, Range> loop_dom;
  for (const ForNode* l : site.loops) loop_dom.Set(l->loop_var, Range(l->min, l->extent));
  arith::Analyzer analyzer;
  BindLoops(&analyzer, site.loops);
  arith::IterMapResult detected = arith::DetectIterMap(realize->iter_values, loop_dom, Bool(true),
                                                       arith::IterMapLevel::kBijective, &analyzer);
  bool covers = detected.ok();
  for (size_t i = 0; covers && i < b->iter_vars.size(); ++i) {
    const Range& dom = b->iter_vars[i]->dom;
    const arith::IterSumExpr& s = detected.indices[i];
    covers = analyzer.CanProveEqual(s->base, dom->min);
    if (s->args.empty()) {
      covers = covers && analyzer.CanProveEqual(dom->extent, Int32(1));
    } else {
      covers = covers && s->args.size() == 1 &&
               analyzer.CanProveEqual(s->args[0]->scale, Int32(1)) &&
               analyzer.CanProveEqual(s->args[0]->extent, dom->extent);
    }
  }
  if (!covers) {
    fail("the bindings of block \"" + name +
             "\" could not be proved to visit every point of its iterators' domains once; the "
             "producer would write points the block never computed",
         mark);
  }
  // Every point the producer writes is one the consumer reads.
  arith::Analyzer pa;
  for (const IterVar& iv : p->iter_vars) pa.Bind(iv->var, iv->dom, true);
  for (size_t d = 0; d < pstore->indices.size(); ++d) {
    const auto* v = xloads[0]->indices[d].as<VarNode>();
    const Range& dom = b->iter_vars[iter_index.at(v)]->dom;
    const PrimExpr& idx = pstore->indices[d];
    if (!pa.CanProve(idx >= dom->min) || !pa.CanProve(idx < dom->min + dom->extent)) {
      fail("the producer \"" + pname + "\" writes " + xn + " at index " + AsText(idx) +
               ", which could not be proved to lie in the domain of " + std::string(v->name_hint) +
               " of block \"" + name + "\"",
           BlockMark(pname));
    }
  }
  // ---- no other block may notice that the consumer's work moves to the producer ----
  auto shares_loop = [](const Leaf& a, const Leaf& c) {
    for (const ForNode* l : a.loops) {
      for (const ForNode* m : c.loops) {
        if (l == m) return true;
      }
    }
    return false;
  };
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (i == me || i == producer_at) continue;
    const Leaf& o = leaves[i];
    bool between = i > producer_at && i < me;
    if (!between && !shares_loop(o, producer) && !shares_loop(o, consumer)) continue;
    std::string other = o.realize->block->name_hint;
    if (o.loads.count(y.get()) || o.stores.count(y.get())) {
      fail("block \"" + other + "\" accesses " + std::string(y->name) + " between the producer \"" +
               pname + "\" and block \"" + name + "\"",
           BlockMark(other));
    }
    for (const BufferNode* buf : consumer.loads) {
      if (o.stores.count(buf)) {
        fail("block \"" + other + "\" writes " + std::string(buf->name) + ", which block \"" +
                 name + "\" reads, between it and the producer \"" + pname + "\"",
             BlockMark(other));
      }
    }
  }
  // ---- the rewrite ----
  VarSubstituter subst(vmap);
  Array<PrimExpr> yidx;
  for (const PrimExpr& i : store->indices) yidx.push_back(analyzer.Simplify(subst.VisitExpr(i)));
  PrimExpr value = LoadReplacer(x, pstore->value).VisitExpr(subst.VisitExpr(store->value));
  Stmt new_store = BufferStore(y, value, yidx);
  Array<BufferRegion> reads = Regions(p->reads, x, &subst);
  for (const BufferRegion& r : Regions(b->reads, x, &subst)) reads.push_back(r);
  Array<BufferRegion> writes = Regions(p->writes, x, &subst);
  for (const BufferRegion& r : Regions(b->writes, x, &subst)) writes.push_back(r);
  Block new_producer(p->iter_vars, reads, writes, p->name_hint, WithSpan(new_store, pstore->span),
                     p->init, p->alloc_buffers, p->match_buffers, p->annotations);
  new_producer.CopyOnWrite()->span = p->span;
  // The consumer's statement to remove: the outermost loop whose whole body is the block.
  Stmt removed = GetRef<Stmt>(realize);
  std::vector<const VarNode*> removed_loops;
  for (size_t i = site.loops.size(); i-- > 0;) {
    if (!site.loops[i]->body.same_as(removed)) break;
    removed = GetRef<Stmt>(site.loops[i]);
    removed_loops.push_back(site.loops[i]->loop_var.get());
  }
  Rewriter rewriter(x, p, new_producer, removed);
  Stmt body = rewriter.VisitStmt(f->body);
  if (!rewriter.found()) {
    fail("block \"" + name + "\" and its loops are not one statement of a sequence", mark);
  }
  PrimFunc g = f;
  g.CopyOnWrite()->body = body;
  mod_.CopyOnWrite()->functions.Set(e.func, g);
  impl.Remove(removed_loops);
  rvs_[block->id].removed_by = "reverse_compute_inline";
  impl.Record({block}, {});
}

}  // namespace schedule
}  // namespace tessel
