// Kind lookup, and the default traversals of ExprVisitor/Mutator and StmtExprVisitor/Mutator.
// A statement the mutator rebuilds keeps the span of the one it replaces.
#include <tessel/ir/functor.h>

#include <utility>
#include <vector>

namespace tessel {
namespace ir {
namespace {

template <typename Kind>
struct KindVector {
  std::vector<Kind> table;
  void Set(int32_t index, Kind kind) {
    if (index >= static_cast<int32_t>(table.size())) table.resize(index + 1, Kind::kUnknown);
    table[index] = kind;
  }
};

}  // namespace

thread_local int detail::ir_walk_depth __attribute__((tls_model("initial-exec"))) = 0;

void detail::ThrowIRTooDeep() {
  --ir_walk_depth;
  TVM_FFI_THROW(RecursionError) << "IR nested deeper than " << kMaxIRDepth
                                << " levels (tessel's limit for recursive walks, which stop there "
                                   "rather than overflow the stack; see docs/reliability.md)";
}

void detail::NoteErrorAt(const StmtNode* stmt) noexcept {
  if (stmt != nullptr && stmt->span.has_value()) RecordErrorSpan(*stmt->span);
}

const detail::KindTable<ExprKind>& detail::ExprKindTable() {
  static const KindVector<ExprKind> v = [] {
    KindVector<ExprKind> k;
#define TESSEL_X(Name) k.Set(Name##Node::RuntimeTypeIndex(), ExprKind::k##Name);
    TESSEL_FOR_EACH_EXPR_NODE(TESSEL_X)
#undef TESSEL_X
    return k;
  }();
  static const KindTable<ExprKind> t{v.table.data(), static_cast<int32_t>(v.table.size())};
  return t;
}

const detail::KindTable<StmtKind>& detail::StmtKindTable() {
  static const KindVector<StmtKind> v = [] {
    KindVector<StmtKind> k;
#define TESSEL_X(Name) k.Set(Name##Node::RuntimeTypeIndex(), StmtKind::k##Name);
    TESSEL_FOR_EACH_STMT_NODE(TESSEL_X)
#undef TESSEL_X
    return k;
  }();
  static const KindTable<StmtKind> t{v.table.data(), static_cast<int32_t>(v.table.size())};
  return t;
}

// ---- ExprVisitor ----
void ExprVisitor::VisitExpr_(const IntImmNode*) {}
void ExprVisitor::VisitExpr_(const FloatImmNode*) {}
void ExprVisitor::VisitExpr_(const StringImmNode*) {}
void ExprVisitor::VisitExpr_(const VarNode*) {}
void ExprVisitor::VisitExpr_(const SizeVarNode* op) { VisitExpr_(static_cast<const VarNode*>(op)); }
void ExprVisitor::VisitExpr_(const CastNode* op) { VisitExpr(op->value); }
#define TESSEL_X(Name)                                 \
  void ExprVisitor::VisitExpr_(const Name##Node* op) { \
    VisitExpr(op->a);                                  \
    VisitExpr(op->b);                                  \
  }
TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
void ExprVisitor::VisitExpr_(const NotNode* op) { VisitExpr(op->a); }
void ExprVisitor::VisitExpr_(const SelectNode* op) {
  VisitExpr(op->condition);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void ExprVisitor::VisitExpr_(const RampNode* op) {
  VisitExpr(op->base);
  VisitExpr(op->stride);
}
void ExprVisitor::VisitExpr_(const BroadcastNode* op) { VisitExpr(op->value); }
void ExprVisitor::VisitExpr_(const ShuffleNode* op) {
  for (const PrimExpr& v : op->vectors) VisitExpr(v);
  for (const PrimExpr& i : op->indices) VisitExpr(i);
}
void ExprVisitor::VisitExpr_(const LetNode* op) {
  VisitExpr(op->value);
  VisitExpr(op->body);
}
void ExprVisitor::VisitExpr_(const BufferLoadNode* op) {
  VisitBufferUse(op->buffer);
  for (const PrimExpr& i : op->indices) VisitExpr(i);
}
void ExprVisitor::VisitExpr_(const CallNode* op) {
  for (const PrimExpr& a : op->args) VisitExpr(a);
}

// ---- ExprMutator ----
Array<PrimExpr> ExprMutator::VisitArray(const Array<PrimExpr>& arr) {
  // A new array only from the first changed element on: most visits change nothing.
  const size_t n = arr.size();
  for (size_t i = 0; i < n; ++i) {
    PrimExpr v = VisitExpr(arr[i]);
    if (v.same_as(arr[i])) continue;
    Array<PrimExpr> out;
    out.reserve(n);
    for (size_t j = 0; j < i; ++j) out.push_back(arr[j]);
    out.push_back(std::move(v));
    for (size_t j = i + 1; j < n; ++j) out.push_back(VisitExpr(arr[j]));
    return out;
  }
  return arr;
}

PrimExpr ExprMutator::VisitExpr_(const IntImmNode* op) { return GetRef<PrimExpr>(op); }
PrimExpr ExprMutator::VisitExpr_(const FloatImmNode* op) { return GetRef<PrimExpr>(op); }
PrimExpr ExprMutator::VisitExpr_(const StringImmNode* op) { return GetRef<PrimExpr>(op); }
PrimExpr ExprMutator::VisitExpr_(const VarNode* op) { return GetRef<PrimExpr>(op); }
PrimExpr ExprMutator::VisitExpr_(const SizeVarNode* op) {
  return VisitExpr_(static_cast<const VarNode*>(op));
}
PrimExpr ExprMutator::VisitExpr_(const CastNode* op) {
  PrimExpr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return GetRef<PrimExpr>(op);
  return Cast(op->dtype, std::move(v));
}
#define TESSEL_X(Name)                                                     \
  PrimExpr ExprMutator::VisitExpr_(const Name##Node* op) {                 \
    PrimExpr a = VisitExpr(op->a);                                         \
    PrimExpr b = VisitExpr(op->b);                                         \
    if (a.same_as(op->a) && b.same_as(op->b)) return GetRef<PrimExpr>(op); \
    return Name(std::move(a), std::move(b));                               \
  }
TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
PrimExpr ExprMutator::VisitExpr_(const NotNode* op) {
  PrimExpr a = VisitExpr(op->a);
  if (a.same_as(op->a)) return GetRef<PrimExpr>(op);
  return Not(std::move(a));
}
PrimExpr ExprMutator::VisitExpr_(const SelectNode* op) {
  PrimExpr c = VisitExpr(op->condition);
  PrimExpr t = VisitExpr(op->true_value);
  PrimExpr f = VisitExpr(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
    return GetRef<PrimExpr>(op);
  }
  return Select(std::move(c), std::move(t), std::move(f));
}
PrimExpr ExprMutator::VisitExpr_(const RampNode* op) {
  PrimExpr b = VisitExpr(op->base);
  PrimExpr s = VisitExpr(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return GetRef<PrimExpr>(op);
  return Ramp(std::move(b), std::move(s), op->lanes);
}
PrimExpr ExprMutator::VisitExpr_(const BroadcastNode* op) {
  PrimExpr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return GetRef<PrimExpr>(op);
  return Broadcast(std::move(v), op->lanes);
}
PrimExpr ExprMutator::VisitExpr_(const ShuffleNode* op) {
  Array<PrimExpr> v = VisitArray(op->vectors);
  Array<PrimExpr> i = VisitArray(op->indices);
  if (v.same_as(op->vectors) && i.same_as(op->indices)) return GetRef<PrimExpr>(op);
  return Shuffle(v, i);
}
PrimExpr ExprMutator::VisitExpr_(const LetNode* op) {
  PrimExpr v = VisitExpr(op->value);
  PrimExpr b = VisitExpr(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return GetRef<PrimExpr>(op);
  return Let(op->var, std::move(v), std::move(b));
}
PrimExpr ExprMutator::VisitExpr_(const BufferLoadNode* op) {
  Buffer buf = VisitBufferUse(op->buffer);
  Array<PrimExpr> idx = VisitArray(op->indices);
  if (buf.same_as(op->buffer) && idx.same_as(op->indices)) return GetRef<PrimExpr>(op);
  return BufferLoad(buf, idx);
}
PrimExpr ExprMutator::VisitExpr_(const CallNode* op) {
  Array<PrimExpr> args = VisitArray(op->args);
  if (args.same_as(op->args)) return GetRef<PrimExpr>(op);
  return Call(op->dtype, op->op, args, op->annotations);
}

// ---- StmtExprVisitor ----
void StmtExprVisitor::VisitRegion(const BufferRegion& region) {
  for (const Range& r : region->region) {
    VisitExpr(r->min);
    VisitExpr(r->extent);
  }
}
void StmtExprVisitor::VisitStmt_(const LetStmtNode* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const AttrStmtNode* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const AssertStmtNode* op) {
  VisitExpr(op->condition);
  VisitExpr(op->message);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const BufferStoreNode* op) {
  VisitBufferUse(op->buffer);
  VisitExpr(op->value);
  for (const PrimExpr& i : op->indices) VisitExpr(i);
}
void StmtExprVisitor::VisitStmt_(const AllocateNode* op) {
  for (const PrimExpr& e : op->extents) VisitExpr(e);
  VisitExpr(op->condition);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const DeclBufferNode* op) { VisitStmt(op->body); }
void StmtExprVisitor::VisitStmt_(const ForNode* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const WhileNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const IfThenElseNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  if (op->else_case) VisitStmt(*op->else_case);
}
void StmtExprVisitor::VisitStmt_(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) VisitStmt(s);
}
void StmtExprVisitor::VisitStmt_(const EvaluateNode* op) { VisitExpr(op->value); }
void StmtExprVisitor::VisitStmt_(const BlockNode* op) {
  for (const IterVar& iv : op->iter_vars) {
    VisitExpr(iv->dom->min);
    VisitExpr(iv->dom->extent);
  }
  for (const BufferRegion& r : op->reads) VisitRegion(r);
  for (const BufferRegion& r : op->writes) VisitRegion(r);
  for (const MatchBufferRegion& m : op->match_buffers) VisitRegion(m->source);
  if (op->init) VisitStmt(*op->init);
  VisitStmt(op->body);
}
void StmtExprVisitor::VisitStmt_(const BlockRealizeNode* op) {
  for (const PrimExpr& v : op->iter_values) VisitExpr(v);
  VisitExpr(op->predicate);
  VisitStmt(op->block);
}

// ---- StmtExprMutator ----
BufferRegion StmtExprMutator::VisitRegion(const BufferRegion& region) {
  Array<Range> out;
  bool changed = false;
  for (const Range& r : region->region) {
    PrimExpr mn = VisitExpr(r->min);
    PrimExpr ext = VisitExpr(r->extent);
    if (mn.same_as(r->min) && ext.same_as(r->extent)) {
      out.push_back(r);
    } else {
      changed = true;
      out.push_back(Range(mn, ext));
    }
  }
  Buffer buf = VisitBufferUse(region->buffer);
  if (!changed && buf.same_as(region->buffer)) return region;
  return BufferRegion(buf, out);
}
Stmt StmtExprMutator::VisitStmt_(const LetStmtNode* op) {
  PrimExpr v = VisitExpr(op->value);
  Stmt b = VisitStmt(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return GetRef<Stmt>(op);
  return WithSpan(LetStmt(op->var, v, b), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const AttrStmtNode* op) {
  PrimExpr v = VisitExpr(op->value);
  Stmt b = VisitStmt(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return GetRef<Stmt>(op);
  return WithSpan(AttrStmt(op->node, op->attr_key, v, b), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const AssertStmtNode* op) {
  PrimExpr c = VisitExpr(op->condition);
  PrimExpr m = VisitExpr(op->message);
  Stmt b = VisitStmt(op->body);
  if (c.same_as(op->condition) && m.same_as(op->message) && b.same_as(op->body)) {
    return GetRef<Stmt>(op);
  }
  return WithSpan(AssertStmt(c, m, b), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const BufferStoreNode* op) {
  Buffer buf = VisitBufferUse(op->buffer);
  PrimExpr v = VisitExpr(op->value);
  Array<PrimExpr> idx = VisitArray(op->indices);
  if (buf.same_as(op->buffer) && v.same_as(op->value) && idx.same_as(op->indices)) {
    return GetRef<Stmt>(op);
  }
  return WithSpan(BufferStore(buf, v, idx), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const AllocateNode* op) {
  Array<PrimExpr> ext = VisitArray(op->extents);
  PrimExpr c = VisitExpr(op->condition);
  Stmt b = VisitStmt(op->body);
  if (ext.same_as(op->extents) && c.same_as(op->condition) && b.same_as(op->body)) {
    return GetRef<Stmt>(op);
  }
  return WithSpan(Allocate(op->buffer_var, op->dtype, ext, c, b, op->annotations), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const DeclBufferNode* op) {
  Stmt b = VisitStmt(op->body);
  if (b.same_as(op->body)) return GetRef<Stmt>(op);
  return WithSpan(DeclBuffer(op->buffer, b), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const ForNode* op) {
  PrimExpr mn = VisitExpr(op->min);
  PrimExpr ext = VisitExpr(op->extent);
  Stmt b = VisitStmt(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) {
    return GetRef<Stmt>(op);
  }
  return WithSpan(For(op->loop_var, mn, ext, op->kind, b, op->thread_tag, op->annotations),
                  op->span);
}
Stmt StmtExprMutator::VisitStmt_(const WhileNode* op) {
  PrimExpr c = VisitExpr(op->condition);
  Stmt b = VisitStmt(op->body);
  if (c.same_as(op->condition) && b.same_as(op->body)) return GetRef<Stmt>(op);
  return WithSpan(While(c, b), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const IfThenElseNode* op) {
  PrimExpr c = VisitExpr(op->condition);
  Stmt t = VisitStmt(op->then_case);
  Optional<Stmt> e = op->else_case;
  if (op->else_case) e = VisitStmt(*op->else_case);
  bool same_else =
      (!op->else_case && !e) || (op->else_case && e && e.value().same_as(*op->else_case));
  if (c.same_as(op->condition) && t.same_as(op->then_case) && same_else) return GetRef<Stmt>(op);
  return WithSpan(IfThenElse(c, t, e), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const SeqStmtNode* op) {
  Array<Stmt> out;
  bool changed = false;
  for (const Stmt& s : op->seq) {
    Stmt n = VisitStmt(s);
    changed = changed || !n.same_as(s);
    out.push_back(n);
  }
  if (!changed) return GetRef<Stmt>(op);
  return SeqStmt::Flatten(out);
}
Stmt StmtExprMutator::VisitStmt_(const EvaluateNode* op) {
  PrimExpr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return GetRef<Stmt>(op);
  return WithSpan(Evaluate(v), op->span);
}
Stmt StmtExprMutator::VisitStmt_(const BlockNode* op) {
  Array<IterVar> ivs;
  bool changed = false;
  for (const IterVar& iv : op->iter_vars) {
    PrimExpr mn = VisitExpr(iv->dom->min);
    PrimExpr ext = VisitExpr(iv->dom->extent);
    if (mn.same_as(iv->dom->min) && ext.same_as(iv->dom->extent)) {
      ivs.push_back(iv);
    } else {
      changed = true;
      ivs.push_back(IterVar(iv->var, Range(mn, ext), iv->iter_type));
    }
  }
  auto regions = [&](const Array<BufferRegion>& rs) {
    Array<BufferRegion> out;
    for (const BufferRegion& r : rs) {
      BufferRegion n = VisitRegion(r);
      changed = changed || !n.same_as(r);
      out.push_back(n);
    }
    return out;
  };
  Array<BufferRegion> reads = regions(op->reads);
  Array<BufferRegion> writes = regions(op->writes);
  Array<MatchBufferRegion> matches;
  for (const MatchBufferRegion& m : op->match_buffers) {
    BufferRegion src = VisitRegion(m->source);
    if (src.same_as(m->source)) {
      matches.push_back(m);
    } else {
      changed = true;
      matches.push_back(MatchBufferRegion(m->buffer, src));
    }
  }
  Optional<Stmt> init = op->init;
  if (op->init) {
    Stmt n = VisitStmt(*op->init);
    changed = changed || !n.same_as(*op->init);
    init = n;
  }
  Stmt body = VisitStmt(op->body);
  changed = changed || !body.same_as(op->body);
  if (!changed) return GetRef<Stmt>(op);
  return WithSpan(Block(ivs, reads, writes, op->name_hint, body, init, op->alloc_buffers, matches,
                        op->annotations),
                  op->span);
}
Stmt StmtExprMutator::VisitStmt_(const BlockRealizeNode* op) {
  Array<PrimExpr> vals = VisitArray(op->iter_values);
  PrimExpr pred = VisitExpr(op->predicate);
  Stmt block = VisitStmt(op->block);
  if (vals.same_as(op->iter_values) && pred.same_as(op->predicate) && block.same_as(op->block)) {
    return GetRef<Stmt>(op);
  }
  const auto* b = block.as<BlockNode>();
  if (!b) TVM_FFI_THROW(InternalError) << "BlockRealize: block was mutated into a non-block";
  return WithSpan(BlockRealize(vals, pred, GetRef<Block>(b)), op->span);
}

namespace {
class PostOrderVisitor : public StmtExprVisitor {
 public:
  explicit PostOrderVisitor(std::function<void(const ObjectRef&)> f) : f_(std::move(f)) {}
  void VisitExpr(const PrimExpr& e) override {
    ExprVisitor::VisitExpr(e);
    f_(e);
  }
  void VisitStmt(const Stmt& s) override {
    StmtFunctor::VisitStmt(s);
    f_(s);
  }

 private:
  std::function<void(const ObjectRef&)> f_;
};
}  // namespace

void PostOrderVisit(const Stmt& stmt, std::function<void(const ObjectRef&)> f) {
  PostOrderVisitor(std::move(f)).VisitStmt(stmt);
}
void PostOrderVisit(const PrimExpr& expr, std::function<void(const ObjectRef&)> f) {
  PostOrderVisitor(std::move(f)).VisitExpr(expr);
}

}  // namespace ir
}  // namespace tessel
