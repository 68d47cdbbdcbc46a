// reindex: a buffer that a block accesses at f(iterators) is copied into (or out of) a new buffer
// indexed by those iterators themselves, so the block accesses new[iterators].
//
// Which iterators the new buffer covers is decided from the indices as written: every block
// iterator that appears in them, in the block's iterator order, keeps a dimension, also one of
// extent 1 (TVM simplifies first, which turns such an iterator into 0 and drops its dimension;
// a 1x1 convolution then loses the kernel dimensions). Simplification only shortens the copy's
// index expressions.
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "schedule/buffer_access.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

std::string IndexText(const Buffer& buf, const Array<PrimExpr>& idx) {
  std::string s = std::string(buf->name) + "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + AsText(idx[i]);
  return s + "]";
}

// Rewrites the block's accesses of `from` at any indices to `to[indices]`, and its declared
// regions of `from` to the point region of `indices`.
class AccessRewriter : public StmtExprMutator {
 public:
  AccessRewriter(Buffer from, Buffer to, Array<PrimExpr> indices)
      : from_(std::move(from)), to_(std::move(to)), indices_(std::move(indices)) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    if (!op->buffer.same_as(from_)) return StmtExprMutator::VisitExpr_(op);
    return BufferLoad(to_, indices_);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    if (!op->buffer.same_as(from_)) return StmtExprMutator::VisitStmt_(op);
    return WithSpan(BufferStore(to_, VisitExpr(op->value), indices_), op->span);
  }
  Array<BufferRegion> Regions(const Array<BufferRegion>& regions) {
    Array<BufferRegion> out;
    for (const BufferRegion& r : regions) {
      if (!r->buffer.same_as(from_)) {
        out.push_back(r);
        continue;
      }
      Array<Range> point;
      for (const PrimExpr& i : indices_) point.push_back(Range(i, MakeConst(i.dtype(), 1)));
      out.push_back(BufferRegion(to_, point));
    }
    return out;
  }

 private:
  Buffer from_, to_;
  Array<PrimExpr> indices_;
};

// Replaces `target` by `before; target; after` (one of them empty), flattened into the sequence
// that holds it, and appends `alloc` to the allocations of the block whose body it is in.
class Splicer : public StmtExprMutator {
 public:
  Splicer(const Stmt& target, Stmt replacement) : target_(target), replacement_(replacement) {}
  using StmtExprMutator::VisitStmt_;
  Stmt VisitStmt(const Stmt& s) override {
    if (s.same_as(target_)) return replacement_;
    return StmtExprMutator::VisitStmt(s);
  }
  Stmt VisitStmt_(const SeqStmtNode* op) override {
    Stmt out = StmtExprMutator::VisitStmt_(op);
    if (const auto* seq = out.as<SeqStmtNode>()) return SeqStmt::Flatten(seq->seq);
    return out;
  }

 private:
  Stmt target_, replacement_;
};

// v + sign * min, written as v alone when min is 0 (not simplified with the iterators' ranges,
// which would turn an iterator of extent 1 into 0).
PrimExpr Offset(const Var& v, const PrimExpr& min, int sign) {
  if (AsConstInt(min) == std::optional<int64_t>(0)) return v;
  return sign > 0 ? add(v, min) : sub(v, min);
}

std::string UniqueBlockName(const PrimFunc& f, const std::string& base) {
  std::set<std::string> names;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* b = n.as<BlockNode>()) names.insert(b->name_hint);
  });
  std::string name = base;
  for (int k = 1; names.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// The realize of the block whose body holds `target` among its child blocks; null when none.
const BlockRealizeNode* EnclosingRealize(const PrimFunc& f, const BlockRealizeNode* target) {
  const BlockRealizeNode* found = nullptr;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    const auto* r = n.as<BlockRealizeNode>();
    if (!r || found) return;
    for (const BlockRealizeNode* c : ChildRealizes(r->block->body)) {
      if (c == target) found = r;
    }
  });
  return found;
}

}  // namespace

RV ScheduleNode::Reindex(const RV& block, const String& buffer_type, int64_t buffer_index,
                         bool skip_simplify) {
  Impl impl(this, "reindex");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockRealizeNode* realize = site.realize;
  const BlockNode* b = realize->block.get();
  std::string name = b->name_hint;
  std::string mark = BlockMark(name);
  bool write = ParseBufferType(&impl, buffer_type);
  Buffer buf = AccessedBuffer(&impl, f, site, write, buffer_index);
  std::string bname = buf->name;

  bool nested = false;
  PostOrderVisit(b->body, [&](const ObjectRef& n) { nested = nested || n.as<BlockRealizeNode>(); });
  if (nested) impl.Fail("block \"" + name + "\" holds other blocks", f, mark);

  // Every access of the buffer in the block, at one index tuple.
  arith::Analyzer analyzer;
  for (const IterVar& iv : b->iter_vars) analyzer.Bind(iv->var, iv->dom, true);
  auto simplified = [&](const Array<PrimExpr>& idx) {
    if (skip_simplify) return idx;
    Array<PrimExpr> out;
    for (const PrimExpr& i : idx) out.push_back(analyzer.Simplify(i));
    return out;
  };
  std::vector<Array<PrimExpr>> written;
  bool loads = false, stores = false, conditional_store = false;
  auto note = [&](const Array<PrimExpr>& idx, bool store) {
    (store ? stores : loads) = true;
    written.push_back(idx);
  };
  // Stores under a condition or in a while loop may not happen: a copy back would then write
  // what the block never computed.
  class Finder : public StmtExprVisitor {
   public:
    Buffer buf;
    std::function<void(const Array<PrimExpr>&, bool)> note;
    bool* conditional;
    int guarded = 0;
    using StmtExprVisitor::VisitExpr_;
    using StmtExprVisitor::VisitStmt_;
    void VisitExpr_(const BufferLoadNode* op) override {
      if (op->buffer.same_as(buf)) note(op->indices, false);
      StmtExprVisitor::VisitExpr_(op);
    }
    void VisitStmt_(const BufferStoreNode* op) override {
      if (op->buffer.same_as(buf)) {
        note(op->indices, true);
        if (guarded) *conditional = true;
      }
      StmtExprVisitor::VisitStmt_(op);
    }
    void VisitStmt_(const IfThenElseNode* op) override {
      ++guarded;
      StmtExprVisitor::VisitStmt_(op);
      --guarded;
    }
    void VisitStmt_(const WhileNode* op) override {
      ++guarded;
      StmtExprVisitor::VisitStmt_(op);
      --guarded;
    }
  } finder;
  finder.buf = buf;
  finder.note = note;
  finder.conditional = &conditional_store;
  if (b->init) finder.VisitStmt(*b->init);
  finder.VisitStmt(b->body);
  if (written.empty()) {
    impl.Fail("block \"" + name + "\" does not load or store " + bname, f, mark);
  }
  Array<PrimExpr> indices = simplified(written[0]);
  for (const Array<PrimExpr>& w : written) {
    if (!tvm::ffi::StructuralEqual::Equal(simplified(w), indices)) {
      impl.Fail("block \"" + name + "\" accesses " + bname + " at different indices (" +
                    IndexText(buf, written[0]) + " and " + IndexText(buf, w) +
                    "); reindex needs one index tuple",
                f, mark);
    }
  }
  if (!write && stores) {
    impl.Fail("block \"" + name + "\" also writes " + bname +
                  "; reindexing its read would leave the writes in the copy",
              f, mark);
  }
  if (write && loads) {
    bool init_stores = false;
    if (b->init) {
      PostOrderVisit(*b->init, [&](const ObjectRef& n) {
        if (const auto* s = n.as<BufferStoreNode>()) init_stores |= s->buffer.same_as(buf);
      });
    }
    if (!init_stores) {
      impl.Fail("block \"" + name + "\" also reads " + bname +
                    " and has no init that writes it: the copy would start uninitialized",
                f, mark);
    }
  }
  // The iterators the indices use as written, in block order.
  std::vector<const VarNode*> used;
  for (const Array<PrimExpr>& w : written) {
    for (const PrimExpr& i : w) {
      PostOrderVisit(i, [&](const ObjectRef& n) {
        if (const auto* v = n.as<VarNode>()) used.push_back(v);
        if (n.as<BufferLoadNode>()) {
          impl.Fail("an index of " + IndexText(buf, w) +
                        " loads a buffer; reindex needs indices computed from the iterators",
                    f, mark);
        }
      });
    }
  }
  std::vector<IterVar> kept;
  for (const IterVar& iv : b->iter_vars) {
    for (const VarNode* v : used) {
      if (v == iv->var.get()) {
        kept.push_back(iv);
        break;
      }
    }
  }
  // The copy runs over the whole domain of the kept iterators, so every index it computes must
  // lie in the buffer.
  for (size_t j = 0; j < indices.size(); ++j) {
    if (!analyzer.CanProve(indices[j] >= MakeConst(indices[j].dtype(), 0)) ||
        !analyzer.CanProve(indices[j] < buf->shape[j])) {
      impl.Fail("index " + std::to_string(j) + " of " + IndexText(buf, indices) +
                    " could not be proved to stay within " + bname + "'s extent " +
                    AsText(buf->shape[j]) +
                    " over the iterators' domains (the copy visits "
                    "every point of them)",
                f, mark);
    }
  }
  if (write) {
    auto pred = AsConstInt(realize->predicate);
    if (!pred || *pred != 1) {
      impl.Fail("block \"" + name + "\" has the predicate " + AsText(realize->predicate) +
                    "; the copy back would write elements the block skips",
                f, mark);
    }
    if (conditional_store) {
      impl.Fail("block \"" + name + "\" stores " + bname +
                    " under a condition; the copy back would write elements it skips",
                f, mark);
    }
    // Writes are copied back in the copy's own loop order: the indices must name distinct
    // elements for distinct iterator values.
    Map<Var, Range> doms;
    for (const IterVar& iv : kept) doms.Set(iv->var, iv->dom);
    arith::IterMapResult one_to_one =
        arith::DetectIterMap(indices, doms, Bool(true), arith::IterMapLevel::kBijective, &analyzer,
                             /*simplify_trivial_iterators=*/false);
    if (!one_to_one.ok()) {
      impl.Fail(IndexText(buf, indices) +
                    " could not be proved one-to-one over the iterators it uses: " +
                    (one_to_one.errors.empty() ? std::string() : std::string(one_to_one.errors[0])),
                f, mark);
    }
    // And the block must write every point of the kept iterators' domains.
    Map<Var, Range> loops;
    for (const ForNode* l : site.loops) loops.Set(l->loop_var, Range(l->min, l->extent));
    Array<PrimExpr> bindings;
    std::vector<const IterVarNode*> kept_nodes;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      for (const IterVar& iv : kept) {
        if (iv.same_as(b->iter_vars[i])) {
          bindings.push_back(realize->iter_values[i]);
          kept_nodes.push_back(iv.get());
        }
      }
    }
    arith::Analyzer loop_analyzer;
    BindLoops(&loop_analyzer, site.loops);
    arith::IterMapResult cover = arith::DetectIterMap(
        bindings, loops, realize->predicate, arith::IterMapLevel::kSurjective, &loop_analyzer,
        /*simplify_trivial_iterators=*/false);
    bool covers = cover.ok() && AsConstInt(cover.padding_predicate).value_or(1) == 0;
    for (size_t k = 0; covers && k < kept_nodes.size(); ++k) {
      const arith::IterSumExpr& s = cover.indices[k];
      const Range& dom = kept_nodes[k]->dom;
      bool base = loop_analyzer.CanProveEqual(s->base, dom->min);
      if (s->args.empty()) {
        covers = base && loop_analyzer.CanProveEqual(dom->extent, MakeConst(DataType::Int(32), 1));
      } else {
        covers = base && s->args.size() == 1 &&
                 loop_analyzer.CanProveEqual(s->args[0]->scale, MakeConst(s->dtype, 1)) &&
                 loop_analyzer.CanProveEqual(s->args[0]->extent, dom->extent);
      }
    }
    if (!covers) {
      impl.Fail("the bindings of block \"" + name +
                    "\" could not be proved to cover its iterators' domains; the copy back "
                    "would write elements the block skips",
                f, mark);
    }
  }
  // The copy goes right before (after) the loop nest of the block, which must hold nothing else.
  Stmt top = site.loops.empty() ? GetRef<Stmt>(realize) : GetRef<Stmt>(site.loops[0]);
  if (ChildRealizes(top).size() != 1) {
    impl.Fail(
        "the loops above block \"" + name + "\" hold other blocks too; the copy goes outside them",
        f, LoopMark(site.loops[0]->loop_var));
  }
  const BlockRealizeNode* outer = EnclosingRealize(f, realize);

  // The new buffer and the block's accesses of it.
  Array<PrimExpr> shape, at_iters;
  for (const IterVar& iv : kept) {
    shape.push_back(iv->dom->extent);
    at_iters.push_back(Offset(iv->var, iv->dom->min, -1));
  }
  Buffer nbuf = MakeBuffer(bname + "_reindex", buf->dtype, shape, buf->scope);
  AccessRewriter rw(buf, nbuf, at_iters);
  Optional<Stmt> init = b->init;
  if (b->init) init = rw.VisitStmt(*b->init);
  Block changed(b->iter_vars, rw.Regions(b->reads), rw.Regions(b->writes), b->name_hint,
                rw.VisitStmt(b->body), init, b->alloc_buffers, b->match_buffers, b->annotations);
  changed.CopyOnWrite()->span = b->span;
  Stmt new_realize =
      WithSpan(BlockRealize(realize->iter_values, realize->predicate, changed), realize->span);

  // The copy block: data-parallel iterators over the kept domains, one loop each.
  std::unordered_map<const VarNode*, PrimExpr> to_copy;
  Array<IterVar> civs;
  Array<PrimExpr> cvals, cnew;
  std::vector<Var> loop_vars;
  for (size_t k = 0; k < kept.size(); ++k) {
    const IterVar& iv = kept[k];
    Var v("v" + std::to_string(k), iv->var.dtype());
    Var ax("ax" + std::to_string(k), iv->var.dtype());
    to_copy[iv->var.get()] = v;
    civs.push_back(IterVar(v, iv->dom, IterVarType::kDataPar));
    cvals.push_back(Offset(ax, iv->dom->min, 1));
    cnew.push_back(Offset(v, iv->dom->min, -1));
    loop_vars.push_back(ax);
  }
  Array<PrimExpr> cold;
  for (const PrimExpr& i : indices) cold.push_back(VarSubstituter(to_copy).VisitExpr(i));
  auto point = [](const Buffer& bf, const Array<PrimExpr>& idx) {
    Array<Range> r;
    for (const PrimExpr& i : idx) r.push_back(Range(i, MakeConst(i.dtype(), 1)));
    return BufferRegion(bf, r);
  };
  std::string cname = UniqueBlockName(f, bname + "_reindex");
  Block copy = write ? Block(civs, {point(nbuf, cnew)}, {point(buf, cold)}, cname,
                             BufferStore(buf, BufferLoad(nbuf, cnew), cold))
                     : Block(civs, {point(buf, cold)}, {point(nbuf, cnew)}, cname,
                             BufferStore(nbuf, BufferLoad(buf, cold), cnew));
  Stmt nest = BlockRealize(cvals, Bool(true), copy);
  for (size_t k = kept.size(); k-- > 0;) {
    nest = For(loop_vars[k], MakeConst(loop_vars[k].dtype(), 0), kept[k]->dom->extent,
               ForKind::kSerial, nest);
  }

  Stmt new_top = ReplaceIn(top, GetRef<Stmt>(realize), new_realize);
  Stmt pair = write ? SeqStmt({new_top, nest}) : SeqStmt({nest, new_top});
  if (outer == nullptr) {
    // A block at the top of the function: the new buffer needs a root block to live in.
    Block root({}, {}, {}, "root", Splicer(top, pair).VisitStmt(f->body), std::nullopt, {nbuf});
    PrimFunc g = f;
    g.CopyOnWrite()->body = BlockRealize({}, Bool(true), root);
    mod_.CopyOnWrite()->functions.Set(e.func, g);
  } else {
    const BlockNode* ob = outer->block.get();
    Array<Buffer> allocs = ob->alloc_buffers;
    allocs.push_back(nbuf);
    Block nouter(ob->iter_vars, ob->reads, ob->writes, ob->name_hint,
                 Splicer(top, pair).VisitStmt(ob->body), ob->init, allocs, ob->match_buffers,
                 ob->annotations);
    nouter.CopyOnWrite()->span = ob->span;
    impl.Replace(e, GetRef<Stmt>(outer),
                 WithSpan(BlockRealize(outer->iter_values, outer->predicate, nouter), outer->span));
  }
  RV out = impl.NewBlock(e.func, cname);
  impl.Record({block, Array<Any>{buffer_type, buffer_index}, skip_simplify}, {out});
  return out;
}

}  // namespace schedule
}  // namespace tessel
