// Reduction primitives: decompose_reduction.
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

RV ScheduleNode::DecomposeReduction(const RV& block, const RV& loop) {
  Impl impl(this, "decompose_reduction");
  BlockSite site = impl.FindBlock(block);
  LoopSite lsite = impl.FindLoop(loop);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockRealizeNode* realize = site.realize;
  const BlockNode* b = realize->block.get();
  std::string name = b->name_hint;
  if (!b->init) {
    impl.Fail("block \"" + name + "\" has no init (it is not a reduction block)", f,
              BlockMark(name));
  }
  size_t at = site.loops.size();
  for (size_t i = 0; i < site.loops.size(); ++i) {
    if (site.loops[i] == lsite.loop) at = i;
  }
  if (at == site.loops.size()) {
    impl.Fail("the loop " + std::string(lsite.loop->loop_var->name_hint) +
                  " is not above block \"" + name + "\"",
              f, LoopMark(lsite.loop->loop_var));
  }
  // The iterators: data-parallel ones get the init; no loop above `loop` may feed the others.
  std::vector<const VarNode*> outer, inner;
  for (size_t i = 0; i < site.loops.size(); ++i) {
    (i < at ? outer : inner).push_back(site.loops[i]->loop_var.get());
  }
  std::vector<size_t> dp;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    if (iv->iter_type == IterVarType::kDataPar) {
      dp.push_back(i);
    } else if (UsesAny(realize->iter_values[i], outer)) {
      impl.Fail("a loop above " + std::string(lsite.loop->loop_var->name_hint) + " feeds the " +
                    IterVarTypeName(iv->iter_type) + " iterator " +
                    std::string(iv->var->name_hint) +
                    ": the init would run once per reduction step",
                f, LoopMark(lsite.loop->loop_var));
    }
  }
  // Copies of the loops from `loop` down that feed a data-parallel iterator.
  std::unordered_map<const VarNode*, PrimExpr> loop_map;
  std::unordered_map<const VarNode*, Var> copies;
  std::vector<const ForNode*> kept;
  for (size_t i = at; i < site.loops.size(); ++i) {
    const ForNode* l = site.loops[i];
    bool feeds = false;
    for (size_t k : dp) feeds = feeds || UsesAny(realize->iter_values[k], {l->loop_var.get()});
    if (!feeds) continue;
    Var copy(std::string(l->loop_var->name_hint) + "_init", l->loop_var.dtype());
    loop_map[l->loop_var.get()] = copy;
    copies.emplace(l->loop_var.get(), copy);
    kept.push_back(l);
  }
  std::vector<const VarNode*> dropped;
  for (size_t i = at; i < site.loops.size(); ++i) {
    if (!loop_map.count(site.loops[i]->loop_var.get())) {
      dropped.push_back(site.loops[i]->loop_var.get());
    }
  }
  if (UsesAny(realize->predicate, dropped)) {
    impl.Fail("the block's predicate " + AsText(realize->predicate) +
                  " uses a loop the init does not keep",
              f, BlockMark(name));
  }
  // The init block: fresh iterator variables over the data-parallel ones.
  VarSubstituter loops_to_copies(loop_map);
  std::unordered_map<const VarNode*, PrimExpr> iter_map;
  Array<IterVar> iters;
  Array<PrimExpr> values;
  for (size_t k : dp) {
    const IterVar& iv = b->iter_vars[k];
    Var v(std::string(iv->var->name_hint) + "_init", iv->var.dtype());
    iter_map[iv->var.get()] = v;
    iters.push_back(IterVar(v, iv->dom, IterVarType::kDataPar));
    values.push_back(loops_to_copies.VisitExpr(realize->iter_values[k]));
  }
  VarSubstituter iters_to_init(iter_map);
  Array<BufferRegion> writes;
  for (const BufferRegion& w : b->writes) {
    Array<Range> region;
    for (const Range& r : w->region) {
      region.push_back(Range(iters_to_init.VisitExpr(r->min), iters_to_init.VisitExpr(r->extent)));
    }
    writes.push_back(BufferRegion(w->buffer, region));
  }
  Block init_block(iters, {}, writes, name + "_init", iters_to_init.VisitStmt(*b->init));
  Stmt init = BlockRealize(values, loops_to_copies.VisitExpr(realize->predicate), init_block);
  for (size_t i = kept.size(); i-- > 0;) {
    const ForNode* l = kept[i];
    init = For(copies.at(l->loop_var.get()), l->min, l->extent, ForKind::kSerial, init);
  }
  // The block without its init, and the init before `loop`.
  Block without(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, std::nullopt,
                b->alloc_buffers, b->match_buffers, b->annotations);
  Stmt updated = ReplaceIn(
      GetRef<Stmt>(lsite.loop), GetRef<Stmt>(realize),
      WithSpan(BlockRealize(realize->iter_values, realize->predicate, without), realize->span));
  impl.Replace(e, GetRef<Stmt>(lsite.loop), SeqStmt({init, updated}));
  RV out = impl.NewBlock(e.func, name + "_init");
  impl.Record({block, loop}, {out});
  return out;
}

}  // namespace schedule
}  // namespace tessel
