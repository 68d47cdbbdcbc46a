// The LowerBlocks pass (contract in include/tessel/transform/lower_blocks.h).
//
// One top-down mutator. Entering a BlockRealize it records, for the block's scope, the value of
// each iteration variable and each matched buffer's source; every expression below is rewritten
// through those records, so nested blocks see their ancestors' substitutions in their own
// iter_values, predicates and match regions. Variables are bound once in well-formed IR, so a
// record never needs undoing when its scope ends.
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/lower_blocks.h>
#include <tessel/transform/pass.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "transform/block_buffers.h"
#include "transform/buffer_layout.h"

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

bool IsConstTrue(const PrimExpr& e) {
  std::optional<int64_t> v = AsConstInt(e);
  return v && *v != 0;
}

bool IsConstZero(const PrimExpr& e) {
  std::optional<int64_t> v = AsConstInt(e);
  return v && *v == 0;
}

// Where a matched buffer's element (i0, ..., ir-1) lives: source[prefix..., min_k + i_k ...].
struct MatchTarget {
  Buffer source;
  // One min per source dimension; the matched buffer's dimensions line up with the last ones.
  std::vector<PrimExpr> mins;
};

class BlockLowerer : public StmtExprMutator {
 public:
  explicit BlockLowerer(const PrimFunc& func) {
    for (const Var& p : func->params) bound_.insert(p.get());
    for (const auto& kv : func->buffer_map) DeclareBufferFields(kv.second);
  }

  using StmtExprMutator::VisitExpr;
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef<PrimExpr>(op) : it->second;
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    Array<PrimExpr> idx = VisitArray(op->indices);
    auto it = match_.find(op->buffer.get());
    if (it != match_.end()) return BufferLoad(it->second.source, Retarget(it->second, idx));
    Buffer buf = Remap(op->buffer);
    if (buf.same_as(op->buffer) && idx.same_as(op->indices)) return GetRef<PrimExpr>(op);
    return BufferLoad(buf, idx);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Array<PrimExpr> idx = VisitArray(op->indices);
    auto it = match_.find(op->buffer.get());
    if (it != match_.end()) {
      return WithSpan(BufferStore(it->second.source, value, Retarget(it->second, idx)), op->span);
    }
    Buffer buf = Remap(op->buffer);
    if (buf.same_as(op->buffer) && value.same_as(op->value) && idx.same_as(op->indices)) {
      return GetRef<Stmt>(op);
    }
    return WithSpan(BufferStore(buf, value, idx), op->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer buf = Remap(op->buffer);
    Stmt body = VisitStmt(op->body);
    if (buf.same_as(op->buffer) && body.same_as(op->body)) return GetRef<Stmt>(op);
    return WithSpan(DeclBuffer(buf, body), op->span);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    bound_.insert(op->loop_var.get());
    bool concurrent = op->kind == ForKind::kParallel || op->kind == ForKind::kVectorized ||
                      op->kind == ForKind::kThreadBinding;
    if (concurrent) concurrent_.push_back(op);
    Stmt out = StmtExprMutator::VisitStmt_(op);
    if (concurrent) concurrent_.pop_back();
    return HoistInit(out);
  }

  // `for v: { if (g and v == min): init; rest }`, where the `if` is a block's init guard, the
  // loop is serial with a constant extent of at least 1 and neither g nor init uses v, becomes
  // `{ if g: init; for v: rest }`: the init ran only in the first iteration, before anything else
  // in it, and now runs just before that iteration. Applied to every loop on the way out, a
  // reduction's init leaves all its reduce loops when they directly enclose the block.
  Stmt HoistInit(const Stmt& loop_stmt) {
    const auto* loop = loop_stmt.as<ForNode>();
    if (!loop || (loop->kind != ForKind::kSerial && loop->kind != ForKind::kUnrolled)) {
      return loop_stmt;
    }
    std::optional<int64_t> extent = AsConstInt(loop->extent);
    const auto* seq = loop->body.as<SeqStmtNode>();
    if (!extent || *extent < 1 || !seq || seq->seq.size() < 2) return loop_stmt;
    const auto* guard_if = seq->seq[0].as<IfThenElseNode>();
    if (!guard_if || !init_ifs_.count(guard_if) || guard_if->else_case) return loop_stmt;
    std::vector<PrimExpr> terms, rest_terms;
    SplitAnd(guard_if->condition, &terms);
    bool found = false;
    for (const PrimExpr& t : terms) {
      const auto* e = t.as<EQNode>();
      if (!found && e && e->a.same_as(loop->loop_var) && SameValue(e->b, loop->min)) {
        found = true;
      } else {
        rest_terms.push_back(t);
      }
    }
    if (!found) return loop_stmt;
    Stmt init = guard_if->then_case;
    bool uses = UsesVar(init, loop->loop_var.get());
    for (const PrimExpr& t : rest_terms) uses = uses || UsesVar(t, loop->loop_var.get());
    if (uses) return loop_stmt;
    Stmt hoisted = init;
    if (!rest_terms.empty()) {
      PrimExpr g = rest_terms[0];
      for (size_t i = 1; i < rest_terms.size(); ++i) g = logical_and(g, rest_terms[i]);
      hoisted = WithSpan(IfThenElse(g, init), guard_if->span);
      init_ifs_.insert(hoisted.as<IfThenElseNode>());
    }
    Array<Stmt> body(seq->seq.begin() + 1, seq->seq.end());
    For out = GetRef<For>(loop);
    out.CopyOnWrite()->body = SeqStmt::Flatten(std::vector<Stmt>(body.begin(), body.end()));
    return SeqStmt::Flatten(std::vector<Stmt>{hoisted, out});
  }

  static void SplitAnd(const PrimExpr& e, std::vector<PrimExpr>* out) {
    if (const auto* a = e.as<AndNode>()) {
      SplitAnd(a->a, out);
      SplitAnd(a->b, out);
    } else {
      out->push_back(e);
    }
  }
  static bool SameValue(const PrimExpr& a, const PrimExpr& b) {
    if (a.same_as(b)) return true;
    std::optional<int64_t> x = AsConstInt(a), y = AsConstInt(b);
    return x && y && *x == *y;
  }
  template <typename T>
  static bool UsesVar(const T& node, const VarNode* v) {
    bool uses = false;
    PostOrderVisit(node, [&](const ObjectRef& n) { uses = uses || n.get() == v; });
    return uses;
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    bound_.insert(op->var.get());
    return StmtExprMutator::VisitStmt_(op);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    bound_.insert(op->buffer_var.get());
    return StmtExprMutator::VisitStmt_(op);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (auto v = op->node.as<Var>()) bound_.insert(v->get());
    return StmtExprMutator::VisitStmt_(op);
  }

  // A reduction iterator bound through a loop whose iterations run at once (threads, parallel
  // or vector lanes) makes those iterations read and write the same accumulator together: the
  // result would be a race, so it is refused until a cross-thread reduction lowering exists.
  void CheckReductionIsSequential(const BlockNode* block, const IterVar& iv,
                                  const PrimExpr& value) {
    for (const ForNode* loop : concurrent_) {
      bool uses = false;
      PostOrderVisit(value, [&](const ObjectRef& n) {
        if (n.get() == loop->loop_var.get()) uses = true;
      });
      if (!uses) continue;
      std::string kind = loop->kind == ForKind::kParallel ? "a parallel loop"
                         : loop->kind == ForKind::kVectorized
                             ? "a vectorized loop"
                             : "bound to thread \"" + std::string(loop->thread_tag) + "\"";
      TVM_FFI_THROW(ValueError)
          << "LowerBlocks: block \"" << block->name_hint << "\": reduction iterator '"
          << iv->var->name_hint << "' takes its value from loop '" << loop->loop_var->name_hint
          << "', which is " << kind
          << ": its iterations would update the same element at once. Cross-thread and parallel "
             "reductions are not supported yet, except what LowerCrossThreadReduction (the cuda "
             "pipeline, before LowerBlocks) lowers: a body `B[idx] = f(B[idx], v)` with f one of "
             "+, *, max, min, an optional init storing to the same element, and reduce "
             "iterators bound only to threadIdx loops of constant extent (and serial loops nested "
             "inside them, directly around the block). Otherwise reduce in a "
             "serial loop (one partial result per thread, then combine them, e.g. through shared "
             "memory)";
    }
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    TVM_FFI_THROW(ValueError) << "LowerBlocks: block \"" << op->name_hint
                              << "\" is not inside a BlockRealize";
    TVM_FFI_UNREACHABLE();
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    const BlockNode* block = op->block.get();
    // The predicate and values are evaluated outside the block: before its own records exist.
    PrimExpr predicate = VisitExpr(op->predicate);
    Array<PrimExpr> values = VisitArray(op->iter_values);

    PrimExpr init_guard;
    bool has_reduce = false;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      bound_.insert(iv->var.get());
      if (iv->iter_type == IterVarType::kCommReduce) {
        CheckReductionIsSequential(block, iv, values[i]);
        has_reduce = true;
        PrimExpr at_min = eq(values[i], VisitExpr(iv->dom->min));
        init_guard = init_guard.defined() ? logical_and(init_guard, at_min) : at_min;
      }
      vmap_[iv->var.get()] = values[i];
    }
    for (const MatchBufferRegion& m : block->match_buffers) Match(block, m);

    std::vector<Buffer> allocs;
    for (const Buffer& b : block->alloc_buffers) {
      bound_.insert(b->data.get());
      allocs.push_back(Remap(b));
    }

    std::vector<Stmt> seq;
    if (block->init) {
      if (!has_reduce) {
        TVM_FFI_THROW(ValueError) << "LowerBlocks: block \"" << block->name_hint
                                  << "\" has T.init() but no reduce axis (T.axis.reduce)";
      }
      Stmt init = VisitStmt(*block->init);
      if (IsConstTrue(init_guard)) {
        seq.push_back(init);
      } else if (!IsConstZero(init_guard)) {
        seq.push_back(WithSpan(IfThenElse(init_guard, init), op->span));
        init_ifs_.insert(seq.back().as<IfThenElseNode>());
      }
    }
    seq.push_back(VisitStmt(block->body));
    Stmt body = SeqStmt::Flatten(seq);

    for (size_t i = allocs.size(); i-- > 0;) {
      const Buffer& b = allocs[i];
      body = WithSpan(Allocate(b->data, b->dtype, AllocationExtents(b), Bool(true),
                               WithSpan(DeclBuffer(b, body), op->span)),
                      op->span);
    }
    if (!IsConstTrue(predicate)) body = WithSpan(IfThenElse(predicate, body), op->span);
    return body;
  }

 private:
  // A buffer whose shape, strides or offset mention substituted variables, re-declared with the
  // substituted values (the same object when none changed).
  Buffer Remap(const Buffer& buf) {
    if (vmap_.empty()) return buf;
    auto it = bmap_.find(buf.get());
    if (it != bmap_.end()) return it->second;
    Array<PrimExpr> shape = VisitArray(buf->shape);
    Array<PrimExpr> strides = VisitArray(buf->strides);
    PrimExpr offset = VisitExpr(buf->elem_offset);
    Buffer out = buf;
    if (!shape.same_as(buf->shape) || !strides.same_as(buf->strides) ||
        !offset.same_as(buf->elem_offset)) {
      out = Buffer(buf->name, buf->data, buf->dtype, shape, strides, offset, buf->scope,
                   buf->data_alignment, buf->offset_factor);
    }
    // Only cache a rewrite: an unchanged buffer may still change once a later record exists.
    if (!out.same_as(buf)) bmap_.emplace(buf.get(), out);
    return out;
  }

  void DeclareBufferFields(const Buffer& buf) {
    bound_.insert(buf->data.get());
    auto declare = [&](const PrimExpr& e) {
      if (const auto* v = e.as<VarNode>()) bound_.insert(v);
    };
    for (const PrimExpr& e : buf->shape) declare(e);
    for (const PrimExpr& e : buf->strides) declare(e);
    declare(buf->elem_offset);
  }

  Array<PrimExpr> Retarget(const MatchTarget& t, const Array<PrimExpr>& idx) {
    size_t lead = t.mins.size() - idx.size();
    Array<PrimExpr> out;
    for (size_t k = 0; k < t.mins.size(); ++k) {
      out.push_back(k < lead ? t.mins[k] : Shift(idx[k - lead], t.mins[k]));
    }
    return out;
  }

  // index + min; a Ramp stays a Ramp (its base moves) so that later passes see a plain vector
  // access rather than a broadcast sum.
  static PrimExpr Shift(const PrimExpr& index, const PrimExpr& min) {
    if (const auto* ramp = index.as<RampNode>()) {
      PrimExpr base = add(min, ramp->base);
      if (base.dtype() == ramp->stride.dtype()) return Ramp(base, ramp->stride, ramp->lanes);
    }
    return add(min, index);
  }

  // `expected` is what the match gives a field of the matched buffer declared as `declared`: a
  // variable nothing else binds takes it; with `check`, a constant must agree.
  void BindField(const BlockNode* block, const Buffer& buf, const std::string& what,
                 const PrimExpr& declared, const PrimExpr& expected, bool check) {
    if (const auto* v = declared.as<VarNode>()) {
      if (!bound_.count(v) && !vmap_.count(v)) {
        vmap_[v] = expected;
        return;
      }
    }
    if (!check) return;
    std::optional<int64_t> a = AsConstInt(VisitExpr(declared)), b = AsConstInt(expected);
    if (a && b && *a != *b) {
      TVM_FFI_THROW(ValueError) << "LowerBlocks: block \"" << block->name_hint
                                << "\": match_buffer " << buf->name << ": " << what << " is " << *a
                                << " but the source region gives " << *b;
    }
  }

  void Match(const BlockNode* block, const MatchBufferRegion& m) {
    const Buffer& buf = m->buffer;
    // The region in terms of the ultimate source (a matched buffer of an enclosing block
    // resolves to that block's source).
    Array<PrimExpr> mins, extents;
    for (const Range& r : m->source->region) {
      mins.push_back(VisitExpr(r->min));
      extents.push_back(VisitExpr(r->extent));
    }
    MatchTarget target;
    auto outer = match_.find(m->source->buffer.get());
    if (outer != match_.end()) {
      target.source = outer->second.source;
      Array<PrimExpr> abs = Retarget(outer->second, mins);
      target.mins.assign(abs.begin(), abs.end());
      size_t lead = abs.size() - mins.size();
      Array<PrimExpr> full_extents;
      for (size_t k = 0; k < lead; ++k) full_extents.push_back(MakeConst(extents[0].dtype(), 1));
      for (const PrimExpr& e : extents) full_extents.push_back(e);
      extents = full_extents;
    } else {
      target.source = Remap(m->source->buffer);
      target.mins.assign(mins.begin(), mins.end());
    }
    size_t rank = buf->shape.size(), src_rank = target.mins.size();
    if (rank > src_rank) {
      TVM_FFI_THROW(ValueError) << "LowerBlocks: block \"" << block->name_hint
                                << "\": match_buffer " << buf->name << " has " << rank
                                << " dimensions, more than its source region's " << src_rank;
    }
    size_t lead = src_rank - rank;
    std::vector<PrimExpr> src_strides = StridesOf(target.source);
    PrimExpr offset = target.source->elem_offset;
    for (size_t k = 0; k < src_rank; ++k) offset = add(offset, mul(target.mins[k], src_strides[k]));

    bound_.insert(buf->data.get());
    vmap_[buf->data.get()] = target.source->data;
    for (size_t k = 0; k < rank; ++k) {
      BindField(block, buf, "shape[" + std::to_string(k) + "]", buf->shape[k], extents[lead + k],
                true);
    }
    for (size_t k = 0; k < buf->strides.size(); ++k) {
      BindField(block, buf, "strides[" + std::to_string(k) + "]", buf->strides[k],
                src_strides[lead + k], false);
    }
    BindField(block, buf, "elem_offset", buf->elem_offset, offset, false);
    match_.emplace(buf.get(), std::move(target));
  }

  static Array<PrimExpr> AllocationExtents(const Buffer& b) {
    if (IsCompact(b)) return b->shape;
    return {FlatExtent(b)};
  }

  std::unordered_map<const VarNode*, PrimExpr> vmap_;
  std::unordered_map<const BufferNode*, Buffer> bmap_;
  std::unordered_map<const BufferNode*, MatchTarget> match_;
  // Variables something other than a match_buffer binds (params, loops, lets, iter vars ...).
  std::unordered_set<const VarNode*> bound_;
  // The enclosing loops whose iterations run at once (parallel, vectorized, thread-bound).
  std::vector<const ForNode*> concurrent_;
  // The init guards this pass made (HoistInit moves only these).
  std::unordered_set<const IfThenElseNode*> init_ifs_;
};

bool HasBlock(const Stmt& body) {
  bool found = false;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (n.as<BlockRealizeNode>() || n.as<BlockNode>()) found = true;
  });
  return found;
}

std::optional<int64_t> AlignInt(const Any& v) {
  if (auto i = v.try_cast<int64_t>()) return *i;
  if (auto e = v.try_cast<PrimExpr>()) return AsConstInt(*e);
  return std::nullopt;
}

// The "buffer_dim_align" annotations (schedule storage_align: [[write buffer index, axis, factor,
// offset], ...] on a block that writes the buffer) become strides of the allocated buffers: the
// stride of dimension `axis` is the smallest value >= its natural one (the next dimension's
// stride times its extent) that is `offset` modulo `factor`. Every use of the buffer then sees
// the strided layout, which the allocation's extent and FlattenBuffer follow.
Stmt ApplyStorageAlign(const PrimFunc& func) {
  struct Align {
    int64_t factor, offset;
  };
  std::unordered_map<const BufferNode*, std::map<int64_t, Align>> aligns;
  std::unordered_map<const BufferNode*, Buffer> allocated;
  PostOrderVisit(func->body, [&](const ObjectRef& n) {
    const auto* blk = n.as<BlockNode>();
    if (!blk) return;
    for (const Buffer& a : blk->alloc_buffers) allocated.emplace(a.get(), a);
    if (!blk->annotations.count("buffer_dim_align")) return;
    std::string where =
        "LowerBlocks: block \"" + std::string(blk->name_hint) + "\": buffer_dim_align ";
    auto list = blk->annotations.at("buffer_dim_align").try_cast<Array<Any>>();
    if (!list)
      TVM_FFI_THROW(ValueError) << where << "is not a list of [index, axis, factor, offset]";
    std::vector<Buffer> writes = BlockBuffers(blk, true);
    for (const Any& entry : *list) {
      auto t = entry.try_cast<Array<Any>>();
      std::optional<int64_t> idx, axis, factor, offset;
      if (t && t->size() == 4) {
        idx = AlignInt((*t)[0]);
        axis = AlignInt((*t)[1]);
        factor = AlignInt((*t)[2]);
        offset = AlignInt((*t)[3]);
      }
      if (!idx || !axis || !factor || !offset) {
        TVM_FFI_THROW(ValueError) << where
                                  << "entries must be [index, axis, factor, offset] integers";
      }
      if (*idx < 0 || *idx >= static_cast<int64_t>(writes.size())) {
        TVM_FFI_THROW(ValueError) << where << "names write buffer " << *idx << " of "
                                  << writes.size();
      }
      const Buffer& buf = writes[*idx];
      if (*axis < 0 || *axis >= static_cast<int64_t>(buf->shape.size()) || *factor <= 0 ||
          *offset < 0 || *offset >= *factor) {
        TVM_FFI_THROW(ValueError) << where << "[" << *idx << ", " << *axis << ", " << *factor
                                  << ", " << *offset << "] is out of range for " << buf->name;
      }
      auto& per_axis = aligns[buf.get()];
      auto it = per_axis.find(*axis);
      if (it != per_axis.end() && (it->second.factor != *factor || it->second.offset != *offset)) {
        TVM_FFI_THROW(ValueError) << where << "disagrees with another block on axis " << *axis
                                  << " of " << buf->name;
      }
      per_axis[*axis] = Align{*factor, *offset};
    }
  });
  if (aligns.empty()) return func->body;
  std::unordered_map<const BufferNode*, Buffer> replaced;
  for (const auto& kv : aligns) {
    auto a = allocated.find(kv.first);
    if (a == allocated.end()) {
      TVM_FFI_THROW(ValueError) << "LowerBlocks: buffer_dim_align names " << kv.first->name
                                << ", which no block allocates (a parameter's layout is the "
                                   "caller's)";
    }
    const Buffer& buf = a->second;
    if (!buf->strides.empty()) {
      TVM_FFI_THROW(ValueError) << "LowerBlocks: buffer_dim_align on " << buf->name
                                << ", which is declared with strides";
    }
    size_t n = buf->shape.size();
    std::vector<PrimExpr> strides(n);
    PrimExpr natural = MakeConst(n ? buf->shape[0].dtype() : DataType::Int(32), 1);
    for (size_t k = n; k-- > 0;) {
      PrimExpr stride = natural;
      auto al = kv.second.find(static_cast<int64_t>(k));
      if (al != kv.second.end()) {
        PrimExpr factor = MakeConst(stride.dtype(), al->second.factor);
        PrimExpr offset = MakeConst(stride.dtype(), al->second.offset);
        stride = add(stride, floormod(sub(offset, stride), factor));
      }
      strides[k] = stride;
      natural = mul(stride, buf->shape[k]);
    }
    replaced[buf.get()] =
        Buffer(buf->name, buf->data, buf->dtype, buf->shape, Array<PrimExpr>(strides),
               buf->elem_offset, buf->scope, buf->data_alignment, buf->offset_factor);
  }
  return BufferReplacer(replaced, {}).VisitStmt(func->body);
}

}  // namespace

PrimFunc LowerBlocks(const PrimFunc& func) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "LowerBlocks: undefined function";
  if (!HasBlock(func->body)) return func;
  Stmt body = BlockLowerer(func).VisitStmt(ApplyStorageAlign(func));
  return WithBody(func, body);
}

IRModule LowerBlocks(const IRModule& mod) {
  return MapFunctions(mod, [](const String&, const PrimFunc& f) { return LowerBlocks(f); });
}

Pass LowerBlocksPass() {
  return CreatePrimFuncPass([](PrimFunc f) { return LowerBlocks(f); }, 0, "LowerBlocks");
}

}  // namespace transform
}  // namespace tessel
