// The SoftwarePipeline pass (contract in include/tessel/transform/software_pipeline.h).
//
// Design. A loop `for k in T.serial(min, min + n, annotations={"tessel.pipeline_stages": S})`
// whose body is `P(k); C(k)` (P: copies into shared buffers, C: the rest) becomes, inside a GPU
// kernel and with asynchronous copies:
//
//   P(min + 0)      if 0 < n        # prologue: S - 1 tiles in flight
//   commit
//   ...
//   P(min + S - 2)  if S - 2 < n
//   commit
//   for k in range(min, min + n):   # {"tessel.pipelined": S}
//       wait_group(S - 2)           # the group of tile k has landed (for this thread) ...
//       barrier                     # ... and for every thread; and C(k - 1) is done everywhere
//       if k - min + S - 1 < n:
//           P(k + S - 1)            # into stage (k - min + S - 1) % S == (k - min - 1) % S
//       commit                      # always, so that group i is tile min + i
//       C(k)                        # reads stage (k - min) % S
//   barrier                         # C(min + n - 1) is done before anything reuses the stages
//
// Why the waits are right: before the wait of iteration k, S - 1 + (k - min) groups are
// committed, group i holding tile min + i; wait_group(S - 2) retires all but the newest S - 2,
// i.e. groups 0 .. k - min, so tile k has landed. Why the overwrite is safe: P(k + S - 1) writes
// the stage that C(k - 1) read, and the barrier separates them. After the loop no real copy is in
// flight (the tiles past n were never issued; their groups are empty), so no wait_group(0) is
// needed. VerifyPipeline (verify_pipeline.h) checks all this on the output.
//
// Without asynchronous copies (the C and Metal targets, CUDA before sm_80, or a copy that cannot
// become cp.async) the same form with plain stores is correct: a plain store is complete when it
// returns, and the barrier makes it visible. Outside a GPU kernel there are no barriers, waits or
// commits at all, so the C target runs the same stage indexing on the CPU. The same argument
// covers the mixed forms the copier writes: a guarded copy's zero fill (`else`: a plain store),
// and a copy wider than an element whose source base fails its run-time alignment test.
//
// Parts: LoopParts / SplitBody read an annotated loop (producer, consumer, staged buffers);
// StageRewriter indexes stages and copies the producer with fresh variables; AsyncCopier turns its
// copies into cp.async; Pipeliner puts the prologue, loop and allocations together.
//
// The pass runs after InjectSharedBarriers, which sees a plain loop and places its barriers in
// it; those between P and C and at the end of the body are dropped here (the pass's barrier at
// the top of each iteration replaces both), so InjectSharedBarriers never has to reason about
// stages or asynchronous writes.
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/substitute.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/software_pipeline.h>
#include <tessel/transform/swizzle_layout.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

bool IsSharedBuffer(const Buffer& buf) {
  auto shared = [](const std::string& s) { return s == "shared" || s == "shared.dyn"; };
  return shared(buf->scope) || shared(buf->data->storage_scope);
}

bool IsBlockBarrier(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  const auto* call = ev ? ev->value.as<CallNode>() : nullptr;
  return call && call->op.same_as(builtin::tvm_storage_sync());
}

Stmt Barrier() {
  StringImm scope("shared");
  return Evaluate(Call(scope.dtype(), builtin::tvm_storage_sync(), {scope}));
}

Stmt CommitGroup() {
  return Evaluate(Call(DataType::Int(32), Op::Get("ptx_cp_async_commit_group"), {}));
}

Stmt WaitGroup(int64_t n) {
  return Evaluate(Call(DataType::Int(32), Op::Get("ptx_cp_async_wait_group"),
                       {MakeConst(DataType::Int(32), n)}));
}

PrimExpr AddressOf(const Buffer& buf, const PrimExpr& index) {
  return Call(DataType::Handle(), builtin::address_of(), {BufferLoad(buf, {index})});
}

bool IsConstValue(const PrimExpr& e, int64_t v) {
  auto c = AsConstInt(e);
  return c && *c == v;
}

bool IsZero(const PrimExpr& e) {
  if (const auto* b = e.as<BroadcastNode>()) return IsZero(b->value);
  if (const auto* f = e.as<FloatImmNode>()) return f->value == 0;
  if (auto v = AsConstInt(e)) return *v == 0;
  return false;
}

// A statement is a producer statement when it only stores into shared buffers values that read no
// shared buffer, through loops, `if`s and sequences, and calls nothing but if_then_else.
bool IsProducerStmt(const Stmt& s) {
  bool ok = true, stores = false;
  std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
    if (!ok) return;
    if (const auto* seq = st.as<SeqStmtNode>()) {
      for (const Stmt& c : seq->seq) walk(c);
    } else if (const auto* f = st.as<ForNode>()) {
      ok = f->kind != ForKind::kThreadBinding && f->kind != ForKind::kParallel;
      walk(f->body);
    } else if (const auto* i = st.as<IfThenElseNode>()) {
      walk(i->then_case);
      if (i->else_case) walk(*i->else_case);
    } else if (const auto* store = st.as<BufferStoreNode>()) {
      stores = true;
      ok = IsSharedBuffer(store->buffer);
    } else {
      ok = false;
    }
  };
  walk(s);
  if (!ok || !stores) return false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (const auto* load = n.as<BufferLoadNode>()) ok = ok && !IsSharedBuffer(load->buffer);
    if (const auto* call = n.as<CallNode>()) ok = ok && call->op.same_as(builtin::if_then_else());
  });
  return ok;
}

// The parts of an annotated loop's body.
struct LoopParts {
  std::vector<Stmt> wrappers;  // Allocate / DeclBuffer around the sequence, outermost first
  std::vector<Stmt> producer, consumer;
  std::vector<const VarNode*> staged;  // data variables the producer stores into, in order
};

class PipelineError {
 public:
  PipelineError(std::string function, const ForNode* loop)
      : function_(std::move(function)), loop_(loop) {}
  [[noreturn]] void operator()(const std::string& what) const {
    TVM_FFI_THROW(ValueError) << "SoftwarePipeline: function '" << function_ << "', loop '"
                              << loop_->loop_var->name_hint << "': " << what;
    TVM_FFI_UNREACHABLE();
  }

 private:
  std::string function_;
  const ForNode* loop_;
};

// The number of stages asked for, 0 when the loop has no annotation.
int64_t StagesOf(const ForNode* op, const PipelineError& fail) {
  if (op->annotations.count(kPipelineWarpSplit)) {
    fail(std::string(kPipelineWarpSplit) +
         ": a producer/consumer warp split is not supported yet (only the cp.async form, in "
         "which every thread both copies and computes)");
  }
  auto it = op->annotations.find(kPipelineStages);
  if (it == op->annotations.end()) return 0;
  auto v = (*it).second.try_cast<int64_t>();
  if (!v || *v < 1) fail(std::string(kPipelineStages) + " must be an integer >= 1");
  if (op->kind != ForKind::kSerial) fail("only a serial loop can be pipelined");
  return *v;
}

LoopParts SplitBody(const ForNode* op, const PipelineError& fail) {
  LoopParts parts;
  Stmt s = op->body;
  while (true) {
    if (const auto* a = s.as<AllocateNode>()) {
      parts.wrappers.push_back(s);
      s = a->body;
    } else if (const auto* d = s.as<DeclBufferNode>()) {
      parts.wrappers.push_back(s);
      s = d->body;
    } else {
      break;
    }
  }
  Array<Stmt> seq = s.as<SeqStmtNode>() ? s.as<SeqStmtNode>()->seq : Array<Stmt>{s};
  size_t i = 0;
  for (; i < seq.size(); ++i) {
    if (IsBlockBarrier(seq[i])) continue;
    if (!IsProducerStmt(seq[i])) break;
    parts.producer.push_back(seq[i]);
  }
  size_t end = seq.size();
  while (end > i && IsBlockBarrier(seq[end - 1])) --end;
  for (; i < end; ++i) parts.consumer.push_back(seq[i]);
  if (parts.producer.empty()) {
    fail("the body does not start with copies into shared memory (the producer part)");
  }
  std::unordered_set<const VarNode*> seen;
  for (const Stmt& p : parts.producer) {
    std::function<void(const Stmt&)> collect = [&](const Stmt& st) {
      if (const auto* store = st.as<BufferStoreNode>()) {
        if (seen.insert(store->buffer->data.get()).second) {
          parts.staged.push_back(store->buffer->data.get());
        }
      } else if (const auto* seq2 = st.as<SeqStmtNode>()) {
        for (const Stmt& c : seq2->seq) collect(c);
      } else if (const auto* f = st.as<ForNode>()) {
        collect(f->body);
      } else if (const auto* ite = st.as<IfThenElseNode>()) {
        collect(ite->then_case);
        if (ite->else_case) collect(*ite->else_case);
      }
    };
    collect(p);
  }
  // What the producer reads must not change in the consumer: the copies move ahead of it.
  std::unordered_set<const VarNode*> read;
  for (const Stmt& p : parts.producer) {
    PostOrderVisit(p, [&](const ObjectRef& n) {
      if (const auto* load = n.as<BufferLoadNode>()) read.insert(load->buffer->data.get());
    });
  }
  for (const Stmt& c : parts.consumer) {
    PostOrderVisit(c, [&](const ObjectRef& n) {
      const auto* store = n.as<BufferStoreNode>();
      if (store && read.count(store->buffer->data.get())) {
        fail("the consumer part writes " + std::string(store->buffer->name) +
             ", which the producer part reads; the copies would run ahead of that write");
      }
    });
  }
  for (const Stmt& c : parts.consumer) {
    class StoreFinder : public StmtExprVisitor {
     public:
      explicit StoreFinder(const std::unordered_set<const VarNode*>& s) : s_(s) {}
      using StmtExprVisitor::VisitStmt_;
      void VisitStmt_(const BufferStoreNode* op) override {
        if (s_.count(op->buffer->data.get())) name = op->buffer->name;
        StmtExprVisitor::VisitStmt_(op);
      }
      std::string name;

     private:
      const std::unordered_set<const VarNode*>& s_;
    } finder(seen);
    finder.VisitStmt(c);
    if (!finder.name.empty()) {
      fail("the consumer part writes " + finder.name +
           ", which the producer part fills; a staged buffer must be written by copies only");
    }
  }
  return parts;
}

// Where a staged buffer's stages live.
struct Staging {
  Buffer buffer;  // the flat buffer of S * stride elements
  int64_t stages = 0;
  PrimExpr stride;
};

// Stage-indexes every access of a staged buffer for iteration `iter` (stage (iter - min) % S),
// maps variables per `vmap`, and, with `fresh`, binds every loop and let variable inside anew
// (copies placed side by side must not bind one variable twice).
class StageRewriter : public StmtExprMutator {
 public:
  StageRewriter(const std::unordered_map<const VarNode*, Staging>& staging, PrimExpr stage,
                std::unordered_map<const VarNode*, PrimExpr> vmap, bool fresh)
      : staging_(staging), stage_(std::move(stage)), vmap_(std::move(vmap)), fresh_(fresh) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef<PrimExpr>(op) : it->second;
  }
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr e = StmtExprMutator::VisitExpr_(op);
    const auto* l = e.as<BufferLoadNode>();
    auto it = staging_.find(l->buffer->data.get());
    if (it == staging_.end()) return e;
    return BufferLoad(it->second.buffer, {Offset(l->indices, it->second)});
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    const auto* st = s.as<BufferStoreNode>();
    auto it = staging_.find(st->buffer->data.get());
    if (it == staging_.end()) return s;
    return WithSpan(BufferStore(it->second.buffer, st->value, {Offset(st->indices, it->second)}),
                    op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    if (!fresh_) return StmtExprMutator::VisitStmt_(op);
    PrimExpr mn = VisitExpr(op->min), extent = VisitExpr(op->extent);
    Var v = Fresh(op->loop_var);
    return WithSpan(
        For(v, mn, extent, op->kind, VisitStmt(op->body), op->thread_tag, op->annotations),
        op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    if (!fresh_) return StmtExprMutator::VisitStmt_(op);
    PrimExpr value = VisitExpr(op->value);
    Var v = Fresh(op->var);
    return WithSpan(LetStmt(v, value, VisitStmt(op->body)), op->span);
  }
  PrimExpr VisitExpr_(const LetNode* op) override {
    if (!fresh_) return StmtExprMutator::VisitExpr_(op);
    PrimExpr value = VisitExpr(op->value);
    Var v = Fresh(op->var);
    return Let(v, value, VisitExpr(op->body));
  }

 private:
  Var Fresh(const Var& v) {
    Var n(make_object<VarNode>(*v.get()));
    vmap_[v.get()] = n;
    return n;
  }
  PrimExpr Offset(const Array<PrimExpr>& indices, const Staging& s) {
    TVM_FFI_ICHECK_EQ(indices.size(), 1) << "SoftwarePipeline runs after FlattenBuffer";
    const PrimExpr& i = indices[0];
    PrimExpr base =
        mul(cast(i.dtype().element_of(), stage_), cast(i.dtype().element_of(), s.stride));
    if (const auto* r = i.as<RampNode>()) return Ramp(add(base, r->base), r->stride, r->lanes);
    return add(base, i);
  }

  const std::unordered_map<const VarNode*, Staging>& staging_;
  PrimExpr stage_;
  std::unordered_map<const VarNode*, PrimExpr> vmap_;
  bool fresh_;
};

// Turns the copies of a producer statement into cp.async where it can (see the header), with the
// analyzer knowing the ranges of the enclosing loops and threads.
class AsyncCopier : public StmtExprMutator {
 public:
  AsyncCopier(arith::Analyzer* analyzer, const std::unordered_map<const VarNode*, Staging>& staging)
      : analyzer_(analyzer), staging_(staging) {}
  using StmtExprMutator::VisitStmt_;
  int64_t copies = 0;

  Stmt VisitStmt_(const ForNode* op) override {
    analyzer_->Bind(op->loop_var, Range(op->min, op->extent), true);
    if (op->kind == ForKind::kVectorized) {
      if (auto s = VectorCopy(op)) return *s;
      // An `if` the lanes share goes outside the loop, then each branch is tried again.
      if (const auto* ite = op->body.as<IfThenElseNode>()) {
        if (!Uses(ite->condition, op->loop_var.get())) {
          Optional<Stmt> els;
          if (ite->else_case) els = VisitStmt(LoopOf(op, *ite->else_case, true));
          return IfThenElse(ite->condition, VisitStmt(LoopOf(op, ite->then_case, false)), els);
        }
      }
      if (const auto* st = op->body.as<BufferStoreNode>()) {
        if (auto g = GuardedLoad(st->value); g && !Uses(g->first, op->loop_var.get())) {
          Stmt copy = BufferStore(st->buffer, g->second, st->indices);
          Stmt zero = BufferStore(st->buffer, MakeZero(st->buffer->dtype), st->indices);
          return IfThenElse(g->first, VisitStmt(LoopOf(op, copy, false)), LoopOf(op, zero, true));
        }
      }
      // Lanes of 4, 8 or 16 bytes can still go one by one (an unrolled loop).
      int64_t e = ElementBytes(op->body);
      if (e != 4 && e != 8 && e != 16) return GetRef<Stmt>(op);
      Stmt lanes =
          For(op->loop_var, op->min, op->extent, ForKind::kUnrolled, op->body, "", op->annotations);
      return VisitStmt(lanes);
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  // `if c: copy else: zeros into the same elements` (the SIMT lowering's guarded vector) whose
  // copy becomes cp.async: one cp.async with src-size 0 where c fails, so the zeros land with the
  // group and the copy needs no branch.
  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Stmt then = VisitStmt(op->then_case);
    if (!op->else_case) return IfThenElse(op->condition, then);
    Stmt els = VisitStmt(*op->else_case);
    if (ZeroesOfCopy(op->then_case, *op->else_case)) {
      if (auto z = ZeroFilled(then, op->condition, els)) return *z;
    }
    return IfThenElse(op->condition, then, els);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    if (auto g = GuardedLoad(op->value)) {
      Stmt copy = BufferStore(op->buffer, g->second, op->indices);
      return IfThenElse(g->first, VisitStmt(copy),
                        BufferStore(op->buffer, MakeZero(op->buffer->dtype), op->indices));
    }
    const auto* load = op->value.as<BufferLoadNode>();
    if (!Copyable(op, load) || op->indices[0].dtype().lanes() != 1) return GetRef<Stmt>(op);
    int64_t e = op->buffer->dtype.bytes();
    if (e != 4 && e != 8 && e != 16) return GetRef<Stmt>(op);
    ++copies;
    return CpAsync(op->buffer, op->indices[0], load->buffer, load->indices[0], e);
  }

 private:
  // The loop `op` around `body`; with `fresh`, over a new variable (the two branches of a split
  // loop must not bind one variable twice).
  static Stmt LoopOf(const ForNode* op, const Stmt& body, bool fresh) {
    if (!fresh) return For(op->loop_var, op->min, op->extent, op->kind, body, "", op->annotations);
    Var v(make_object<VarNode>(*op->loop_var.get()));
    Stmt b = StageRewriter({}, PrimExpr(), {{op->loop_var.get(), v}}, false).VisitStmt(body);
    return For(v, op->min, op->extent, op->kind, b, "", op->annotations);
  }
  // The element size of the staged buffer a copy-loop body stores into, 0 for anything else.
  int64_t ElementBytes(const Stmt& body) const {
    const Stmt* s = &body;
    if (const auto* ite = body.as<IfThenElseNode>()) s = &ite->then_case;
    const auto* st = s->as<BufferStoreNode>();
    if (!st || !staging_.count(st->buffer->data.get())) return 0;
    return st->buffer->dtype.bytes();
  }
  static bool Uses(const PrimExpr& e, const VarNode* v) {
    bool found = false;
    PostOrderVisit(e, [&](const ObjectRef& n) { found = found || n.get() == v; });
    return found;
  }
  static PrimExpr MakeZero(DataType t) {
    return t.is_floating() ? MakeConst(t, 0.0) : MakeConst(t, int64_t{0});
  }
  // (c, G[i]) for `T.if_then_else(c, G[i], 0)`.
  static std::optional<std::pair<PrimExpr, PrimExpr>> GuardedLoad(const PrimExpr& v) {
    const auto* call = v.as<CallNode>();
    if (!call || !call->op.same_as(builtin::if_then_else()) || call->args.size() != 3) {
      return std::nullopt;
    }
    if (!call->args[1].as<BufferLoadNode>() || !IsZero(call->args[2])) return std::nullopt;
    return std::make_pair(call->args[0], call->args[1]);
  }
  // Whether `zeros` stores zero into exactly the elements copy `copy` writes: one store each,
  // alone or as the body of loops of one range (any kind), at equal indices.
  bool ZeroesOfCopy(const Stmt& copy, const Stmt& zeros) const {
    const Stmt *a = &copy, *b = &zeros;
    VarMap vmap;
    while (const auto* la = a->as<ForNode>()) {
      const auto* lb = b->as<ForNode>();
      if (!lb || !analyzer_->CanProveEqual(la->min, lb->min) ||
          !analyzer_->CanProveEqual(la->extent, lb->extent)) {
        return false;
      }
      vmap[lb->loop_var.get()] = la->loop_var;
      a = &la->body;
      b = &lb->body;
    }
    const auto* sa = a->as<BufferStoreNode>();
    const auto* sb = b->as<BufferStoreNode>();
    if (!sa || !sb || b->as<ForNode>() || !sa->value.as<BufferLoadNode>() || !IsZero(sb->value) ||
        !sa->buffer->data.same_as(sb->buffer->data) || sa->indices.size() != sb->indices.size()) {
      return false;
    }
    for (size_t i = 0; i < sa->indices.size(); ++i) {
      if (!analyzer_->CanProveEqual(sa->indices[i], Substitute(sb->indices[i], vmap))) return false;
    }
    return true;
  }
  // The cp.async statements of `async` (what the copier made of a copy) each taking `in_bounds`
  // as its src-size predicate; under a run-time alignment test, its else branch (the plain copy)
  // keeps `if in_bounds: copy else: zeros`. None when `async` is anything else.
  static std::optional<Stmt> ZeroFilled(const Stmt& async, const PrimExpr& in_bounds,
                                        const Stmt& zeros) {
    if (const auto* ite = async.as<IfThenElseNode>()) {
      if (!ite->else_case) return std::nullopt;
      auto fast = ZeroFilled(ite->then_case, in_bounds, zeros);
      if (!fast) return std::nullopt;
      return IfThenElse(ite->condition, *fast, IfThenElse(in_bounds, *ite->else_case, zeros));
    }
    std::vector<Stmt> parts;
    if (const auto* seq = async.as<SeqStmtNode>()) {
      parts.assign(seq->seq.begin(), seq->seq.end());
    } else {
      parts.push_back(async);
    }
    for (Stmt& part : parts) {
      const auto* ev = part.as<EvaluateNode>();
      const auto* call = ev ? ev->value.as<CallNode>() : nullptr;
      if (!call || !call->op.same_as(Op::Get("ptx_cp_async")) || call->args.size() != 3) {
        return std::nullopt;
      }
      part = Evaluate(
          Call(call->dtype, call->op, {call->args[0], call->args[1], call->args[2], in_bounds}));
    }
    return SeqStmt::Flatten(Array<Stmt>(parts.begin(), parts.end()));
  }
  bool Copyable(const BufferStoreNode* st, const BufferLoadNode* load) const {
    return load && staging_.count(st->buffer->data.get()) && !IsSharedBuffer(load->buffer) &&
           load->buffer->dtype == st->buffer->dtype && st->indices.size() == 1 &&
           load->indices.size() == 1;
  }
  // `index` without its terms that are provably multiples of `elems`: the address of the rest is
  // aligned exactly when the whole one is, and it no longer moves with the loop (ko * 32), so
  // the compiler tests it once.
  PrimExpr Unaligned(const PrimExpr& index, int64_t elems) {
    PrimExpr rest =
        PartitionTerms(index, [&](const PrimExpr& t) { return Aligned(t, elems); }).second;
    return rest.defined() ? rest : MakeConst(index.dtype(), int64_t{0});
  }
  bool Aligned(const PrimExpr& index, int64_t elems) {
    if (elems == 1) return true;
    DataType t = index.dtype();
    return analyzer_->CanProve(eq(floormod(index, MakeConst(t, elems)), MakeConst(t, int64_t{0})));
  }
  Stmt CpAsync(const Buffer& dst, const PrimExpr& di, const Buffer& src, const PrimExpr& si,
               int64_t bytes) {
    return Evaluate(
        Call(DataType::Handle(), Op::Get("ptx_cp_async"),
             {AddressOf(dst, di), AddressOf(src, si), MakeConst(DataType::Int(32), bytes)}));
  }
  // `for v in T.vectorized(L): S[a + v] = G[b + v]` as L * e / c copies of c bytes, c the widest
  // of 16, 8, 4 that divides the run and to which both ends are provably aligned.
  std::optional<Stmt> VectorCopy(const ForNode* op) {
    const auto* st = op->body.as<BufferStoreNode>();
    const auto* load = st ? st->value.as<BufferLoadNode>() : nullptr;
    auto lanes = AsConstInt(op->extent);
    if (!st || !Copyable(st, load) || !lanes || st->indices[0].dtype().lanes() != 1) {
      return std::nullopt;
    }
    const Var& v = op->loop_var;
    auto at = [&](const PrimExpr& e, const PrimExpr& value) {
      return StageRewriter({}, PrimExpr(), {{v.get(), value}}, false).VisitExpr(e);
    };
    PrimExpr d0 = analyzer_->Simplify(at(st->indices[0], op->min));
    PrimExpr s0 = analyzer_->Simplify(at(load->indices[0], op->min));
    PrimExpr off = sub(v, op->min);
    if (!analyzer_->CanProveEqual(st->indices[0], add(d0, off)) ||
        !analyzer_->CanProveEqual(load->indices[0], add(s0, off))) {
      return std::nullopt;
    }
    int64_t e = st->buffer->dtype.bytes(), total = *lanes * e;
    for (int64_t c : {16, 8, 4}) {
      if (c < e || total % c != 0) continue;
      if (!Aligned(d0, c / e)) continue;
      // A source index not provably aligned (a symbolic row length) is tested at run time, per
      // thread: the whole address, not just the base.
      bool index_aligned = Aligned(s0, c / e);
      if (!index_aligned && c != 16) continue;
      std::vector<Stmt> out;
      for (int64_t o = 0; o < total; o += c) {
        PrimExpr k = MakeConst(d0.dtype(), o / e);
        out.push_back(CpAsync(st->buffer, analyzer_->Simplify(add(d0, k)), load->buffer,
                              analyzer_->Simplify(add(s0, cast(s0.dtype(), k))), c));
        ++copies;
      }
      Stmt async = SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end()));
      if (c == e) return async;
      // The host wrapper holds a caller's buffer to element alignment only (as the CUDA
      // generator's wide loads, test the base: the same for every thread, so no divergence; or
      // the whole address, where the index is not provably aligned).
      DataType u64 = DataType::UInt(64);
      PrimExpr base = Call(u64, builtin::reinterpret(),
                           {index_aligned ? PrimExpr(load->buffer->data)
                                          : AddressOf(load->buffer, Unaligned(s0, c / e))});
      PrimExpr aligned = eq(floormod(base, MakeConst(u64, c)), MakeConst(u64, int64_t{0}));
      return IfThenElse(aligned, async, GetRef<Stmt>(op));
    }
    return std::nullopt;
  }

  arith::Analyzer* analyzer_;
  const std::unordered_map<const VarNode*, Staging>& staging_;
};

// The buffers annotated loops stage, with their stage count: found before rewriting, since an
// allocation outside the loop is met before the loop.
class StagedBuffers : public StmtExprVisitor {
 public:
  explicit StagedBuffers(std::string function) : function_(std::move(function)) {}
  using StmtExprVisitor::VisitStmt_;
  std::unordered_map<const VarNode*, int64_t> stages;
  // The buffer each data variable is declared as (its name and fields carry over to the stages).
  std::unordered_map<const VarNode*, Buffer> declared;

  void VisitStmt_(const DeclBufferNode* op) override {
    declared.emplace(op->buffer->data.get(), op->buffer);
    StmtExprVisitor::VisitStmt_(op);
  }

  void VisitStmt_(const ForNode* op) override {
    PipelineError fail(function_, op);
    int64_t s = StagesOf(op, fail);
    if (s >= 2) {
      LoopParts parts = SplitBody(op, fail);
      for (const VarNode* v : parts.staged) {
        if (stages.count(v)) fail("buffer " + std::string(v->name_hint) + " is staged twice");
        stages[v] = s;
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  std::string function_;
};

class Pipeliner : public StmtExprMutator {
 public:
  Pipeliner(std::string function, bool async, const StagedBuffers& staged)
      : function_(std::move(function)), async_(async), staged_(staged) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "thread_extent") return StmtExprMutator::VisitStmt_(op);
    auto v = op->node.as<Var>();
    bool thread = false;
    if (v) {
      auto tag = ThreadTagOf(*v);
      thread = tag && tag->rfind("threadIdx", 0) == 0;
      analyzer_.Bind(*v, Range(MakeConst(v->dtype(), int64_t{0}), op->value), true);
    }
    gpu_ += thread;
    Stmt out = StmtExprMutator::VisitStmt_(op);
    gpu_ -= thread;
    return out;
  }

  // A staged buffer allocated outside its loop: S stages in place.
  Stmt VisitStmt_(const AllocateNode* op) override {
    if (!staged_.stages.count(op->buffer_var.get())) return StmtExprMutator::VisitStmt_(op);
    Staging& s = Stage(op);
    Stmt body = VisitStmt(op->body);
    return WithSpan(
        Allocate(op->buffer_var, op->dtype, {mul(s.stride, MakeConst(s.stride.dtype(), s.stages))},
                 op->condition, body, StagedAnnotations(op, s)),
        op->span);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    auto it = staging_.find(op->buffer->data.get());
    if (it == staging_.end()) return StmtExprMutator::VisitStmt_(op);
    return WithSpan(DeclBuffer(it->second.buffer, VisitStmt(op->body)), op->span);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    PipelineError fail(function_, op);
    int64_t stages = StagesOf(op, fail);
    if (stages == 0) {
      analyzer_.Bind(op->loop_var, Range(op->min, op->extent), true);
      return StmtExprMutator::VisitStmt_(op);
    }
    Map<String, Any> annotations = op->annotations;
    annotations.erase(kPipelineStages);
    annotations.erase(kPipelineOptional);
    if (stages == 1) {
      analyzer_.Bind(op->loop_var, Range(op->min, op->extent), true);
      Stmt body = VisitStmt(op->body);
      return WithSpan(
          For(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag, annotations),
          op->span);
    }
    return Pipeline(op, stages, annotations, fail);
  }

 private:
  static Map<String, Any> StagedAnnotations(const AllocateNode* op, const Staging& s) {
    Map<String, Any> a = op->annotations;
    if (auto c = AsConstInt(s.stride)) {
      a.Set(kPipelineStageElems, *c);
    } else {
      a.Set(kPipelineStageElems, s.stride);
    }
    return a;
  }

  // The staging of an allocation: its extent rounded up to 16 bytes (to the swizzle atom when it
  // has one), S of them.
  Staging& Stage(const AllocateNode* op) {
    auto it = staging_.find(op->buffer_var.get());
    if (it != staging_.end()) return it->second;
    Staging s;
    s.stages = staged_.stages.at(op->buffer_var.get());
    PrimExpr extent = op->extents[0];
    for (size_t i = 1; i < op->extents.size(); ++i) extent = mul(extent, op->extents[i]);
    int64_t e = op->dtype.bytes() * op->dtype.lanes();
    int64_t align = std::max<int64_t>(16, 8 * SwizzleBytes(op));
    s.stride = extent;
    if (auto c = AsConstInt(extent); c && align % e == 0) {
      int64_t q = align / e;
      s.stride = MakeConst(extent.dtype(), (*c + q - 1) / q * q);
    }
    std::string name = op->buffer_var->name_hint, scope = op->buffer_var->storage_scope;
    int64_t alignment = kDefaultBufferAlignment, offset_factor = 1;
    auto d = staged_.declared.find(op->buffer_var.get());
    if (d != staged_.declared.end()) {
      name = d->second->name;
      scope = d->second->scope;
      alignment = d->second->data_alignment;
      offset_factor = d->second->offset_factor;
    }
    s.buffer = Buffer(name, op->buffer_var, op->dtype,
                      {mul(s.stride, MakeConst(s.stride.dtype(), s.stages))}, {},
                      MakeConst(extent.dtype(), int64_t{0}), scope.empty() ? "shared" : scope,
                      alignment, offset_factor);
    return staging_.emplace(op->buffer_var.get(), s).first->second;
  }

  Stmt Pipeline(const ForNode* op, int64_t S, Map<String, Any> annotations,
                const PipelineError& fail) {
    LoopParts parts = SplitBody(op, fail);
    // Staged allocations inside the body move out of it; the others stay around the new body.
    std::vector<Stmt> hoisted, kept;
    for (const Stmt& w : parts.wrappers) {
      const VarNode* v = nullptr;
      if (const auto* a = w.as<AllocateNode>()) v = a->buffer_var.get();
      if (const auto* d = w.as<DeclBufferNode>()) v = d->buffer->data.get();
      bool staged = std::find(parts.staged.begin(), parts.staged.end(), v) != parts.staged.end();
      (staged ? hoisted : kept).push_back(w);
      if (staged && w.as<AllocateNode>()) Stage(w.as<AllocateNode>());
    }
    for (const VarNode* v : parts.staged) {
      if (!staging_.count(v)) {
        fail("buffer " + std::string(v->name_hint) +
             " is written by the producer part but not allocated in the function");
      }
      CheckOnlyUsedIn(v, op, fail);
    }
    std::unordered_map<const VarNode*, Staging> mine;
    for (const VarNode* v : parts.staged) mine.emplace(v, staging_.at(v));

    DataType t = op->loop_var.dtype();
    auto c = [&](int64_t x) { return MakeConst(t, x); };
    const Var& k = op->loop_var;
    analyzer_.Bind(k, Range(op->min, op->extent), true);
    bool gpu = gpu_ > 0;
    bool async = async_ && gpu;
    int64_t copies = 0;

    // The producer of iteration `iter`, its copies made asynchronous where they can be.
    auto producer = [&](const PrimExpr& iter) {
      std::vector<Stmt> out;
      PrimExpr stage = floormod(sub(iter, op->min), c(S));
      for (const Stmt& p : parts.producer) {
        Stmt s = StageRewriter(mine, stage, {{k.get(), iter}}, true).VisitStmt(p);
        if (async) {
          AsyncCopier copier(&analyzer_, mine);
          s = copier.VisitStmt(s);
          copies += copier.copies;
        }
        out.push_back(s);
      }
      return SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end()));
    };

    std::vector<Stmt> prologue;
    for (int64_t i = 0; i + 1 < S; ++i) {
      PrimExpr guard = analyzer_.Simplify(lt(c(i), op->extent));
      Stmt p = producer(add(op->min, c(i)));
      if (!IsConstValue(guard, 1)) p = IfThenElse(guard, p);
      if (!IsConstValue(guard, 0)) prologue.push_back(p);
    }

    std::vector<Stmt> body;
    Stmt next = producer(add(k, c(S - 1)));
    PrimExpr guard = analyzer_.Simplify(lt(add(sub(k, op->min), c(S - 1)), op->extent));
    if (!IsConstValue(guard, 1)) next = IfThenElse(guard, next);
    bool waits = async && copies > 0;
    if (waits && S - 2 > 7) {
      fail("at most 9 stages with cp.async: cp.async.wait_group takes 0..7 groups, and " +
           std::to_string(S) + " stages need wait_group(" + std::to_string(S - 2) + ")");
    }
    if (waits) body.push_back(WaitGroup(S - 2));
    if (gpu) body.push_back(Barrier());
    if (!IsConstValue(guard, 0)) body.push_back(next);
    if (waits) body.push_back(CommitGroup());
    for (const Stmt& s : parts.consumer) {
      body.push_back(StageRewriter(mine, floormod(sub(k, op->min), c(S)), {}, false).VisitStmt(s));
    }
    Stmt loop_body = SeqStmt::Flatten(Array<Stmt>(body.begin(), body.end()));
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) loop_body = WithBody(*it, loop_body);
    annotations.Set(kPipelinedLoop, S);
    Stmt loop =
        WithSpan(For(k, op->min, op->extent, op->kind, loop_body, "", annotations), op->span);

    std::vector<Stmt> out;
    for (size_t i = 0; i < prologue.size(); ++i) {
      out.push_back(prologue[i]);
      if (waits) out.push_back(CommitGroup());
    }
    // Groups must be counted alike whatever n is: a prologue tile that is provably absent still
    // commits its (empty) group.
    if (waits) {
      for (size_t i = prologue.size(); i + 1 < static_cast<size_t>(S); ++i) {
        out.push_back(CommitGroup());
      }
    }
    out.push_back(loop);
    if (gpu) out.push_back(Barrier());
    Stmt result = SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end()));
    for (auto it = hoisted.rbegin(); it != hoisted.rend(); ++it) {
      if (const auto* a = it->as<AllocateNode>()) {
        const Staging& s = staging_.at(a->buffer_var.get());
        result = WithSpan(Allocate(a->buffer_var, a->dtype,
                                   {mul(s.stride, MakeConst(s.stride.dtype(), s.stages))},
                                   a->condition, result, StagedAnnotations(a, s)),
                          a->span);
      } else {
        const auto* d = it->as<DeclBufferNode>();
        result = WithSpan(DeclBuffer(staging_.at(d->buffer->data.get()).buffer, result), d->span);
      }
    }
    return result;
  }

  // A staged buffer allocated outside the loop must not be used outside it: its stages would
  // not hold what the code there expects.
  void CheckOnlyUsedIn(const VarNode* v, const ForNode* loop, const PipelineError& fail) {
    auto count = [&](const Stmt& s) {
      int64_t n = 0;
      PostOrderVisit(s, [&](const ObjectRef& o) {
        if (const auto* l = o.as<BufferLoadNode>()) n += l->buffer->data.get() == v;
        if (const auto* st = o.as<BufferStoreNode>()) n += st->buffer->data.get() == v;
      });
      return n;
    };
    if (func_body_.defined() && count(func_body_) != count(GetRef<Stmt>(loop))) {
      fail("buffer " + std::string(v->name_hint) +
           " is staged by the loop but also used outside it; allocate it for the loop alone");
    }
  }

 public:
  Stmt func_body_;

 private:
  std::string function_;
  bool async_;
  const StagedBuffers& staged_;
  std::unordered_map<const VarNode*, Staging> staging_;
  arith::Analyzer analyzer_;
  int gpu_ = 0;
};

bool HasPipelineAnnotation(const PrimFunc& f) {
  class Finder : public StmtExprVisitor {
   public:
    using StmtExprVisitor::VisitStmt_;
    bool found = false;
    void VisitStmt_(const ForNode* op) override {
      found = found || op->annotations.count(kPipelineStages) ||
              op->annotations.count(kPipelineWarpSplit);
      StmtExprVisitor::VisitStmt_(op);
    }
  } finder;
  finder.VisitStmt(f->body);
  return finder.found;
}

}  // namespace

namespace {

PrimFunc PipelineOnce(const PrimFunc& func, bool async_copies) {
  std::string name = func.GetGlobalSymbol().value_or("<unnamed>");
  StagedBuffers staged(name);
  staged.VisitStmt(func->body);
  Pipeliner p(name, async_copies, staged);
  p.func_body_ = func->body;
  return WithBody(func, p.VisitStmt(func->body));
}

// `func` without the stages of its optional loops (kPipelineOptional), and whether it had any.
std::pair<PrimFunc, bool> DropOptionalStages(const PrimFunc& func) {
  class Dropper : public StmtExprMutator {
   public:
    using StmtExprMutator::VisitStmt_;
    bool dropped = false;
    Stmt VisitStmt_(const ForNode* op) override {
      Stmt s = StmtExprMutator::VisitStmt_(op);
      if (!op->annotations.count(kPipelineOptional)) return s;
      const auto* f = s.as<ForNode>();
      Map<String, Any> ann = f->annotations;
      ann.erase(kPipelineStages);
      ann.erase(kPipelineOptional);
      dropped = true;
      return WithSpan(For(f->loop_var, f->min, f->extent, f->kind, f->body, f->thread_tag, ann),
                      f->span);
    }
  } d;
  Stmt body = d.VisitStmt(func->body);
  return {WithBody(func, body), d.dropped};
}

}  // namespace

PrimFunc SoftwarePipeline(const PrimFunc& func, bool async_copies) {
  if (!HasPipelineAnnotation(func)) return func;
  try {
    return PipelineOnce(func, async_copies);
  } catch (const tvm::ffi::Error& e) {
    // Loops that asked for stages only as a hint (T.Pipelined in a tile program) run unstaged
    // when their body is not in the form this pass stages; other refusals stand.
    auto [plain, dropped] = DropOptionalStages(func);
    if (!dropped || e.kind() != "ValueError") throw;
    return HasPipelineAnnotation(plain) ? PipelineOnce(plain, async_copies) : plain;
  }
}

IRModule SoftwarePipeline(const IRModule& mod, bool async_copies) {
  return MapFunctions(mod, [async_copies](const String&, const PrimFunc& f) {
    return SoftwarePipeline(f, async_copies);
  });
}

Pass SoftwarePipelinePass() {
  return CreatePrimFuncPass([](PrimFunc f) { return SoftwarePipeline(f, false); }, 0,
                            "SoftwarePipeline");
}

Pass SoftwarePipelineAsyncPass() {
  return CreatePrimFuncPass([](PrimFunc f) { return SoftwarePipeline(f, true); }, 0,
                            "SoftwarePipelineAsync");
}

}  // namespace transform
}  // namespace tessel
