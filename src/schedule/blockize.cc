// blockize: the loop nest under `loop`, which holds one block, becomes the body of a new block
// "<name>_o" whose iterators are the parts of the inner block's bindings that come from the loops
// above `loop`.
//
// Each binding v = b(loops) is written, through the iterator-map detector, as a sum of split
// iterators; those over loops above `loop` form the outer part O, those over loops from `loop`
// down the inner part I, and b = O + I + base exactly. With E the extent of I (I ranges over
// [0, E)) and every scale of O a multiple of E, the outer iterator is vo = O / E (exact) and the
// inner one vi = I, so v = vo * E + vi + base holds at every iteration: the inner block computes
// what it did, its iterators re-bound. A reduction's init moves to the outer block (a block
// "<name>_init" over the inner loops that feed data-parallel iterators), where it runs once per
// tile before the inner loops accumulate.
#include <tessel/arith/int_set.h>
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

bool IsConst(const PrimExpr& e, int64_t value) {
  auto v = AsConstInt(e);
  return v && *v == value;
}

// One term scale * expr of a binding; expr is a split of one (possibly fused) iterator.
struct Term {
  PrimExpr expr;
  PrimExpr scale;
};

// Flattens a detected sum into terms, expanding whole fused marks into their parts.
void Flatten(const arith::IterSumExpr& sum, const PrimExpr& scale, std::vector<Term>* terms,
             PrimExpr* base, arith::Analyzer* analyzer) {
  *base = analyzer->Simplify(*base + sum->base * scale);
  for (const arith::IterSplitExpr& s : sum->args) {
    PrimExpr sc = analyzer->Simplify(s->scale * scale);
    const auto* fused = s->source->source.as<arith::IterSumExprNode>();
    if (fused != nullptr && IsConst(s->lower_factor, 1) &&
        analyzer->CanProveEqual(s->extent, s->source->extent)) {
      Flatten(GetRef<arith::IterSumExpr>(fused), sc, terms, base, analyzer);
      continue;
    }
    arith::IterSplitExpr unit(s->source, s->lower_factor, s->extent, MakeConst(s->dtype, 1));
    terms->push_back(Term{arith::NormalizeIterMapToExpr(unit, analyzer), sc});
  }
}

// The hull of the accesses to each buffer in `stmt`, with `dom`'s variables ranged over and the
// iterators `known` in their domains; the whole buffer where an end is unbounded.
Array<BufferRegion> Relaxed(const Stmt& stmt, bool loads, const Map<Var, Range>& dom,
                            const std::vector<const BufferNode*>& skip,
                            const Array<IterVar>& known) {
  std::vector<Buffer> order;
  std::unordered_map<const BufferNode*, std::vector<Array<PrimExpr>>> accesses;
  auto add = [&](const Buffer& b, const Array<PrimExpr>& idx) {
    for (const BufferNode* s : skip) {
      if (s == b.get()) return;
    }
    if (!accesses.count(b.get())) order.push_back(b);
    accesses[b.get()].push_back(idx);
  };
  PostOrderVisit(stmt, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) {
      if (loads) add(l->buffer, l->indices);
    } else if (const auto* s = n.as<BufferStoreNode>()) {
      if (!loads) add(s->buffer, s->indices);
    }
  });
  arith::Analyzer analyzer;
  for (const IterVar& iv : known) analyzer.Bind(iv->var, iv->dom, true);
  Array<BufferRegion> out;
  for (const Buffer& b : order) {
    Array<Range> region;
    bool bounded = true;
    for (size_t d = 0; bounded && d < b->shape.size(); ++d) {
      PrimExpr lo, hi;
      for (const Array<PrimExpr>& idx : accesses[b.get()]) {
        arith::IntSet set = analyzer.IntSet(idx[d], dom);
        if (!set->HasLowerBound() || !set->HasUpperBound()) {
          bounded = false;
          break;
        }
        lo = lo.defined() ? min(lo, *set->min_value) : *set->min_value;
        hi = hi.defined() ? max(hi, *set->max_value) : *set->max_value;
      }
      if (bounded) {
        lo = analyzer.Simplify(lo);
        region.push_back(Range(lo, analyzer.Simplify(hi - lo + 1)));
      }
    }
    out.push_back(bounded ? BufferRegion(b, region) : BufferRegion::Full(b));
  }
  return out;
}

}  // namespace

RV ScheduleNode::Blockize(const RV& loop, bool preserve_unit_iters) {
  Impl impl(this, "blockize");
  LoopSite lsite = impl.FindLoop(loop);
  const Entry e = rvs_[loop->id];
  PrimFunc f = impl.Func(e);
  const ForNode* top = lsite.loop;
  std::string lname = top->loop_var->name_hint;
  std::string lmark = LoopMark(top->loop_var);
  auto fail = [&](const std::string& msg, const std::string& at) { impl.Fail(msg, f, at); };
  std::vector<const BlockRealizeNode*> blocks = ChildRealizes(top->body);
  if (blocks.size() != 1) {
    fail("the loop " + lname + " holds " + std::to_string(blocks.size()) +
             " blocks; blockize of more than one block is not supported",
         lmark);
  }
  const BlockRealizeNode* realize = blocks[0];
  const BlockNode* b = realize->block.get();
  std::string name = b->name_hint;
  std::string mark = BlockMark(name);
  std::vector<const ForNode*> outer = lsite.above, inner{top};
  for (Stmt s = top->body; !s.same_as(GetRef<Stmt>(realize));) {
    const auto* l = s.as<ForNode>();
    if (l == nullptr) {
      fail("the loop " + lname + " holds other statements besides block \"" + name + "\"", lmark);
    }
    inner.push_back(l);
    s = l->body;
  }
  bool taken = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* blk = n.as<BlockNode>()) {
      taken =
          taken || blk->name_hint == name + "_o" || (b->init && blk->name_hint == name + "_init");
    }
  });
  if (taken)
    fail("the function already has a block named \"" + name + "_o\" or \"" + name + "_init\"",
         mark);
  std::vector<const VarNode*> outer_vars, inner_vars;
  for (const ForNode* l : outer) outer_vars.push_back(l->loop_var.get());
  for (const ForNode* l : inner) inner_vars.push_back(l->loop_var.get());
  // ---- divide each binding into outer * E + inner ----
  Map<Var, Range> loop_dom;
  for (const ForNode* l : outer) loop_dom.Set(l->loop_var, Range(l->min, l->extent));
  for (const ForNode* l : inner) loop_dom.Set(l->loop_var, Range(l->min, l->extent));
  arith::Analyzer analyzer;
  BindLoops(&analyzer, outer);
  BindLoops(&analyzer, inner);
  arith::IterMapResult detected =
      arith::DetectIterMap(realize->iter_values, loop_dom, Bool(true),
                           arith::IterMapLevel::kSurjective, &analyzer, !preserve_unit_iters);
  if (!detected.ok()) {
    std::string why = detected.errors.empty() ? "" : std::string(detected.errors[0]);
    fail("the bindings of block \"" + name + "\" are not affine maps of its loops (" + why + ")",
         mark);
  }
  Map<Var, Range> inner_dom;
  for (const ForNode* l : inner) inner_dom.Set(l->loop_var, Range(l->min, l->extent));
  Map<Var, Range> outer_dom;
  for (const ForNode* l : outer) outer_dom.Set(l->loop_var, Range(l->min, l->extent));
  Array<IterVar> outer_iters, inner_iters;
  Array<PrimExpr> outer_values, inner_values;
  std::unordered_map<const VarNode*, PrimExpr> subst;  // inner block's old iterators -> new form
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    const IterVar& iv = b->iter_vars[k];
    std::string vn = iv->var->name_hint;
    DataType t = iv->var.dtype();
    std::vector<Term> terms;
    PrimExpr base = MakeConst(t, 0);
    Flatten(detected.indices[k], MakeConst(t, 1), &terms, &base, &analyzer);
    PrimExpr in_sum = MakeConst(t, 0);
    std::vector<Term> out_terms;
    for (const Term& term : terms) {
      bool uses_outer = UsesAny(term.expr, outer_vars), uses_inner = UsesAny(term.expr, inner_vars);
      if (uses_outer && uses_inner) {
        fail("the binding " + AsText(realize->iter_values[k]) + " of " + vn +
                 " splits an iterator fused from loops above and below " + lname,
             lmark);
      }
      if (uses_inner) {
        in_sum = in_sum + term.expr * term.scale;
      } else if (uses_outer) {
        out_terms.push_back(term);
      } else {
        base = base + term.expr * term.scale;
      }
    }
    in_sum = analyzer.Simplify(in_sum);
    base = analyzer.Simplify(base);
    arith::IntSet in_set = analyzer.IntSet(in_sum, inner_dom);
    if (!in_set->HasUpperBound() || !in_set->HasLowerBound() ||
        !analyzer.CanProve(*in_set->min_value >= MakeConst(t, 0))) {
      fail("the part of binding " + AsText(realize->iter_values[k]) + " of " + vn +
               " from loops under " + lname + " could not be bounded to [0, extent)",
           lmark);
    }
    PrimExpr extent = analyzer.Simplify(*in_set->max_value + 1);
    PrimExpr out_sum = MakeConst(t, 0);
    for (const Term& term : out_terms) {
      if (!analyzer.CanProve(eq(floormod(term.scale, extent), MakeConst(t, 0)))) {
        fail("the binding " + AsText(realize->iter_values[k]) + " of " + vn +
                 " does not divide into an outer part times " + AsText(extent) +
                 " plus an inner part: the scale " + AsText(term.scale) + " of a loop above " +
                 lname + " is not a multiple of it",
             lmark);
      }
      out_sum = out_sum + term.expr * analyzer.Simplify(floordiv(term.scale, extent));
    }
    out_sum = analyzer.Simplify(out_sum);
    bool has_inner = !IsConst(in_sum, 0);
    arith::IntSet out_set = analyzer.IntSet(out_sum, outer_dom);
    if (!out_set->HasUpperBound() || !out_set->HasLowerBound() ||
        !analyzer.CanProve(*out_set->min_value >= MakeConst(t, 0))) {
      fail("the part of binding " + AsText(realize->iter_values[k]) + " of " + vn +
               " from loops above " + lname + " could not be bounded",
           lmark);
    }
    Var vo(vn + "_o", t);
    outer_iters.push_back(IterVar(
        vo, Range(MakeConst(t, 0), analyzer.Simplify(*out_set->max_value + 1)), iv->iter_type));
    outer_values.push_back(out_sum);
    // An iterator with no outer part keeps a unit outer iterator (bound to 0) that it does not use.
    PrimExpr value = out_terms.empty() ? MakeConst(t, 0) : has_inner ? vo * extent : PrimExpr(vo);
    if (has_inner) {
      Var vi(vn + "_i", t);
      inner_iters.push_back(IterVar(vi, Range(MakeConst(t, 0), extent), iv->iter_type));
      inner_values.push_back(in_sum);
      value = value + vi;
    }
    subst[iv->var.get()] = analyzer.Simplify(value + base);
  }
  // ---- the inner block: re-bound, without its init ----
  VarSubstituter to_new(subst);
  auto regions = [&](const Array<BufferRegion>& rs) {
    Array<BufferRegion> out;
    for (const BufferRegion& r : rs) {
      Array<Range> region;
      for (const Range& d : r->region) {
        region.push_back(Range(to_new.VisitExpr(d->min), to_new.VisitExpr(d->extent)));
      }
      out.push_back(BufferRegion(r->buffer, region));
    }
    return out;
  };
  Stmt new_body = to_new.VisitStmt(b->body);
  Block inner_block(inner_iters, regions(b->reads), regions(b->writes), name, new_body,
                    std::nullopt, b->alloc_buffers, b->match_buffers, b->annotations);
  inner_block.CopyOnWrite()->span = b->span;
  Stmt nest = WithSpan(BlockRealize(inner_values, realize->predicate, inner_block), realize->span);
  for (size_t i = inner.size(); i-- > 0;) {
    const ForNode* l = inner[i];
    For copy(l->loop_var, l->min, l->extent, l->kind, nest, l->thread_tag, l->annotations);
    copy.CopyOnWrite()->span = l->span;
    nest = copy;
  }
  // ---- the init, over copies of the inner loops that feed data-parallel iterators ----
  Optional<Stmt> outer_init;
  if (b->init) {
    std::vector<const VarNode*> dropped;
    std::unordered_map<const VarNode*, PrimExpr> loop_copy;
    std::vector<std::pair<const ForNode*, Var>> kept;
    for (const ForNode* l : inner) {
      bool feeds = false;
      for (size_t k = 0; k < inner_iters.size(); ++k) {
        if (inner_iters[k]->iter_type == IterVarType::kDataPar) {
          feeds = feeds || UsesAny(inner_values[k], {l->loop_var.get()});
        }
      }
      if (!feeds) {
        dropped.push_back(l->loop_var.get());
        continue;
      }
      Var v(std::string(l->loop_var->name_hint), l->loop_var.dtype());
      loop_copy[l->loop_var.get()] = v;
      kept.emplace_back(l, v);
    }
    if (UsesAny(realize->predicate, dropped)) {
      fail("the predicate " + AsText(realize->predicate) + " of block \"" + name +
               "\" uses a reduction loop under " + lname +
               ": the outer init could not tell "
               "which elements the block writes",
           mark);
    }
    VarSubstituter loops_to_copies(loop_copy);
    std::unordered_map<const VarNode*, PrimExpr> to_init;
    Array<IterVar> init_iters;
    Array<PrimExpr> init_values;
    for (size_t k = 0; k < inner_iters.size(); ++k) {
      const IterVar& iv = inner_iters[k];
      if (iv->iter_type != IterVarType::kDataPar) continue;
      Var v(std::string(iv->var->name_hint) + "_init", iv->var.dtype());
      to_init[iv->var.get()] = v;
      init_iters.push_back(IterVar(v, iv->dom, IterVarType::kDataPar));
      init_values.push_back(loops_to_copies.VisitExpr(inner_values[k]));
    }
    VarSubstituter init_subst(to_init);
    Stmt init_store = init_subst.VisitStmt(to_new.VisitStmt(*b->init));
    // A reduction iterator of the inner block in the init's indices would make it a different
    // element per reduction step.
    std::vector<const VarNode*> inner_reduce;
    for (const IterVar& iv : inner_iters) {
      if (iv->iter_type != IterVarType::kDataPar) inner_reduce.push_back(iv->var.get());
    }
    bool uses_reduce = false;
    PostOrderVisit(init_store, [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>()) {
        for (const VarNode* r : inner_reduce) uses_reduce = uses_reduce || v == r;
      }
    });
    if (uses_reduce) fail("the init of block \"" + name + "\" uses a reduction iterator", mark);
    Block init_block(init_iters, {}, Relaxed(init_store, false, {}, {}, {}), name + "_init",
                     init_store);
    Stmt init_nest =
        BlockRealize(init_values, loops_to_copies.VisitExpr(realize->predicate), init_block);
    for (size_t i = kept.size(); i-- > 0;) {
      const ForNode* l = kept[i].first;
      init_nest =
          For(kept[i].second, l->min, l->extent, l->kind, init_nest, l->thread_tag, l->annotations);
    }
    outer_init = init_nest;
  }
  // ---- the outer block: its regions are the inner accesses over the inner iterators ----
  Map<Var, Range> relax;
  for (const IterVar& iv : inner_iters) relax.Set(iv->var, iv->dom);
  std::vector<const BufferNode*> written;
  PostOrderVisit(new_body, [&](const ObjectRef& n) {
    if (const auto* s = n.as<BufferStoreNode>()) written.push_back(s->buffer.get());
  });
  Array<BufferRegion> reads = Relaxed(new_body, true, relax, written, outer_iters);
  Array<BufferRegion> writes = Relaxed(new_body, false, relax, {}, outer_iters);
  Block outer_block(outer_iters, reads, writes, name + "_o", nest, outer_init);
  Stmt outer_realize = BlockRealize(outer_values, Bool(true), outer_block);
  impl.Replace(e, GetRef<Stmt>(top), outer_realize);
  RV out = impl.NewBlock(e.func, name + "_o");
  impl.Record({loop, preserve_unit_iters}, {out});
  return out;
}

}  // namespace schedule
}  // namespace tessel
