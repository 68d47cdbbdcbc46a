// The VectorizeLoop pass (contract in include/tessel/transform/vectorize_loop.h).
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/vectorize_loop.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// A scalar widened to `lanes` by a Broadcast; a vector as it is.
PrimExpr Widen(const PrimExpr& e, int lanes) {
  if (lanes == 1 || e.dtype().lanes() == lanes) return e;
  return Broadcast(e, lanes);
}

bool IsPure(const CallNode* call) {
  const auto* op = call->op.as<OpNode>();
  return op && op->effect == CallEffectKind::kPure;
}

// Whether e may be evaluated on lanes where the program would not evaluate it: it reads no memory,
// divides by nothing, and calls only pure ops.
bool SafeToSpeculate(const PrimExpr& e) {
  bool ok = true;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (n.as<BufferLoadNode>() || n.as<DivNode>() || n.as<ModNode>() || n.as<FloorDivNode>() ||
        n.as<FloorModNode>()) {
      ok = false;
    }
    if (const auto* call = n.as<CallNode>()) ok = ok && IsPure(call);
  });
  return ok;
}

// Rewrites a loop body for `var` = Ramp(base, 1, lanes). Scalar results are loop-invariant; a
// result with `lanes` lanes depends on the loop variable. On anything it cannot vectorize it sets
// failed_ and the caller discards the result.
class BodyVectorizer : public StmtExprMutator {
 public:
  BodyVectorizer(const Var& var, const PrimExpr& base, int lanes) : lanes_(lanes) {
    map_[var.get()] = Ramp(base, MakeConst(var.dtype(), 1), lanes);
  }

  // The vectorized body, or an undefined Stmt when it cannot be vectorized.
  Stmt Run(const Stmt& body) {
    Stmt out = VisitStmt(body);
    return failed_ ? Stmt() : out;
  }

  using StmtExprMutator::VisitExpr;
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt;
  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override {
    if (failed_) return e;
    // The body already holds vectors (e.g. from an inner vectorized loop): lanes cannot nest.
    if (e.dtype().is_vector()) return Fail(e);
    return StmtExprMutator::VisitExpr(e);
  }

  Stmt VisitStmt(const Stmt& s) override {
    if (failed_) return s;
    return StmtExprMutator::VisitStmt(s);
  }

  PrimExpr VisitExpr_(const VarNode* op) override {
    auto it = map_.find(op);
    return it == map_.end() ? GetRef<PrimExpr>(op) : it->second;
  }

  PrimExpr VisitExpr_(const CastNode* op) override {
    PrimExpr v = VisitExpr(op->value);
    if (v.same_as(op->value)) return GetRef<PrimExpr>(op);
    return Cast(op->dtype.with_lanes(v.dtype().lanes()), v);
  }

#define TESSEL_X(Name)                                                     \
  PrimExpr VisitExpr_(const Name##Node* op) override {                     \
    PrimExpr a = VisitExpr(op->a);                                         \
    PrimExpr b = VisitExpr(op->b);                                         \
    if (a.same_as(op->a) && b.same_as(op->b)) return GetRef<PrimExpr>(op); \
    if (PrimExpr r = RampArith<Name##Node>(a, b); r.defined()) return r;   \
    int lanes = std::max(a.dtype().lanes(), b.dtype().lanes());            \
    return Name(Widen(a, lanes), Widen(b, lanes));                         \
  }
  TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
  TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
  TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X

  PrimExpr VisitExpr_(const SelectNode* op) override {
    PrimExpr c = VisitExpr(op->condition);
    PrimExpr t = VisitExpr(op->true_value);
    PrimExpr f = VisitExpr(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
      return GetRef<PrimExpr>(op);
    }
    int lanes = std::max({c.dtype().lanes(), t.dtype().lanes(), f.dtype().lanes()});
    return Select(Widen(c, lanes), Widen(t, lanes), Widen(f, lanes));
  }

  PrimExpr VisitExpr_(const LetNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var var = Bind(op->var, value);
    PrimExpr body = VisitExpr(op->body);
    return Let(var, value, body);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    Array<PrimExpr> indices = VisitIndices(op->indices);
    if (indices.same_as(op->indices)) return GetRef<PrimExpr>(op);
    return BufferLoad(op->buffer, indices);
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    Array<PrimExpr> args = VisitArray(op->args);
    bool vector = false;
    for (const PrimExpr& a : args) vector = vector || a.dtype().is_vector();
    // if_then_else evaluates only the chosen side, which a vector Select cannot promise: it is
    // vectorized only when evaluating both sides on every lane is harmless. (The C backend has no
    // vector if_then_else either.)
    if (op->op.same_as(builtin::if_then_else()) && vector) {
      if (!SafeToSpeculate(args[1]) || !SafeToSpeculate(args[2])) return Fail(GetRef<PrimExpr>(op));
      return Select(Widen(args[0], lanes_), Widen(args[1], lanes_), Widen(args[2], lanes_));
    }
    // Other calls are kept only when they are invariant: evaluating a call once for all lanes
    // is right only when it is pure (or merely reads state, which the loop does not change under
    // the independence the annotation asserts).
    if (vector) return Fail(GetRef<PrimExpr>(op));
    const auto* opnode = op->op.as<OpNode>();
    if (!opnode ||
        (opnode->effect != CallEffectKind::kPure && opnode->effect != CallEffectKind::kReadState)) {
      return Fail(GetRef<PrimExpr>(op));
    }
    // Arguments may differ only by renamed (scalar) variables.
    if (args.same_as(op->args)) return GetRef<PrimExpr>(op);
    return Call(op->dtype, op->op, args, op->annotations);
  }

  PrimExpr VisitExpr_(const RampNode* op) override { return Fail(GetRef<PrimExpr>(op)); }
  PrimExpr VisitExpr_(const BroadcastNode* op) override { return Fail(GetRef<PrimExpr>(op)); }
  PrimExpr VisitExpr_(const ShuffleNode* op) override { return Fail(GetRef<PrimExpr>(op)); }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Array<PrimExpr> indices = VisitIndices(op->indices);
    PrimExpr value = VisitExpr(op->value);
    if (failed_) return GetRef<Stmt>(op);
    // Every lane would store to one element: a reduction or a race, not a vector store.
    if (indices.empty() || indices.back().dtype().is_scalar()) return Fail(GetRef<Stmt>(op));
    return BufferStore(op->buffer, Widen(value, lanes_), indices);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Var var = Bind(op->var, value);
    Stmt body = VisitStmt(op->body);
    return LetStmt(var, value, body);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    PrimExpr c = VisitExpr(op->condition);
    if (c.dtype().is_vector()) return Fail(GetRef<Stmt>(op));
    Stmt then_case = VisitStmt(op->then_case);
    Optional<Stmt> else_case;
    if (op->else_case) else_case = VisitStmt(*op->else_case);
    return IfThenElse(c, then_case, else_case);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->kind != ForKind::kSerial && op->kind != ForKind::kUnrolled) {
      return Fail(GetRef<Stmt>(op));
    }
    PrimExpr mn = VisitExpr(op->min);
    PrimExpr extent = VisitExpr(op->extent);
    if (mn.dtype().is_vector() || extent.dtype().is_vector()) return Fail(GetRef<Stmt>(op));
    Var var = Bind(op->loop_var, op->loop_var);
    Stmt body = VisitStmt(op->body);
    return For(var, mn, extent, op->kind, body, op->thread_tag, op->annotations);
  }

  Stmt VisitStmt_(const AssertStmtNode* op) override {
    PrimExpr c = VisitExpr(op->condition);
    if (c.dtype().is_vector()) return Fail(GetRef<Stmt>(op));
    Stmt body = VisitStmt(op->body);
    return AssertStmt(c, op->message, body);
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    if (op->value.as<IntImmNode>()) return GetRef<Stmt>(op);
    return Fail(GetRef<Stmt>(op));
  }

  Stmt VisitStmt_(const AllocateNode* op) override { return Fail(GetRef<Stmt>(op)); }
  Stmt VisitStmt_(const DeclBufferNode* op) override { return Fail(GetRef<Stmt>(op)); }
  Stmt VisitStmt_(const WhileNode* op) override { return Fail(GetRef<Stmt>(op)); }
  Stmt VisitStmt_(const AttrStmtNode* op) override { return Fail(GetRef<Stmt>(op)); }
  Stmt VisitStmt_(const BlockNode* op) override { return Fail(GetRef<Stmt>(op)); }
  Stmt VisitStmt_(const BlockRealizeNode* op) override { return Fail(GetRef<Stmt>(op)); }

 private:
  template <typename T>
  T Fail(T node) {
    failed_ = true;
    return node;
  }

  // A fresh variable for v (typed like `value`, which may be a vector), used for the rest of the
  // body: the vectorizer may run twice on one body (chunks and remainder).
  Var Bind(const Var& v, const PrimExpr& value) {
    Var nv;
    if (value.dtype() == v.dtype()) {
      nv = Var(make_object<VarNode>(*v.get()));
    } else {
      nv = Var(v->name_hint, value.dtype());
    }
    map_[v.get()] = nv;
    return nv;
  }

  // Only the last index of an access may be a vector.
  Array<PrimExpr> VisitIndices(const Array<PrimExpr>& indices) {
    Array<PrimExpr> out = VisitArray(indices);
    for (size_t i = 0; i + 1 < out.size(); ++i) {
      if (out[i].dtype().is_vector()) failed_ = true;
    }
    return out;
  }

  // Integer + - * that keep a Ramp a Ramp; undefined when the rule does not apply.
  template <typename Node>
  PrimExpr RampArith(const PrimExpr& a, const PrimExpr& b) {
    if (!a.dtype().element_of().is_int_or_uint()) return PrimExpr();
    const auto* ra = a.as<RampNode>();
    const auto* rb = b.as<RampNode>();
    if (!ra && !rb) return PrimExpr();
    bool sa = a.dtype().is_scalar(), sb = b.dtype().is_scalar();
    if constexpr (std::is_same_v<Node, AddNode>) {
      if (ra && rb) return Ramp(add(ra->base, rb->base), add(ra->stride, rb->stride), lanes_);
      if (ra && sb) return Ramp(add(ra->base, b), ra->stride, lanes_);
      if (rb && sa) return Ramp(add(a, rb->base), rb->stride, lanes_);
    } else if constexpr (std::is_same_v<Node, SubNode>) {
      if (ra && rb) return Ramp(sub(ra->base, rb->base), sub(ra->stride, rb->stride), lanes_);
      if (ra && sb) return Ramp(sub(ra->base, b), ra->stride, lanes_);
      if (rb && sa) return Ramp(sub(a, rb->base), neg(rb->stride), lanes_);
    } else if constexpr (std::is_same_v<Node, MulNode>) {
      if (ra && sb) return Ramp(mul(ra->base, b), mul(ra->stride, b), lanes_);
      if (rb && sa) return Ramp(mul(a, rb->base), mul(a, rb->stride), lanes_);
    }
    return PrimExpr();
  }

  int lanes_;
  bool failed_ = false;
  std::unordered_map<const VarNode*, PrimExpr> map_;
};

For Serial(const ForNode* loop) {
  return For(loop->loop_var, loop->min, loop->extent, ForKind::kSerial, loop->body, "",
             loop->annotations);
}

class LoopVectorizer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* loop = visited.as<ForNode>();
    if (loop->kind != ForKind::kVectorized) return visited;
    const auto* extent = loop->extent.as<IntImmNode>();
    if (!extent || extent->value < 2) return Serial(loop);
    DataType t = loop->loop_var.dtype();
    int64_t left = extent->value, offset = 0;
    Array<Stmt> seq;
    if (left >= 2 * kMaxVectorLanes) {
      int64_t chunks = left / kMaxVectorLanes;
      Var outer(std::string(loop->loop_var->name_hint) + "_chunk", t);
      PrimExpr chunk_base = add(loop->min, mul(outer, MakeConst(t, kMaxVectorLanes)));
      Stmt chunk = BodyVectorizer(loop->loop_var, chunk_base, kMaxVectorLanes).Run(loop->body);
      if (!chunk.defined()) return Serial(loop);
      seq.push_back(For(outer, MakeConst(t, 0), MakeConst(t, chunks), ForKind::kSerial, chunk));
      offset = chunks * kMaxVectorLanes;
      left -= offset;
    }
    // Pieces of power-of-two lanes, largest first (7 = 4 + 2 + 1): C vector types exist only for
    // power-of-two sizes.
    while (left > 0) {
      int64_t lanes = 1;
      while (lanes * 2 <= std::min(left, kMaxVectorLanes)) lanes *= 2;
      PrimExpr base = add(loop->min, MakeConst(t, offset));
      if (lanes == 1) {
        // The last single iteration: the original body, bound nowhere else (the vectorized
        // pieces bind fresh variables).
        seq.push_back(For(loop->loop_var, base, MakeConst(t, 1), ForKind::kSerial, loop->body, "",
                          loop->annotations));
      } else {
        Stmt piece = BodyVectorizer(loop->loop_var, base, static_cast<int>(lanes)).Run(loop->body);
        if (!piece.defined()) {
          // Only the first piece can fail: whatever vectorizes in more lanes vectorizes in fewer.
          TVM_FFI_ICHECK(seq.empty())
              << "VectorizeLoop: a later piece of a vectorizable loop failed";
          return Serial(loop);
        }
        seq.push_back(piece);
      }
      offset += lanes;
      left -= lanes;
    }
    return SeqStmt::Flatten(seq);
  }
};

}  // namespace

Stmt VectorizeLoop(const Stmt& stmt) { return LoopVectorizer().VisitStmt(stmt); }

PrimFunc VectorizeLoop(const PrimFunc& func) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "VectorizeLoop: undefined function";
  Stmt body = VectorizeLoop(func->body);
  return WithBody(func, body);
}

IRModule VectorizeLoop(const IRModule& mod) {
  return MapFunctions(mod, [](const String&, const PrimFunc& f) { return VectorizeLoop(f); });
}

Pass VectorizeLoopPass() {
  return CreatePrimFuncPass([](PrimFunc f) { return VectorizeLoop(f); }, 0, "VectorizeLoop");
}

}  // namespace transform
}  // namespace tessel
