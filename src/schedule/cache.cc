// cache_read / cache_write: a copy of a buffer in another storage scope, with a block that fills
// it from the original (read) or writes it back (write). The new buffer has the original's shape,
// allocated in the scope's block; compute_at / reverse_compute_at then move the copy next to its
// users, and the lowering's CompactBufferAllocation shrinks it to what is used there.
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <set>

#include "schedule/schedule_impl.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

void CheckScope(Impl* impl, const std::string& scope, const PrimFunc& f) {
  for (const char* s : {"global", "shared", "shared.dyn", "local"}) {
    if (scope == s) return;
  }
  impl->Fail("storage scope \"" + scope + "\" is not one of global, shared, shared.dyn, local", f,
             "");
}

// `base`, or `base_<n>` for the first n that no block or buffer of `f` is named.
std::string FreshName(const PrimFunc& f, const std::string& base) {
  std::set<std::string> used;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* b = n.as<BlockNode>()) {
      used.insert(b->name_hint);
      for (const Buffer& a : b->alloc_buffers) used.insert(a->name);
    }
  });
  for (const auto& kv : f->buffer_map) used.insert(kv.second->name);
  if (!used.count(base)) return base;
  for (int n = 1;; ++n) {
    std::string name = base + "_" + std::to_string(n);
    if (!used.count(name)) return name;
  }
}

std::string ScopeSuffix(std::string scope) {
  for (char& c : scope) {
    if (c == '.') c = '_';
  }
  return scope;
}

// `region` kept inside the buffer's shape (relaxing loops ignores predicates, so a region can
// reach past the end of a buffer that a non-dividing split guards).
Region ClampToShape(const Region& region, const Buffer& buf, arith::Analyzer* ana) {
  Region out;
  for (size_t d = 0; d < region.size(); ++d) {
    PrimExpr lo = region[d].first, hi = region[d].second;
    PrimExpr zero = MakeConst(lo.dtype(), int64_t{0});
    PrimExpr last = buf->shape[d] - MakeConst(buf->shape[d].dtype(), int64_t{1});
    if (!ana->CanProve(lo >= zero)) lo = ana->Simplify(max(lo, zero));
    if (!ana->CanProve(hi <= last)) hi = ana->Simplify(min(hi, last));
    out.emplace_back(lo, hi);
  }
  return out;
}

// for ax0, ax1, ...: block `name`: dst[v] = src[v] over `region`.
Stmt CopyNest(const std::string& name, const Buffer& src, const Buffer& dst, const Region& region,
              arith::Analyzer* ana) {
  Array<IterVar> iters;
  Array<PrimExpr> values, idx;
  Array<Range> point;
  std::vector<Var> loops;
  std::vector<PrimExpr> extents;
  for (size_t d = 0; d < region.size(); ++d) {
    DataType t = src->shape[d].dtype();
    Var ax("ax" + std::to_string(d), t);
    Var v("v" + std::to_string(d), t);
    iters.push_back(
        IterVar(v, Range(MakeConst(t, int64_t{0}), src->shape[d]), IterVarType::kDataPar));
    PrimExpr lo = cast(t, region[d].first);
    extents.push_back(ana->Simplify(cast(t, region[d].second) - lo + MakeConst(t, int64_t{1})));
    values.push_back(ana->Simplify(lo + ax));
    loops.push_back(ax);
    idx.push_back(v);
    point.push_back(Range(v, MakeConst(t, int64_t{1})));
  }
  Stmt body = BufferStore(dst, BufferLoad(src, idx), idx);
  Block blk(iters, {BufferRegion(src, point)}, {BufferRegion(dst, point)}, name, body);
  Stmt s = BlockRealize(values, Bool(true), blk);
  for (size_t d = loops.size(); d-- > 0;) {
    s = For(loops[d], MakeConst(loops[d].dtype(), int64_t{0}), extents[d], ForKind::kSerial, s);
  }
  return s;
}

}  // namespace

RV ScheduleNode::CacheRead(const RV& block, int64_t read_buffer_index, const String& storage_scope,
                           const Array<RV>& consumer_blocks) {
  Impl impl(this, "cache_read");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockNode* b = site.realize->block.get();
  std::string mark = BlockMark(b->name_hint);
  CheckScope(&impl, storage_scope, f);
  BlockBuffers acc = AccessedBuffers(b);
  if (read_buffer_index < 0 || read_buffer_index >= static_cast<int64_t>(acc.reads.size())) {
    impl.Fail("block \"" + std::string(b->name_hint) + "\" reads " +
                  std::to_string(acc.reads.size()) + " buffer(s); read_buffer_index " +
                  std::to_string(read_buffer_index) + " is out of range",
              f, mark);
  }
  Buffer src = acc.reads[read_buffer_index];
  const Object* data = src->data.get();
  const BlockRealizeNode* scope = EnclosingBlock(f, site.realize);
  Stmt scope_body = scope ? scope->block->body : f->body;
  std::vector<ScopedRealize> blocks = ScopeRealizes(scope_body);
  std::vector<ScopedRealize> readers;
  if (consumer_blocks.empty()) {
    for (const ScopedRealize& r : blocks) {
      if (Reads(r.realize->block->body, data)) readers.push_back(r);
    }
  } else {
    for (const RV& c : consumer_blocks) {
      BlockSite cs = impl.FindBlock(c);
      bool in_scope = false;
      for (const ScopedRealize& r : blocks) {
        if (r.realize != cs.realize) continue;
        in_scope = true;
        readers.push_back(r);
      }
      std::string cname = cs.realize->block->name_hint;
      if (!in_scope) {
        impl.Fail("consumer block \"" + cname + "\" is not in the scope of block \"" +
                      std::string(b->name_hint) + "\"",
                  f, BlockMark(cname));
      }
      if (!Reads(cs.realize->block->body, data)) {
        impl.Fail("consumer block \"" + cname + "\" does not read " + std::string(src->name), f,
                  BlockMark(cname));
      }
    }
  }
  arith::Analyzer ana;
  std::optional<Region> region;
  for (const ScopedRealize& r : readers) {
    std::optional<Region> one = RelaxBlockAccesses(r.realize, data, true, r.loops, &ana);
    if (!one) {
      impl.Fail("could not bound the region of " + std::string(src->name) + " that block \"" +
                    std::string(r.realize->block->name_hint) + "\" reads",
                f, BlockMark(r.realize->block->name_hint));
    }
    region = region ? JoinRegions(*region, *one, &ana) : *one;
  }
  region = ClampToShape(*region, src, &ana);
  // The copy goes right before the first statement of the scope that holds a reader.
  std::vector<Stmt> stmts = SeqOf(scope_body);
  size_t at = stmts.size();
  for (size_t i = 0; i < stmts.size() && at == stmts.size(); ++i) {
    for (const ScopedRealize& r : readers) {
      if (Holds(stmts[i], r.realize)) at = i;
    }
  }
  if (Writes(stmts[at], data)) {
    impl.Fail(std::string(src->name) + " is written in the same loop nest as block \"" +
                  std::string(readers[0].realize->block->name_hint) +
                  "\" reads it, so no single copy before the nest can stand for it (cache_read "
                  "before compute_at)",
              f, BlockMark(readers[0].realize->block->name_hint));
  }
  // A write between the copy and a later reader would leave that reader a stale copy.
  for (size_t i = at + 1; i < stmts.size(); ++i) {
    for (const ScopedRealize& r : readers) {
      if (!Holds(stmts[i], r.realize)) continue;
      for (size_t w = at + 1; w <= i; ++w) {
        if (!Writes(stmts[w], data)) continue;
        impl.Fail(std::string(src->name) +
                      " is written after the copy's place and before block \"" +
                      std::string(r.realize->block->name_hint) +
                      "\" reads it, so one copy cannot stand for it",
                  f, BlockMark(r.realize->block->name_hint));
      }
    }
  }
  std::string name = FreshName(f, std::string(src->name) + "_" + ScopeSuffix(storage_scope));
  Buffer dst = MakeBuffer(name, src->dtype, src->shape, storage_scope);
  BufferReplacer to_copy(src, dst, /*loads_only=*/true);
  std::vector<Stmt> out;
  for (size_t i = 0; i < stmts.size(); ++i) {
    Stmt s = stmts[i];
    for (const ScopedRealize& r : readers) {
      if (Holds(s, r.realize))
        s = ReplaceIn(s, GetRef<Stmt>(r.realize), to_copy.VisitStmt(GetRef<Stmt>(r.realize)));
    }
    if (i == at) out.push_back(CopyNest(name, src, dst, *region, &ana));
    out.push_back(s);
  }
  PrimFunc g = WithScopeBody(f, scope, SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end())), dst);
  mod_.CopyOnWrite()->functions.Set(e.func, g);
  RV rv = impl.NewBlock(e.func, name);
  impl.Record({block, read_buffer_index, storage_scope,
               consumer_blocks.empty() ? Any(nullptr) : Any(consumer_blocks)},
              {rv});
  return rv;
}

RV ScheduleNode::CacheWrite(const RV& block, int64_t write_buffer_index,
                            const String& storage_scope, const Array<RV>& consumer_blocks) {
  Impl impl(this, "cache_write");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  const BlockRealizeNode* realize = site.realize;
  const BlockNode* b = realize->block.get();
  std::string bname = b->name_hint;
  std::string mark = BlockMark(bname);
  CheckScope(&impl, storage_scope, f);
  BlockBuffers acc = AccessedBuffers(b);
  if (write_buffer_index < 0 || write_buffer_index >= static_cast<int64_t>(acc.writes.size())) {
    impl.Fail("block \"" + bname + "\" writes " + std::to_string(acc.writes.size()) +
                  " buffer(s); write_buffer_index " + std::to_string(write_buffer_index) +
                  " is out of range",
              f, mark);
  }
  Buffer buf = acc.writes[write_buffer_index];
  const Object* data = buf->data.get();
  // What the block writes: every store at its iterators, so the written region is the box of
  // their domains, all of which the block computes (a copy of a larger box would write back
  // elements the block never computed).
  Region region;
  std::vector<const VarNode*> dims;
  bool bare = true;
  PostOrderVisit(b->body, [&](const ObjectRef& n) {
    const auto* st = n.as<BufferStoreNode>();
    if (st == nullptr || st->buffer->data.get() != data) return;
    std::vector<const VarNode*> vars;
    for (const PrimExpr& idx : st->indices) vars.push_back(idx.as<VarNode>());
    if (dims.empty()) dims = vars;
    bare = bare && vars == dims;
  });
  arith::Analyzer ana;
  for (const VarNode* v : dims) {
    std::optional<IterVar> iv;
    for (const IterVar& x : b->iter_vars) {
      if (x->var.get() == v) iv = x;
    }
    if (v == nullptr || !iv || (*iv)->iter_type != IterVarType::kDataPar) {
      bare = false;
      break;
    }
    const Range& dom = (*iv)->dom;
    region.emplace_back(dom->min, ana.Simplify(dom->min + dom->extent - 1));
  }
  std::set<const VarNode*> distinct(dims.begin(), dims.end());
  if (!bare || dims.empty() || distinct.size() != dims.size()) {
    impl.Fail("block \"" + bname + "\" does not store " + std::string(buf->name) +
                  " at distinct data-parallel iterators (" + std::string(buf->name) +
                  "[v0, v1, ...]) everywhere, so the region it computes is not known exactly",
              f, mark);
  }
  // The cache holds nothing before the block writes it: a load of the buffer must come after an
  // init of the same point, and every point of the domain must be stored (no conditional store,
  // bindings that visit the whole domain), or the copy back writes what was never computed.
  bool loads = false, conditional = false;
  PostOrderVisit(b->body, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) loads = loads || l->buffer->data.get() == data;
    if (const auto* c = n.as<IfThenElseNode>())
      conditional = conditional || Writes(GetRef<Stmt>(c), data);
  });
  if (loads && !b->init) {
    impl.Fail("block \"" + bname + "\" reads " + std::string(buf->name) +
                  ", which it writes, and has no init: the cache would be read before it is "
                  "written",
              f, mark);
  }
  if (conditional) {
    impl.Fail("block \"" + bname + "\" stores " + std::string(buf->name) +
                  " under a condition; the copy back would write the points it skips",
              f, mark);
  }
  if (!BindingsCoverDomain(realize, site.loops)) {
    impl.Fail("the bindings of block \"" + bname +
                  "\" could not be proved to visit every point of its iterators' domains; the "
                  "copy back would write points the block never computed",
              f, mark);
  }
  region = ClampToShape(region, buf, &ana);
  const BlockRealizeNode* scope = EnclosingBlock(f, realize);
  Stmt scope_body = scope ? scope->block->body : f->body;
  std::vector<Stmt> stmts = SeqOf(scope_body);
  size_t at = 0;
  while (at < stmts.size() && !Holds(stmts[at], realize)) ++at;
  for (const ScopedRealize& r : ScopeRealizes(stmts[at])) {
    if (r.realize == realize) continue;
    Stmt other = GetRef<Stmt>(r.realize);
    if (Reads(other, data) || Writes(other, data)) {
      impl.Fail("block \"" + std::string(r.realize->block->name_hint) +
                    "\" in the same loop nest as block \"" + bname + "\" accesses " +
                    std::string(buf->name) + " (cache_write before compute_at)",
                f, BlockMark(r.realize->block->name_hint));
    }
  }
  std::vector<const BlockRealizeNode*> consumers;
  for (const RV& c : consumer_blocks) {
    BlockSite cs = impl.FindBlock(c);
    std::string cname = cs.realize->block->name_hint;
    size_t cpos = at + 1;
    while (cpos < stmts.size() && !Holds(stmts[cpos], cs.realize)) ++cpos;
    if (cpos == stmts.size()) {
      impl.Fail(
          "consumer block \"" + cname + "\" is not after block \"" + bname + "\" in its scope", f,
          BlockMark(cname));
    }
    // The consumer reads the cache instead of the buffer: nothing may write the buffer in
    // between (the cache would be stale), and it may read only what the block computed.
    std::vector<Stmt> between(stmts.begin() + at + 1, stmts.begin() + cpos + 1);
    for (const ScopedRealize& r :
         ScopeRealizes(SeqStmt::Flatten(Array<Stmt>(between.begin(), between.end())))) {
      if (!Writes(GetRef<Stmt>(r.realize), data)) continue;
      impl.Fail("block \"" + std::string(r.realize->block->name_hint) + "\" writes " +
                    std::string(buf->name) + " after block \"" + bname +
                    "\" and before consumer \"" + cname +
                    "\" reads it; the consumer cannot read the cache",
                f, BlockMark(r.realize->block->name_hint));
    }
    std::vector<const ForNode*> cloops;
    for (const ScopedRealize& r : ScopeRealizes(stmts[cpos])) {
      if (r.realize == cs.realize) cloops = r.loops;
    }
    std::optional<Region> read = RelaxBlockAccesses(cs.realize, data, true, cloops, &ana);
    bool inside = read.has_value();
    for (size_t d = 0; inside && d < read->size(); ++d) {
      inside = ana.CanProve((*read)[d].first >= region[d].first) &&
               ana.CanProve((*read)[d].second <= region[d].second);
    }
    if (!inside) {
      impl.Fail("consumer block \"" + cname + "\" could not be proved to read only the part of " +
                    std::string(buf->name) + " that block \"" + bname + "\" computes",
                f, BlockMark(cname));
    }
    consumers.push_back(cs.realize);
  }
  std::string name = FreshName(f, std::string(buf->name) + "_" + ScopeSuffix(storage_scope));
  Buffer dst = MakeBuffer(name, buf->dtype, buf->shape, storage_scope);
  std::vector<Stmt> out;
  for (size_t i = 0; i < stmts.size(); ++i) {
    Stmt s = stmts[i];
    if (i == at) {
      BufferReplacer all(buf, dst, /*loads_only=*/false);
      out.push_back(ReplaceIn(s, GetRef<Stmt>(realize), all.VisitStmt(GetRef<Stmt>(realize))));
      out.push_back(CopyNest(name, dst, buf, region, &ana));
      continue;
    }
    for (const BlockRealizeNode* c : consumers) {
      if (Holds(s, c)) {
        BufferReplacer loads(buf, dst, /*loads_only=*/true);
        s = ReplaceIn(s, GetRef<Stmt>(c), loads.VisitStmt(GetRef<Stmt>(c)));
      }
    }
    out.push_back(s);
  }
  PrimFunc g = WithScopeBody(f, scope, SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end())), dst);
  mod_.CopyOnWrite()->functions.Set(e.func, g);
  RV rv = impl.NewBlock(e.func, name);
  impl.Record({block, write_buffer_index, storage_scope,
               consumer_blocks.empty() ? Any(nullptr) : Any(consumer_blocks)},
              {rv});
  return rv;
}

}  // namespace schedule
}  // namespace tessel
