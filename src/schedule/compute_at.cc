// compute_at / reverse_compute_at: a block moves under a loop of the blocks it feeds (or that feed
// it), and its loops are regenerated to cover exactly the region those blocks access below the
// loop: the accesses relaxed over the loops under it (and, for a shared-memory buffer, over the
// threads that share it), joined, and mapped back to the moved block's iterators through its own
// accesses X[v0, v1, ...]. The region is derived from the accesses, so it covers them by
// construction; where it may leave the block's domain, a predicate keeps the block inside.
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <set>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

bool IsTrue(const PrimExpr& e) {
  auto v = AsConstInt(e);
  return v && *v != 0;
}

std::vector<PrimExpr> Conjuncts(const PrimExpr& e) {
  if (const auto* a = e.as<AndNode>()) {
    std::vector<PrimExpr> out = Conjuncts(a->a);
    for (const PrimExpr& x : Conjuncts(a->b)) out.push_back(x);
    return out;
  }
  return {e};
}

// Whether the conjunctions of `p` and `q` are equivalent, one conjunct at a time (each conjunct of
// one implied by a single conjunct of the other, or true outright): the small proofs the rewrite
// simplifier settles without Z3, where the whole implication would need it.
bool Equivalent(const std::vector<PrimExpr>& p, const std::vector<PrimExpr>& q,
                arith::Analyzer* ana) {
  auto implied = [&](const PrimExpr& c, const std::vector<PrimExpr>& by) {
    if (ana->CanProve(c)) return true;
    for (const PrimExpr& b : by) {
      if (ana->CanProve(!b || c)) return true;
    }
    return false;
  };
  for (const PrimExpr& c : q) {
    if (!implied(c, p)) return false;
  }
  for (const PrimExpr& c : p) {
    if (!implied(c, q)) return false;
  }
  return true;
}

// Whether the stores of `data` in the block of `realize` write, as the loops `relax` run, every
// point of `box` that lies in `domain` (the moved block's iterator domains, which its predicate
// keeps it in): no condition around the stores, the stores' indices (bindings put in) a
// one-to-one map from the relaxed loops they use onto the box, and the block's predicate, if
// any, proved equivalent to "the indices lie in `domain`" (what a non-dividing split leaves). A
// bounding box of strided writes fails: a block moved after them would write back points they
// never produced.
bool WritesWholeBox(const BlockRealizeNode* realize, const Object* data,
                    const std::vector<const ForNode*>& relax, const Region& box,
                    const Region& domain, arith::Analyzer* ana) {
  const BlockNode* b = realize->block.get();
  std::unordered_map<const VarNode*, PrimExpr> bindings;
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    bindings[b->iter_vars[i]->var.get()] = realize->iter_values[i];
  }
  VarSubstituter subst(bindings);
  bool ok = true, any = false;
  auto check = [&](const ObjectRef& n) {
    if (n.as<IfThenElseNode>()) ok = false;
    const auto* st = n.as<BufferStoreNode>();
    if (st == nullptr || st->buffer->data.get() != data || !ok) return;
    any = true;
    Array<PrimExpr> idx;
    for (const PrimExpr& e : st->indices) idx.push_back(subst.VisitExpr(e));
    tvm::ffi::Map<Var, Range> dom;
    for (const ForNode* l : relax) {
      bool used = false;
      for (const PrimExpr& e : idx) used = used || UsesAny(e, {l->loop_var.get()});
      if (used) dom.Set(l->loop_var, Range(l->min, l->extent));
    }
    arith::IterMapResult m =
        arith::DetectIterMap(idx, dom, Bool(true), arith::IterMapLevel::kBijective, ana);
    if (!m.ok() || m.indices.size() != box.size()) {
      ok = false;
      return;
    }
    if (!IsTrue(realize->predicate)) {
      std::vector<PrimExpr> inside;
      for (size_t d = 0; d < idx.size() && d < domain.size(); ++d) {
        inside.push_back(idx[d] >= domain[d].first);
        inside.push_back(idx[d] <= domain[d].second);
      }
      ok = Equivalent(Conjuncts(subst.VisitExpr(realize->predicate)), inside, ana);
    }
    for (size_t d = 0; d < box.size() && ok; ++d) {
      const arith::IterSumExpr& sum = m.indices[d];
      PrimExpr extent = box[d].second - box[d].first + 1;
      ok = ana->CanProveEqual(sum->base, box[d].first);
      if (sum->args.empty()) {
        ok = ok && ana->CanProveEqual(extent, MakeConst(extent.dtype(), int64_t{1}));
      } else {
        ok = ok && sum->args.size() == 1 &&
             ana->CanProveEqual(sum->args[0]->scale, MakeConst(sum->dtype, int64_t{1})) &&
             ana->CanProveEqual(sum->args[0]->extent, extent);
      }
    }
  };
  PostOrderVisit(b->body, check);
  if (b->init) PostOrderVisit(*b->init, check);
  return ok && any;
}

void MoveUnder(ScheduleNode* sch, const RV& block, const RV& loop, bool preserve_unit_loops,
               int64_t index, bool reverse) {
  Impl impl(sch, reverse ? "reverse_compute_at" : "compute_at");
  BlockSite site = impl.FindBlock(block);
  LoopSite lsite = impl.FindLoop(loop);
  const ScheduleNode::Entry e = sch->rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockRealizeNode* realize = site.realize;
  const BlockNode* b = realize->block.get();
  std::string bname = b->name_hint;
  std::string mark = BlockMark(bname);
  const ForNode* target = lsite.loop;
  std::string lname = target->loop_var->name_hint;
  std::string lmark = LoopMark(target->loop_var);
  if (sch->rvs_[loop->id].func != e.func) {
    impl.Fail("loop " + lname + " is in function " + sch->rvs_[loop->id].func + ", block \"" +
                  bname + "\" in " + e.func,
              f, "");
  }
  if (std::find(site.loops.begin(), site.loops.end(), target) != site.loops.end()) {
    impl.Fail("block \"" + bname + "\" is already under loop " + lname, f, lmark);
  }
  const BlockRealizeNode* scope = EnclosingBlock(f, realize);
  if (EnclosingBlock(f, target) != scope) {
    impl.Fail("loop " + lname + " is not in the scope of block \"" + bname +
                  "\" (they are under different blocks)",
              f, lmark);
  }
  if (!IsTrue(realize->predicate)) {
    impl.Fail("block \"" + bname + "\" has the predicate " + AsText(realize->predicate) +
                  ", which refers to the loops it leaves",
              f, mark);
  }
  Stmt scope_body = scope ? scope->block->body : f->body;
  std::vector<Stmt> stmts = SeqOf(scope_body);
  size_t bpos = stmts.size(), lpos = stmts.size();
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (Holds(stmts[i], realize)) bpos = i;
    if (Holds(stmts[i], target)) lpos = i;
  }
  // The block's own nest: loops that hold nothing but it.
  Stmt s = stmts[bpos];
  while (const auto* l = s.as<ForNode>()) s = l->body;
  if (s.get() != realize) {
    impl.Fail("block \"" + bname +
                  "\" shares its loops with other statements; only a block whose loops hold it "
                  "alone can move",
              f, mark);
  }
  if (!reverse && bpos > lpos) {
    impl.Fail("block \"" + bname + "\" comes after loop " + lname +
                  ": compute_at moves a block under a loop of its consumers "
                  "(reverse_compute_at moves one under its producers)",
              f, lmark);
  }
  if (reverse && bpos < lpos) {
    impl.Fail("block \"" + bname + "\" comes before loop " + lname +
                  ": reverse_compute_at moves a block under a loop of its producers "
                  "(compute_at moves one under its consumers)",
              f, lmark);
  }
  if (reverse) {
    for (const IterVar& iv : b->iter_vars) {
      if (iv->iter_type != IterVarType::kDataPar) {
        impl.Fail("block \"" + bname + "\" has the " + IterVarTypeName(iv->iter_type) +
                      " iterator " + std::string(iv->var->name_hint) +
                      "; reverse_compute_at moves only data-parallel blocks",
                  f, mark);
      }
    }
  }
  // The block is recomputed for the points each iteration of the loop needs, possibly several
  // times: that gives the same values only when it does not read what it writes (a reduction
  // restarts from its init), and only points it computed before when its bindings visit its whole
  // domain.
  if (ReadsWhatItWrites(b) && (reverse || !b->init)) {
    impl.Fail("block \"" + bname + "\" reads a buffer it writes" +
                  (reverse ? "" : " and has no init") +
                  "; computing a point again would not give the same value",
              f, mark);
  }
  if (!BindingsCoverDomain(realize, site.loops)) {
    impl.Fail("the bindings of block \"" + bname +
                  "\" could not be proved to visit every point of its iterators' domains; the new "
                  "loops would compute points it never computed",
              f, mark);
  }
  // The block's iterations move past every block between its place and the loop: none of those
  // may write what it reads (compute_at), or read or write what it writes (reverse_compute_at).
  BlockBuffers acc = AccessedBuffers(b);
  {
    size_t lo = reverse ? lpos : bpos + 1, hi = reverse ? bpos : lpos + 1;
    std::vector<Stmt> passed(stmts.begin() + lo, stmts.begin() + hi);
    for (const Stmt& st : passed) {
      for (const ScopedRealize& r : ScopeRealizes(st)) {
        Stmt other = GetRef<Stmt>(r.realize);
        std::string rname = r.realize->block->name_hint;
        for (const Buffer& buf : reverse ? acc.writes : acc.reads) {
          const Object* d = buf->data.get();
          if (Writes(other, d) || (reverse && Reads(other, d))) {
            impl.Fail("block \"" + rname + "\" " + (reverse ? "accesses " : "writes ") +
                          std::string(buf->name) + ", which block \"" + bname + "\" " +
                          (reverse ? "writes" : "reads") + "; moving \"" + bname +
                          "\" past it would change what " +
                          (reverse ? "that block sees" : "it reads"),
                      f, BlockMark(rname));
          }
        }
      }
    }
  }
  // The blocks of the scope that the moved block feeds (compute_at) or is fed by.
  const std::vector<Buffer>& mine = reverse ? acc.reads : acc.writes;
  std::vector<ScopedRealize> related;
  std::vector<Buffer> links;
  for (const ScopedRealize& r : ScopeRealizes(scope_body)) {
    if (r.realize == realize) continue;
    Stmt other = GetRef<Stmt>(r.realize);
    std::string rname = r.realize->block->name_hint;
    for (const Buffer& buf : mine) {
      const Object* data = buf->data.get();
      if (!reverse && Writes(other, data)) {
        impl.Fail("block \"" + rname + "\" writes " + std::string(buf->name) + " too, besides \"" +
                      bname + "\"",
                  f, BlockMark(rname));
      }
      if (!(reverse ? Writes(other, data) : Reads(other, data))) continue;
      if (std::find(r.loops.begin(), r.loops.end(), target) == r.loops.end()) {
        impl.Fail("block \"" + rname + "\" " + (reverse ? "writes " : "reads ") +
                      std::string(buf->name) + ", which \"" + bname + "\" " +
                      (reverse ? "reads" : "writes") + ", but is not under loop " + lname,
                  f, BlockMark(rname));
      }
      if (related.empty() || related.back().realize != r.realize) related.push_back(r);
      bool seen = false;
      for (const Buffer& x : links) seen = seen || x.same_as(buf);
      if (!seen) links.push_back(buf);
    }
  }
  if (related.empty()) {
    impl.Fail(std::string("no block under loop ") + lname +
                  (reverse ? " writes what block \"" : " reads what block \"") + bname +
                  (reverse ? "\" reads" : "\" writes"),
              f, lmark);
  }
  if (links.size() != 1) {
    impl.Fail("block \"" + bname + "\" is linked to the blocks under loop " + lname + " through " +
                  std::to_string(links.size()) + " buffers; it can follow only one",
              f, mark);
  }
  const Buffer& link = links[0];
  const Object* data = link->data.get();
  bool shared = std::string(link->scope).rfind("shared", 0) == 0;
  // The region the blocks under the loop access, relaxed over the loops below it (and, for a
  // shared buffer, over the thread loops around it: every thread of the block sees the copy).
  arith::Analyzer ana;
  BindLoops(&ana, lsite.above);
  BindLoops(&ana, {target});
  std::optional<Region> region;
  for (const ScopedRealize& r : related) {
    size_t at = std::find(r.loops.begin(), r.loops.end(), target) - r.loops.begin();
    std::vector<const ForNode*> relax(r.loops.begin() + at + 1, r.loops.end());
    for (size_t i = 0; i <= at && shared; ++i) {
      const ForNode* l = r.loops[i];
      if (l->kind == ForKind::kThreadBinding &&
          std::string(l->thread_tag).rfind("threadIdx", 0) == 0) {
        relax.push_back(l);
      }
    }
    std::optional<Region> one = RelaxBlockAccesses(r.realize, data, !reverse, relax, &ana);
    if (!one) {
      impl.Fail("could not bound the region of " + std::string(link->name) + " that block \"" +
                    std::string(r.realize->block->name_hint) + "\" accesses under loop " + lname,
                f, BlockMark(r.realize->block->name_hint));
    }
    region = region ? JoinRegions(*region, *one, &ana) : *one;
  }
  // The moved block's own accesses of the buffer say which iterator each dimension is.
  std::vector<const VarNode*> dims;
  bool bare = true;
  auto check = [&](const Array<PrimExpr>& indices) {
    std::vector<const VarNode*> vars;
    for (const PrimExpr& idx : indices) vars.push_back(idx.as<VarNode>());
    if (dims.empty()) dims = vars;
    bare = bare && vars == dims;
  };
  auto visit = [&](const ObjectRef& n) {
    if (const auto* st = n.as<BufferStoreNode>()) {
      if (!reverse && st->buffer->data.get() == data) check(st->indices);
    }
    if (const auto* ld = n.as<BufferLoadNode>()) {
      if (reverse && ld->buffer->data.get() == data) check(ld->indices);
    }
  };
  PostOrderVisit(b->body, visit);
  if (b->init) PostOrderVisit(*b->init, visit);
  std::set<const VarNode*> distinct(dims.begin(), dims.end());
  bool iters = true;
  for (const VarNode* v : dims) {
    bool found = false;
    for (const IterVar& iv : b->iter_vars) found = found || iv->var.get() == v;
    iters = iters && found;
  }
  if (!bare || dims.empty() || distinct.size() != dims.size() || !iters) {
    impl.Fail("block \"" + bname + "\" does not access " + std::string(link->name) +
                  " at distinct iterators (" + std::string(link->name) +
                  "[v0, v1, ...]) everywhere, so the iterations that give the region are not known",
              f, mark);
  }
  // A consumer moved under the loop consumes the whole box, so the producers there must write
  // all of it.
  Region domain;
  for (const VarNode* v : dims) {
    for (const IterVar& iv : b->iter_vars) {
      if (iv->var.get() != v) continue;
      domain.emplace_back(iv->dom->min, ana.Simplify(iv->dom->min + iv->dom->extent - 1));
    }
  }
  for (const ScopedRealize& r : related) {
    if (!reverse) break;
    size_t at = std::find(r.loops.begin(), r.loops.end(), target) - r.loops.begin();
    std::vector<const ForNode*> relax(r.loops.begin() + at + 1, r.loops.end());
    BindLoops(&ana, relax);
    if (!WritesWholeBox(r.realize, data, relax, *region, domain, &ana)) {
      std::string rname = r.realize->block->name_hint;
      impl.Fail("could not prove that block \"" + rname +
                    "\" writes every element of the region of " + std::string(link->name) +
                    " that \"" + bname + "\" would read under loop " + lname +
                    " (a condition, a predicate other than the bounds of its domain, or strided "
                    "writes whose bounding box has holes)",
                f, BlockMark(rname));
    }
  }
  // The new loops: one per iterator over its part of the region (the whole domain for an
  // iterator the buffer does not index), dropped when of extent 1 unless asked to keep it.
  Array<PrimExpr> values;
  std::vector<std::pair<Var, PrimExpr>> loops;
  PrimExpr predicate = Bool(true);
  for (size_t i = 0; i < b->iter_vars.size(); ++i) {
    const IterVar& iv = b->iter_vars[i];
    DataType t = iv->var.dtype();
    PrimExpr dmin = iv->dom->min;
    PrimExpr dmax = ana.Simplify(iv->dom->min + iv->dom->extent - 1);
    PrimExpr lo = dmin, hi = dmax;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] != iv->var.get()) continue;
      lo = cast(t, (*region)[d].first);
      hi = cast(t, (*region)[d].second);
    }
    PrimExpr extent = ana.Simplify(hi - lo + MakeConst(t, int64_t{1}));
    PrimExpr value;
    auto unit = AsConstInt(extent);
    if (unit && *unit == 1 && !preserve_unit_loops) {
      value = ana.Simplify(lo);
    } else {
      Var ax("ax" + std::to_string(loops.size()), t);
      loops.emplace_back(ax, extent);
      value = ana.Simplify(lo + ax);
    }
    values.push_back(value);
    if (!ana.CanProve(lo >= dmin)) predicate = predicate && (value >= dmin);
    if (!ana.CanProve(hi <= dmax)) predicate = predicate && (value <= dmax);
  }
  Stmt nest = BlockRealize(values, ana.Simplify(predicate), GetRef<Block>(b));
  for (size_t k = loops.size(); k-- > 0;) {
    nest = For(loops[k].first, MakeConst(loops[k].first.dtype(), int64_t{0}), loops[k].second,
               ForKind::kSerial, nest);
  }
  // Where under the loop: after whatever it must follow, before whatever must follow it.
  std::vector<Stmt> body = SeqOf(target->body);
  int64_t n = static_cast<int64_t>(body.size());
  int64_t first_related = n, last_related = -1;
  for (int64_t i = 0; i < n; ++i) {
    for (const ScopedRealize& r : related) {
      if (Holds(body[i], r.realize)) {
        first_related = std::min(first_related, i);
        last_related = std::max(last_related, i);
      }
    }
  }
  // Statements the moved block must come after (they write what it reads) / before (they read
  // what it writes).
  int64_t last_before = -1, first_after = n;
  for (int64_t i = 0; i < n; ++i) {
    for (const Buffer& r : acc.reads) {
      if (Writes(body[i], r->data.get())) last_before = std::max(last_before, i);
    }
    for (const Buffer& w : acc.writes) {
      if (Reads(body[i], w->data.get())) first_after = std::min(first_after, i);
    }
  }
  int64_t pos;
  if (index == -1) {
    pos = reverse ? n : first_related;
  } else if (index == -2) {
    pos = last_before + 1;
  } else {
    pos = index;
  }
  if (pos < 0 || pos > n || pos <= last_before || pos > first_after) {
    impl.Fail("block \"" + bname + "\" cannot go at index " + std::to_string(index) +
                  " under loop " + lname + ": it must come after child " +
                  std::to_string(last_before) + " (which writes what it reads) and before child " +
                  std::to_string(first_after) + " (which reads what it writes)",
              f, lmark);
  }
  body.insert(body.begin() + pos, nest);
  For moved(target->loop_var, target->min, target->extent, target->kind,
            SeqStmt(Array<Stmt>(body.begin(), body.end())), target->thread_tag,
            target->annotations);
  std::vector<Stmt> out;
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (i == bpos) continue;
    out.push_back(i == lpos
                      ? ReplaceIn(stmts[i], GetRef<Stmt>(target), WithSpan(moved, target->span))
                      : stmts[i]);
  }
  PrimFunc g =
      WithScopeBody(f, scope, SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end())), std::nullopt);
  sch->mod_.CopyOnWrite()->functions.Set(e.func, g);
  std::vector<const VarNode*> gone;
  for (const ForNode* l : site.loops) gone.push_back(l->loop_var.get());
  impl.Remove(gone);
  impl.Record({block, loop, preserve_unit_loops, index}, {});
}

}  // namespace

void ScheduleNode::ComputeAt(const RV& block, const RV& loop, bool preserve_unit_loops,
                             int64_t index) {
  MoveUnder(this, block, loop, preserve_unit_loops, index, false);
}

void ScheduleNode::ReverseComputeAt(const RV& block, const RV& loop, bool preserve_unit_loops,
                                    int64_t index) {
  MoveUnder(this, block, loop, preserve_unit_loops, index, true);
}

}  // namespace schedule
}  // namespace tessel
