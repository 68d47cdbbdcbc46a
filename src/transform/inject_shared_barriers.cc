// The InjectSharedBarriers pass (contract in include/tessel/transform/inject_shared_barriers.h).
//
// One bottom-up walk. Each statement is summarised by the shared buffers it touches before its
// first guaranteed barrier (exposed: what it may race with above it), after its last one (pending:
// what may race with what follows), and whether every path through it passes a barrier. A
// sequence places a barrier before a child whose exposed accesses conflict with what is pending.
#include <tessel/arith/analyzer.h>
#include <tessel/arith/iter_map.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/inject_shared_barriers.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/pass.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <map>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

bool IsSharedScope(const std::string& s) { return s == "shared" || s == "shared.dyn"; }

bool IsShared(const Buffer& buf) {
  return IsSharedScope(buf->scope) || IsSharedScope(buf->data->storage_scope);
}

bool IsBarrier(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  if (!ev) return false;
  const auto* call = ev->value.as<CallNode>();
  if (!call) return false;
  if (call->op.same_as(builtin::grid_sync())) return true;
  if (!call->op.same_as(builtin::tvm_storage_sync()) || call->args.size() != 1) return false;
  const auto* scope = call->args[0].as<StringImmNode>();
  return scope && IsSharedScope(scope->value);
}

// Typed like the parser types `T.tvm_storage_sync("shared")` (by its argument), so that the
// barrier prints back as written.
Stmt MakeBarrier() {
  StringImm scope("shared");
  return Evaluate(Call(scope.dtype(), builtin::tvm_storage_sync(), {scope}));
}

// Shared buffers (by data variable) read and written. A write set also remembers, per buffer,
// the threadIdx variable that partitions its addresses between threads when every store to it
// has the index `g + t` with g a multiple of t's extent (null when not known): two such sets
// partitioned by one variable never write one address from two threads.
struct Access {
  std::set<const VarNode*> reads;
  std::map<const VarNode*, const VarNode*> writes;

  void AddWrite(const VarNode* buf, const VarNode* owner) {
    auto it = writes.find(buf);
    if (it == writes.end()) {
      writes.emplace(buf, owner);
    } else if (it->second != owner) {
      it->second = nullptr;
    }
  }
  void Merge(const Access& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    for (const auto& [buf, owner] : o.writes) AddWrite(buf, owner);
  }
  // Whether `later`, run after this without a barrier in between, may race with it.
  bool ConflictsWith(const Access& later) const {
    for (const auto& [buf, owner] : writes) {
      if (later.reads.count(buf)) return true;
      auto it = later.writes.find(buf);
      if (it != later.writes.end() && (owner == nullptr || it->second != owner)) return true;
    }
    for (const VarNode* r : reads) {
      if (later.writes.count(r)) return true;
    }
    return false;
  }
};

struct Summary {
  Access exposed, pending;
  bool barrier = false;
};

struct Result {
  Stmt stmt;
  Summary sum;
};

Access ExprAccess(const PrimExpr& e) {
  Access a;
  if (!e.defined()) return a;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (const auto* load = n.as<BufferLoadNode>()) {
      if (IsShared(load->buffer)) a.reads.insert(load->buffer->data.get());
    }
  });
  return a;
}

bool ContainsBarrier(const Stmt& s) {
  bool found = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (const auto* ev = n.as<EvaluateNode>()) found = found || IsBarrier(GetRef<Stmt>(ev));
  });
  return found;
}

bool ReadsMemory(const PrimExpr& e) {
  bool found = false;
  PostOrderVisit(e, [&](const ObjectRef& n) { found = found || n.as<BufferLoadNode>(); });
  return found;
}

class BarrierInjector {
 public:
  explicit BarrierInjector(std::string function) : function_(std::move(function)) {}

  Result Process(const Stmt& s) {
    if (IsBarrier(s)) return {s, Summary{{}, {}, true}};
    // A kernel that orders its shared accesses itself (a warp-specialized tile kernel): left as
    // it is; its buffers are its own, so nothing outside it can race with them.
    if (const auto* attr = s.as<AttrStmtNode>(); attr && attr->attr_key == kManualSharedSyncAttr) {
      return {s, Summary{}};
    }
    if (const auto* seq = s.as<SeqStmtNode>()) return ProcessSeq(s, seq->seq);
    if (const auto* op = s.as<ForNode>()) return ProcessFor(op);
    if (const auto* op = s.as<WhileNode>()) return ProcessWhile(op);
    if (const auto* op = s.as<IfThenElseNode>()) return ProcessIf(op);
    if (const auto* op = s.as<LetStmtNode>()) {
      if (Divergent(op->value)) divergent_.insert(op->var.get());
      Result body = Process(op->body);
      Stmt out = body.stmt.same_as(op->body) ? s : LetStmt(op->var, op->value, body.stmt);
      return {out, Prefix(ExprAccess(op->value), body.sum)};
    }
    if (const auto* op = s.as<AttrStmtNode>()) {
      if (op->attr_key == "thread_extent") {
        if (auto v = op->node.as<Var>()) {
          auto tag = ThreadTagOf(*v);
          if (tag && tag->rfind("threadIdx", 0) == 0) {
            divergent_.insert(v->get());
            thread_extent_[v->get()] = op->value;
          }
        }
      }
      Result body = Process(op->body);
      if (auto v = op->node.as<Var>()) thread_extent_.erase(v->get());
      Stmt out = body.stmt.same_as(op->body)
                     ? s
                     : WithSpan(AttrStmt(op->node, op->attr_key, op->value, body.stmt), op->span);
      return {out, Prefix(ExprAccess(op->value), body.sum)};
    }
    if (const auto* op = s.as<AllocateNode>()) {
      Result body = Process(op->body);
      Stmt out = body.stmt.same_as(op->body)
                     ? s
                     : WithSpan(Allocate(op->buffer_var, op->dtype, op->extents, op->condition,
                                         body.stmt, op->annotations),
                                op->span);
      return {out, body.sum};
    }
    if (const auto* op = s.as<DeclBufferNode>()) {
      Result body = Process(op->body);
      Stmt out = body.stmt.same_as(op->body) ? s : DeclBuffer(op->buffer, body.stmt);
      return {out, body.sum};
    }
    if (s.as<BlockNode>() || s.as<BlockRealizeNode>()) {
      TVM_FFI_THROW(ValueError) << "InjectSharedBarriers: run LowerBlocks first (function '"
                                << function_ << "' has blocks)";
    }
    // A leaf: a store, an evaluation, an assertion's condition.
    Access a;
    if (const auto* store = s.as<BufferStoreNode>()) {
      a = ExprAccess(store->value);
      for (const PrimExpr& i : store->indices) a.Merge(ExprAccess(i));
      if (IsShared(store->buffer)) a.AddWrite(store->buffer->data.get(), OwnerOf(store));
    } else if (const auto* ev = s.as<EvaluateNode>()) {
      a = ExprAccess(ev->value);
    } else if (const auto* as = s.as<AssertStmtNode>()) {
      a = ExprAccess(as->condition);
      Result body = Process(as->body);
      Stmt out =
          body.stmt.same_as(as->body) ? s : AssertStmt(as->condition, as->message, body.stmt);
      return {out, Prefix(a, body.sum)};
    }
    return {s, Summary{a, a, false}};
  }

 private:
  // `a` evaluated right before a statement summarised by `sum`.
  static Summary Prefix(const Access& a, Summary sum) {
    sum.exposed.Merge(a);
    if (!sum.barrier) sum.pending.Merge(a);
    return sum;
  }

  Result ProcessSeq(const Stmt& orig, const Array<Stmt>& children) {
    std::vector<Stmt> out;
    Summary sum;
    Access pending;
    bool changed = false;
    for (const Stmt& c : children) {
      Result r = Process(c);
      changed = changed || !r.stmt.same_as(c);
      if (pending.ConflictsWith(r.sum.exposed)) {
        out.push_back(MakeBarrier());
        changed = true;
        pending = Access();
        sum.barrier = true;
      }
      if (!sum.barrier) sum.exposed.Merge(r.sum.exposed);
      if (r.sum.barrier) {
        pending = r.sum.pending;
        sum.barrier = true;
      } else {
        pending.Merge(r.sum.pending);
      }
      out.push_back(r.stmt);
    }
    sum.pending = pending;
    Stmt stmt = changed ? SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end())) : orig;
    return {stmt, sum};
  }

  // A loop body that may run again after itself: a barrier at its end when its tail races with
  // its head.
  // `s` followed by a barrier; inside the scope of allocations and buffer declarations that make
  // up `s`, so that the text form (where an allocation's body is everything after it at its
  // level) reads back as the same tree.
  static Stmt AppendBarrier(const Stmt& s) {
    if (const auto* a = s.as<AllocateNode>()) {
      return WithSpan(Allocate(a->buffer_var, a->dtype, a->extents, a->condition,
                               AppendBarrier(a->body), a->annotations),
                      a->span);
    }
    if (const auto* d = s.as<DeclBufferNode>()) {
      return WithSpan(DeclBuffer(d->buffer, AppendBarrier(d->body)), d->span);
    }
    return SeqStmt::Flatten({s, MakeBarrier()});
  }

  Result LoopBody(const Stmt& body, const Access& head = Access()) {
    Result r = Process(body);
    Access next = head;
    next.Merge(r.sum.exposed);
    if (r.sum.pending.ConflictsWith(next)) {
      r.stmt = AppendBarrier(r.stmt);
      r.sum.pending = Access();
      r.sum.barrier = true;
    }
    return r;
  }

  // The summary of a loop running `body` zero or more times (at least once when `runs`).
  static Summary LoopSummary(const Access& header, const Summary& body, bool runs) {
    Summary sum;
    sum.exposed = header;
    sum.exposed.Merge(body.exposed);
    sum.barrier = runs && body.barrier;
    sum.pending = body.pending;
    if (!sum.barrier) sum.pending.Merge(header);
    return sum;
  }

  Result ProcessFor(const ForNode* op) {
    bool divergent = Divergent(op->min) || Divergent(op->extent);
    if (divergent) divergent_.insert(op->loop_var.get());
    // The loop's range lets JointOwnerOf bound the thread-independent part of an index.
    if (!divergent) analyzer_.Bind(op->loop_var, Range(op->min, op->extent), true);
    Result body = LoopBody(op->body);
    if (divergent && ContainsBarrier(body.stmt)) {
      TVM_FFI_THROW(ValueError) << "InjectSharedBarriers: function '" << function_
                                << "' needs a shared-memory barrier inside loop '"
                                << op->loop_var->name_hint
                                << "', whose bounds differ between threads; not every thread "
                                   "would reach it";
    }
    Access header = ExprAccess(op->min);
    header.Merge(ExprAccess(op->extent));
    bool runs = analyzer_.CanProve(GT(op->extent, MakeConst(op->extent.dtype(), 0)));
    Stmt out = GetRef<Stmt>(op);
    if (!body.stmt.same_as(op->body)) {
      out = For(op->loop_var, op->min, op->extent, op->kind, body.stmt, op->thread_tag,
                op->annotations);
    }
    return {out, LoopSummary(header, body.sum, runs)};
  }

  Result ProcessWhile(const WhileNode* op) {
    Access header = ExprAccess(op->condition);
    Result body = LoopBody(op->body, header);
    if (Divergent(op->condition) && ContainsBarrier(body.stmt)) {
      TVM_FFI_THROW(ValueError) << "InjectSharedBarriers: function '" << function_
                                << "' needs a shared-memory barrier inside a while loop whose "
                                   "condition may differ between threads: "
                                << AsText(op->condition);
    }
    Stmt out = body.stmt.same_as(op->body) ? GetRef<Stmt>(op) : While(op->condition, body.stmt);
    return {out, LoopSummary(header, body.sum, false)};
  }

  Result ProcessIf(const IfThenElseNode* op) {
    Result then_r = Process(op->then_case);
    std::optional<Result> else_r;
    if (op->else_case) else_r = Process(*op->else_case);
    bool barrier_inside = ContainsBarrier(then_r.stmt) || (else_r && ContainsBarrier(else_r->stmt));
    if (barrier_inside && Divergent(op->condition)) return SplitIf(op, then_r, else_r);
    Access cond = ExprAccess(op->condition);
    Summary sum;
    sum.exposed = then_r.sum.exposed;
    sum.pending = then_r.sum.pending;
    if (else_r) {
      sum.exposed.Merge(else_r->sum.exposed);
      sum.pending.Merge(else_r->sum.pending);
    }
    sum.barrier = then_r.sum.barrier && else_r && else_r->sum.barrier;
    sum = Prefix(cond, sum);
    bool same =
        then_r.stmt.same_as(op->then_case) && (!else_r || else_r->stmt.same_as(*op->else_case));
    Stmt out = GetRef<Stmt>(op);
    if (!same) {
      out = IfThenElse(op->condition, then_r.stmt,
                       else_r ? Optional<Stmt>(else_r->stmt) : Optional<Stmt>());
    }
    return {out, sum};
  }

  // `if c: A; sync; B` under a thread-dependent c becomes `if c: A` / sync / `if c: B` (and the
  // else branch likewise under `not c`), then is summarised as that sequence.
  Result SplitIf(const IfThenElseNode* op, const Result& then_r,
                 const std::optional<Result>& else_r) {
    if (ReadsMemory(op->condition)) {
      TVM_FFI_THROW(ValueError) << "InjectSharedBarriers: function '" << function_
                                << "' needs a shared-memory barrier under the thread-dependent "
                                   "condition "
                                << AsText(op->condition)
                                << ", which reads memory, so the branch cannot be split around "
                                   "the barrier; compute the condition into a variable first";
    }
    std::vector<Stmt> seq;
    auto split = [&](const Stmt& branch, const PrimExpr& cond) {
      Array<Stmt> parts;
      if (const auto* s = branch.as<SeqStmtNode>()) {
        parts = s->seq;
      } else {
        parts = {branch};
      }
      std::vector<Stmt> piece;
      auto flush = [&] {
        if (!piece.empty()) {
          seq.push_back(
              IfThenElse(cond, SeqStmt::Flatten(Array<Stmt>(piece.begin(), piece.end()))));
        }
        piece.clear();
      };
      for (const Stmt& p : parts) {
        if (IsBarrier(p)) {
          flush();
          seq.push_back(p);
        } else if (ContainsBarrier(p)) {
          TVM_FFI_THROW(ValueError)
              << "InjectSharedBarriers: function '" << function_
              << "' needs a shared-memory barrier nested inside a loop or branch under the "
                 "thread-dependent condition "
              << AsText(op->condition)
              << "; not every thread would reach it. Move the barrier's statements out of the "
                 "condition, or, when the kernel orders these accesses itself (mbarriers, named "
                 "barriers), say so with T.func_attr({\""
              << kManualSharedSyncAttr << "\": True})";
        } else {
          piece.push_back(p);
        }
      }
      flush();
    };
    split(then_r.stmt, op->condition);
    if (else_r) split(else_r->stmt, Not(op->condition));
    Stmt joined = SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
    Result r = Process(joined);
    return r;
  }

  // The threadIdx variable t when the store's index is g + t, g free of thread-dependent
  // variables and provably a multiple of t's extent; else null.
  const VarNode* OwnerOf(const BufferStoreNode* store) {
    if (thread_extent_.empty() || store->indices.size() != 1) return nullptr;
    const PrimExpr& index = store->indices[0];
    if (index.dtype().lanes() != 1) return nullptr;
    if (thread_extent_.size() == 1) {
      for (const auto& [t, extent] : thread_extent_) {
        if (t->dtype != index.dtype() || extent.dtype() != index.dtype()) continue;
        PrimExpr g = analyzer_.Simplify(sub(index, GetRef<Var>(t)));
        if (Divergent(g)) continue;
        if (analyzer_.CanProve(EQ(floormod(g, extent), MakeConst(g.dtype(), 0)))) return t;
      }
    }
    return JointOwnerOf(index);
  }

  // The index g + h with h a function of all threadIdx variables that is s times a one-to-one
  // numbering of the threads in [0, E), and g thread-independent with g mod (s * E) in [0, s)
  // over the enclosing loops: then g + h = q * s * E + r + s * n(thread) with 0 <= r < s, and
  // two threads never write one address through this store (a cooperative copy's
  // `f * 1024 + ty * 64 + tx * 4 + v`). The owner is a token per distinct h, so stores with
  // different thread mappings are not taken as partitioned alike.
  const VarNode* JointOwnerOf(const PrimExpr& index) {
    class Zero : public ExprMutator {
     public:
      explicit Zero(const std::map<const VarNode*, PrimExpr>& t) : t_(t) {}
      using ExprMutator::VisitExpr_;
      PrimExpr VisitExpr_(const VarNode* op) override {
        return t_.count(op) ? MakeConst(op->dtype, 0) : GetRef<PrimExpr>(op);
      }

     private:
      const std::map<const VarNode*, PrimExpr>& t_;
    } zero(thread_extent_);
    PrimExpr g = analyzer_.Simplify(zero.VisitExpr(index));
    if (Divergent(g)) return nullptr;
    PrimExpr h = analyzer_.Simplify(sub(index, g));
    tvm::ffi::Map<Var, Range> dom;
    for (const auto& [t, extent] : thread_extent_) {
      if (extent.dtype() != t->dtype) return nullptr;
      dom.Set(GetRef<Var>(t), Range(MakeConst(t->dtype, 0), extent));
    }
    arith::IterMapResult m =
        arith::DetectIterMap({h}, dom, Bool(true), arith::IterMapLevel::kBijective, &analyzer_);
    if (!m.ok() || m.indices.size() != 1 || m.indices[0]->args.size() != 1) return nullptr;
    auto base = AsConstInt(m.indices[0]->base);
    auto scale = AsConstInt(m.indices[0]->args[0]->scale);
    auto extent = AsConstInt(m.indices[0]->args[0]->extent);
    if (!base || *base != 0 || !scale || *scale <= 0 || !extent) return nullptr;
    PrimExpr span = MakeConst(g.dtype(), *scale * *extent);
    if (!analyzer_.CanProve(LT(floormod(g, span), MakeConst(g.dtype(), *scale)))) return nullptr;
    for (size_t i = 0; i < owners_.size(); ++i) {
      if (tvm::ffi::StructuralEqual::Equal(owners_[i].first, h)) return owners_[i].second.get();
    }
    owners_.emplace_back(h, Var("thread_owner", h.dtype()));
    return owners_.back().second.get();
  }

  bool Divergent(const PrimExpr& e) const {
    bool found = false;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (n.as<BufferLoadNode>()) found = true;
      if (const auto* v = n.as<VarNode>()) found = found || divergent_.count(v);
      if (const auto* call = n.as<CallNode>()) {
        const auto* o = call->op.as<OpNode>();
        found = found || !o || o->effect != CallEffectKind::kPure;
      }
    });
    return found;
  }

  std::string function_;
  std::unordered_set<const VarNode*> divergent_;
  std::map<const VarNode*, PrimExpr> thread_extent_;
  std::vector<std::pair<PrimExpr, Var>> owners_;
  arith::Analyzer analyzer_;
};

bool UsesShared(const PrimFunc& func) {
  bool found = false;
  PostOrderVisit(func->body, [&](const ObjectRef& n) {
    if (const auto* load = n.as<BufferLoadNode>()) found = found || IsShared(load->buffer);
    if (const auto* store = n.as<BufferStoreNode>()) found = found || IsShared(store->buffer);
  });
  return found;
}

PrimFunc Inject(const PrimFunc& func, const std::string& key) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "InjectSharedBarriers: undefined function";
  if (!UsesShared(func)) return func;
  if (auto manual = func->attrs.Get(kManualSharedSyncAttr)) {
    if (auto b = manual->try_cast<bool>(); b && *b) return func;
  }
  std::string name = key.empty() ? "<unnamed>" : key;
  if (auto sym = func.GetGlobalSymbol()) name = *sym;
  BarrierInjector injector(name);
  Result r = injector.Process(func->body);
  if (r.stmt.same_as(func->body)) return func;
  PrimFunc out = func;
  out.CopyOnWrite()->body = r.stmt;
  return out;
}

}  // namespace

PrimFunc InjectSharedBarriers(const PrimFunc& func) { return Inject(func, ""); }

IRModule InjectSharedBarriers(const IRModule& mod) {
  return MapFunctions(mod, [](const String& name, const PrimFunc& f) { return Inject(f, name); });
}

Pass InjectSharedBarriersPass() {
  return CreateModulePass([](IRModule m) { return InjectSharedBarriers(m); }, 0,
                          "InjectSharedBarriers");
}

}  // namespace transform
}  // namespace tessel
