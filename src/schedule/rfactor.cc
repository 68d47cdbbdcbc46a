// rfactor: a reduction `C[i] = C[i] (+) x` over loops that include `loop` is split in two: a block
// "<name>_rf" that keeps a partial result per value of `loop` in a new buffer "<C>_rf" (where
// `loop` feeds a data-parallel iterator), and the original block, which combines those partial
// results over a copy of `loop`.
//
// This regroups the combiner's applications, as rfactor means to: integer +, * wrap modulo 2^n
// and stay exact; float results may round differently, and float max/min may differ in which NaN
// or signed zero they return (ir/expr.h). The init is applied once per partial result and once
// more in the combining block, so it must be the combiner's identity (0 for +, 1 for *); max and
// min are idempotent and take any init.
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

enum class Combiner { kAdd, kMul, kMax, kMin };

PrimExpr Combine(Combiner c, PrimExpr a, PrimExpr b) {
  switch (c) {
    case Combiner::kAdd:
      return Add(a, b);
    case Combiner::kMul:
      return Mul(a, b);
    case Combiner::kMax:
      return Max(a, b);
    case Combiner::kMin:
      return Min(a, b);
  }
  return PrimExpr();
}

// Whether `e` is the constant `v` (integer or float).
bool IsConst(const PrimExpr& e, double v) {
  if (const auto* f = e.as<FloatImmNode>()) return f->value == v;
  auto i = AsConstInt(e);
  return i && static_cast<double>(*i) == v;
}

bool LoadsBuffer(const PrimExpr& e, const Buffer& buffer) {
  bool found = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) found = found || l->buffer.same_as(buffer);
  });
  return found;
}

bool SameIndices(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  arith::Analyzer analyzer;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!analyzer.CanProveEqual(a[i], b[i])) return false;
  }
  return true;
}

// Adds `buffer` to the allocations of `block`.
Block WithAlloc(const BlockNode* b, const Buffer& buffer) {
  Array<Buffer> allocs = b->alloc_buffers;
  allocs.push_back(buffer);
  Block out(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, b->init, allocs,
            b->match_buffers, b->annotations);
  out.CopyOnWrite()->span = b->span;
  return out;
}

}  // namespace

RV ScheduleNode::RFactor(const RV& loop, int64_t factor_axis) {
  Impl impl(this, "rfactor");
  LoopSite lsite = impl.FindLoop(loop);
  const Entry e = rvs_[loop->id];
  PrimFunc f = impl.Func(e);
  const ForNode* rf = lsite.loop;
  std::string lname = rf->loop_var->name_hint;
  std::string lmark = LoopMark(rf->loop_var);
  auto fail = [&](const std::string& msg, const std::string& at) { impl.Fail(msg, f, at); };
  std::vector<const BlockRealizeNode*> blocks = ChildRealizes(rf->body);
  if (blocks.size() != 1) {
    fail("the loop " + lname + " holds " + std::to_string(blocks.size()) +
             " blocks; rfactor needs exactly one (a reduction block)",
         lmark);
  }
  const BlockRealizeNode* realize = blocks[0];
  const BlockNode* b = realize->block.get();
  std::string name = b->name_hint;
  std::string mark = BlockMark(name);
  // The loops between the enclosing block and this one: those above `loop`, `loop`, those below.
  BlockSite site{realize, lsite.above};
  site.loops.push_back(rf);
  for (Stmt s = rf->body; !s.same_as(GetRef<Stmt>(realize));) {
    const auto* l = s.as<ForNode>();
    if (l == nullptr) {
      fail("the loop " + lname + " holds other statements besides block \"" + name + "\"", lmark);
    }
    site.loops.push_back(l);
    s = l->body;
  }
  bool taken = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* blk = n.as<BlockNode>()) taken = taken || blk->name_hint == name + "_rf";
  });
  if (taken) fail("the function already has a block named \"" + name + "_rf\"", mark);
  // ---- the reduction: init, body `C[i] = C[i] (+) x` ----
  if (!b->init) fail("block \"" + name + "\" has no init (it is not a reduction block)", mark);
  if (!b->alloc_buffers.empty() || !b->match_buffers.empty()) {
    fail("block \"" + name + "\" allocates or matches buffers", mark);
  }
  const auto* store = b->body.as<BufferStoreNode>();
  const auto* init = b->init ? (*b->init).as<BufferStoreNode>() : nullptr;
  std::string shape_msg = "the body of block \"" + name +
                          "\" is not one update C[...] = C[...] + x (or *, max, min) with an "
                          "init C[...] = value";
  if (store == nullptr || init == nullptr || !init->buffer.same_as(store->buffer) ||
      !SameIndices(init->indices, store->indices)) {
    fail(shape_msg, mark);
  }
  const Buffer& c = store->buffer;
  std::string cn = c->name;
  Combiner comb;
  PrimExpr a, bb;
  if (const auto* n = store->value.as<AddNode>()) {
    comb = Combiner::kAdd, a = n->a, bb = n->b;
  } else if (const auto* n = store->value.as<MulNode>()) {
    comb = Combiner::kMul, a = n->a, bb = n->b;
  } else if (const auto* n = store->value.as<MaxNode>()) {
    comb = Combiner::kMax, a = n->a, bb = n->b;
  } else if (const auto* n = store->value.as<MinNode>()) {
    comb = Combiner::kMin, a = n->a, bb = n->b;
  } else {
    fail("the update " + AsText(store->value) + " of block \"" + name +
             "\" is not a known combiner: C + x, C * x, max(C, x) or min(C, x) (either order)",
         mark);
  }
  auto is_self = [&](const PrimExpr& x) {
    const auto* l = x.as<BufferLoadNode>();
    return l != nullptr && l->buffer.same_as(c) && SameIndices(l->indices, store->indices);
  };
  bool self_first = is_self(a);
  if (!self_first && !is_self(bb)) fail(shape_msg, mark);
  PrimExpr x = self_first ? bb : a;
  if (LoadsBuffer(x, c)) {
    fail("the value combined into " + cn + " by block \"" + name + "\" reads " + cn, mark);
  }
  if (LoadsBuffer(init->value, c)) fail("the init of block \"" + name + "\" reads " + cn, mark);
  if (comb == Combiner::kAdd && !IsConst(init->value, 0)) {
    fail("the init " + AsText(init->value) + " of block \"" + name +
             "\" is not 0, the identity of +: every partial result would start from it",
         mark);
  }
  if (comb == Combiner::kMul && !IsConst(init->value, 1)) {
    fail("the init " + AsText(init->value) + " of block \"" + name +
             "\" is not 1, the identity of *: every partial result would start from it",
         mark);
  }
  std::vector<const VarNode*> reduce_iters, dp_iters;
  for (const IterVar& iv : b->iter_vars) {
    if (iv->iter_type == IterVarType::kDataPar) {
      dp_iters.push_back(iv->var.get());
    } else if (iv->iter_type == IterVarType::kCommReduce) {
      reduce_iters.push_back(iv->var.get());
    } else {
      fail("block \"" + name + "\" has the " + std::string(IterVarTypeName(iv->iter_type)) +
               " iterator " + std::string(iv->var->name_hint),
           mark);
    }
  }
  for (const PrimExpr& i : store->indices) {
    if (UsesAny(i, reduce_iters)) {
      fail("block \"" + name + "\" stores to " + cn + " at an index that uses a reduction " +
               "iterator (" + AsText(i) + ")",
           mark);
    }
  }
  if (UsesAny(init->value, reduce_iters)) {
    fail("the init of block \"" + name + "\" uses a reduction iterator", mark);
  }
  // ---- the loops: which feed data-parallel iterators, which reduction ones ----
  // `top`: the outermost loop that holds only this block; the loops above it stay shared.
  size_t top = site.loops.size();
  Stmt holder = GetRef<Stmt>(realize);
  for (size_t i = site.loops.size(); i-- > 0;) {
    if (!site.loops[i]->body.same_as(holder)) break;
    holder = GetRef<Stmt>(site.loops[i]);
    top = i;
  }
  size_t rf_at = site.loops.size();
  for (size_t i = 0; i < site.loops.size(); ++i) {
    if (site.loops[i] == rf) rf_at = i;
  }
  if (rf_at == site.loops.size() || rf_at < top) {
    fail("the loop " + lname + " holds other statements besides block \"" + name + "\"", lmark);
  }
  std::vector<bool> feeds_dp(site.loops.size()), feeds_reduce(site.loops.size());
  for (size_t i = 0; i < site.loops.size(); ++i) {
    const VarNode* v = site.loops[i]->loop_var.get();
    for (size_t k = 0; k < b->iter_vars.size(); ++k) {
      bool uses = UsesAny(realize->iter_values[k], {v});
      if (b->iter_vars[k]->iter_type == IterVarType::kDataPar) {
        feeds_dp[i] = feeds_dp[i] || uses;
      } else {
        feeds_reduce[i] = feeds_reduce[i] || uses;
      }
    }
    std::string li = site.loops[i]->loop_var->name_hint;
    if (feeds_dp[i] && feeds_reduce[i]) {
      fail("the loop " + li + " feeds both data-parallel and reduction iterators of block \"" +
               name + "\"",
           LoopMark(site.loops[i]->loop_var));
    }
    if (feeds_reduce[i] && i < top) {
      fail("the loop " + li + " feeds a reduction iterator of block \"" + name +
               "\" but holds other statements too",
           LoopMark(site.loops[i]->loop_var));
    }
    if (feeds_reduce[i] && site.loops[i]->kind != ForKind::kSerial) {
      fail("the loop " + li + " feeds a reduction iterator and is " +
               ForKindName(site.loops[i]->kind) + "; only serial loops can be factored",
           LoopMark(site.loops[i]->loop_var));
    }
  }
  if (!feeds_reduce[rf_at]) {
    fail("the loop " + lname + " feeds no reduction iterator of block \"" + name +
             "\"; rfactor factors a reduction loop",
         lmark);
  }
  // Every partial result must be written at least once, or the combining block would read
  // uninitialized memory where the original wrote nothing.
  arith::Analyzer analyzer;
  BindLoops(&analyzer, site.loops);
  std::vector<const VarNode*> dropped;
  for (size_t i = top; i < site.loops.size(); ++i) {
    if (i == rf_at || feeds_dp[i]) continue;
    dropped.push_back(site.loops[i]->loop_var.get());
    if (!analyzer.CanProve(site.loops[i]->extent >= 1)) {
      fail("the extent of loop " + std::string(site.loops[i]->loop_var->name_hint) +
               " could not be proved positive: some partial results might never be written",
           LoopMark(site.loops[i]->loop_var));
    }
  }
  if (UsesAny(realize->predicate, dropped)) {
    fail("the predicate " + AsText(realize->predicate) + " of block \"" + name +
             "\" uses a reduction loop other than " + lname +
             ": the combining block could not tell which partial results exist",
         mark);
  }
  int64_t ndim = static_cast<int64_t>(c->shape.size());
  if (factor_axis < -(ndim + 1) || factor_axis > ndim) {
    fail("factor_axis " + std::to_string(factor_axis) + " is out of range [" +
             std::to_string(-(ndim + 1)) + ", " + std::to_string(ndim) + "] for the " +
             std::to_string(ndim) + "-dimensional " + cn,
         mark);
  }
  if (factor_axis < 0) factor_axis += ndim + 1;
  // ---- the buffer of partial results ----
  Array<PrimExpr> rf_shape;
  for (int64_t d = 0; d <= ndim; ++d) {
    if (d == factor_axis) rf_shape.push_back(rf->extent);
    if (d < ndim) rf_shape.push_back(c->shape[d]);
  }
  Buffer crf = MakeBuffer(cn + "_rf", c->dtype, rf_shape, c->scope);
  auto rf_indices = [&](const Array<PrimExpr>& idx, const PrimExpr& v) {
    Array<PrimExpr> out;
    for (int64_t d = 0; d <= ndim; ++d) {
      if (d == factor_axis) out.push_back(v);
      if (d < ndim) out.push_back(idx[d]);
    }
    return out;
  };
  // ---- the rf block: the loops as they are; `loop` data-parallel, reduction loops iterators ----
  std::string vrf_name = "v" + lname;
  std::unordered_map<const VarNode*, PrimExpr> rf_map;  // old iterators and loops -> rf block's
  Array<IterVar> rf_iters;
  Array<PrimExpr> rf_values;
  Var vrf(vrf_name, rf->loop_var.dtype());
  rf_iters.push_back(IterVar(vrf, Range(rf->min, rf->extent), IterVarType::kDataPar));
  rf_values.push_back(rf->loop_var);
  std::unordered_map<const VarNode*, PrimExpr> loop_to_iter{{rf->loop_var.get(), vrf}};
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    const IterVar& iv = b->iter_vars[k];
    if (iv->iter_type != IterVarType::kDataPar) continue;
    Var v(std::string(iv->var->name_hint), iv->var.dtype());
    rf_map[iv->var.get()] = v;
    rf_iters.push_back(IterVar(v, iv->dom, IterVarType::kDataPar));
    rf_values.push_back(realize->iter_values[k]);
  }
  for (size_t i = top; i < site.loops.size(); ++i) {
    if (i == rf_at || !feeds_reduce[i]) continue;
    const ForNode* l = site.loops[i];
    Var v("v" + std::string(l->loop_var->name_hint), l->loop_var.dtype());
    loop_to_iter[l->loop_var.get()] = v;
    rf_iters.push_back(IterVar(v, Range(l->min, l->extent), IterVarType::kCommReduce));
    rf_values.push_back(l->loop_var);
  }
  VarSubstituter loops_in_rf(loop_to_iter);
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    if (b->iter_vars[k]->iter_type == IterVarType::kDataPar) continue;
    rf_map[b->iter_vars[k]->var.get()] = loops_in_rf.VisitExpr(realize->iter_values[k]);
  }
  VarSubstituter to_rf(rf_map);
  Array<PrimExpr> c_idx_rf;
  for (const PrimExpr& i : store->indices) c_idx_rf.push_back(to_rf.VisitExpr(i));
  // The partial result's index along the new axis counts from 0.
  auto slot = [&](const Var& v) {
    return IsConst(rf->min, 0) ? PrimExpr(v) : analyzer.Simplify(v - rf->min);
  };
  Array<PrimExpr> crf_idx = rf_indices(c_idx_rf, slot(vrf));
  PrimExpr self_rf = BufferLoad(crf, crf_idx);
  PrimExpr x_rf = to_rf.VisitExpr(x);
  Stmt rf_body = BufferStore(
      crf, self_first ? Combine(comb, self_rf, x_rf) : Combine(comb, x_rf, self_rf), crf_idx);
  Stmt rf_init = BufferStore(crf, to_rf.VisitExpr(init->value), crf_idx);
  Block rf_block(rf_iters, {}, {}, name + "_rf", rf_body, rf_init, {}, {}, b->annotations);
  Stmt rf_nest = BlockRealize(rf_values, realize->predicate, rf_block);
  for (size_t i = site.loops.size(); i-- > top;) {
    const ForNode* l = site.loops[i];
    rf_nest = For(l->loop_var, l->min, l->extent, l->kind, rf_nest, l->thread_tag, l->annotations);
  }
  // ---- the combining block: copies of the data-parallel loops and of `loop` ----
  std::unordered_map<const VarNode*, PrimExpr> copy_of;
  std::vector<std::pair<const ForNode*, Var>> kept;
  for (size_t i = top; i < site.loops.size(); ++i) {
    if (i != rf_at && !feeds_dp[i]) continue;
    const ForNode* l = site.loops[i];
    Var v(std::string(l->loop_var->name_hint), l->loop_var.dtype());
    copy_of[l->loop_var.get()] = v;
    kept.emplace_back(l, v);
  }
  VarSubstituter loops_to_copies(copy_of);
  std::unordered_map<const VarNode*, PrimExpr> wb_map;
  Array<IterVar> wb_iters;
  Array<PrimExpr> wb_values;
  Var wrf(vrf_name, rf->loop_var.dtype());
  wb_iters.push_back(IterVar(wrf, Range(rf->min, rf->extent), IterVarType::kCommReduce));
  wb_values.push_back(copy_of.at(rf->loop_var.get()));
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    const IterVar& iv = b->iter_vars[k];
    if (iv->iter_type != IterVarType::kDataPar) continue;
    Var v(std::string(iv->var->name_hint), iv->var.dtype());
    wb_map[iv->var.get()] = v;
    wb_iters.push_back(IterVar(v, iv->dom, IterVarType::kDataPar));
    wb_values.push_back(loops_to_copies.VisitExpr(realize->iter_values[k]));
  }
  VarSubstituter to_wb(wb_map);
  Array<PrimExpr> c_idx_wb;
  for (const PrimExpr& i : store->indices) c_idx_wb.push_back(to_wb.VisitExpr(i));
  PrimExpr self_wb = BufferLoad(c, c_idx_wb);
  PrimExpr part = BufferLoad(crf, rf_indices(c_idx_wb, slot(wrf)));
  Stmt wb_body = BufferStore(
      c, self_first ? Combine(comb, self_wb, part) : Combine(comb, part, self_wb), c_idx_wb);
  Stmt wb_init = BufferStore(c, to_wb.VisitExpr(init->value), c_idx_wb);
  Block wb_block(wb_iters, {}, {}, name, wb_body, wb_init, {}, {}, b->annotations);
  wb_block.CopyOnWrite()->span = b->span;
  Stmt wb_nest = BlockRealize(wb_values, loops_to_copies.VisitExpr(realize->predicate), wb_block);
  for (size_t i = kept.size(); i-- > 0;) {
    const ForNode* l = kept[i].first;
    wb_nest =
        For(kept[i].second, l->min, l->extent, l->kind, wb_nest, l->thread_tag, l->annotations);
  }
  // ---- put both in place of the loop nest, and allocate the partial results ----
  Stmt replacement = SeqStmt({rf_nest, wb_nest});
  const BlockRealizeNode* scope = nullptr;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    const auto* r = n.as<BlockRealizeNode>();
    if (r == nullptr || scope != nullptr) return;
    for (const BlockRealizeNode* child : ChildRealizes(r->block->body)) {
      if (child == realize) scope = r;
    }
  });
  Stmt body;
  if (scope != nullptr) {
    Block sb = WithAlloc(scope->block.get(), crf);
    sb.CopyOnWrite()->body = ReplaceIn(scope->block->body, holder, replacement);
    body = ReplaceIn(f->body, GetRef<Stmt>(scope->block.get()), sb);
  } else {
    // No enclosing block: a root block holds the new allocation, as the text's parser makes one.
    body = ReplaceIn(f->body, holder, replacement);
    body = BlockRealize({}, Bool(true), Block({}, {}, {}, "root", body, std::nullopt, {crf}));
  }
  PrimFunc g = f;
  g.CopyOnWrite()->body = body;
  mod_.CopyOnWrite()->functions.Set(e.func, g);
  RV out = impl.NewBlock(e.func, name + "_rf");
  impl.Record({loop, factor_axis}, {out});
  return out;
}

}  // namespace schedule
}  // namespace tessel
