// The FlattenBuffer pass (contract in include/tessel/transform/flatten_buffer.h).
#include <tessel/arith/analyzer.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/flatten_buffer.h>
#include <tessel/transform/pass.h>

#include <unordered_map>
#include <utility>
#include <vector>

#include "transform/buffer_layout.h"

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

bool IsFlat(const Buffer& buf) { return buf->shape.size() == 1 && IsCompact(buf); }

// Both integers in the wider of their two dtypes, so that they can be a Ramp's base and stride.
void MatchIndexTypes(PrimExpr* a, PrimExpr* b) {
  if (a->dtype() == b->dtype()) return;
  DataType t = a->dtype().bits() >= b->dtype().bits() ? a->dtype() : b->dtype();
  *a = cast(t, *a);
  *b = cast(t, *b);
}

class Flattener : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr;
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt;
  using StmtExprMutator::VisitStmt_;

  // The flat twin of buf (buf itself when already flat); one object per buffer.
  Buffer Flat(const Buffer& buf) {
    if (IsFlat(buf)) return buf;
    auto it = flat_.find(buf.get());
    if (it != flat_.end()) return it->second;
    // Simplified so that a strided layout's extent reads as one expression, not a sum of terms.
    Buffer out(buf->name, buf->data, buf->dtype, {analyzer_.Simplify(FlatExtent(buf))}, {},
               MakeConst(buf->elem_offset.dtype(), 0), buf->scope, buf->data_alignment,
               buf->offset_factor);
    flat_.emplace(buf.get(), out);
    return out;
  }

  // Whether Flat(buf) was needed for buf (a twin exists).
  bool HasTwin(const Buffer& buf) const { return flat_.count(buf.get()) != 0; }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    Array<PrimExpr> idx = VisitArray(op->indices);
    if (IsFlat(op->buffer)) {
      if (idx.same_as(op->indices)) return GetRef<PrimExpr>(op);
      return BufferLoad(op->buffer, idx);
    }
    return BufferLoad(Flat(op->buffer), {FlatIndex(op->buffer, idx)});
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    PrimExpr value = VisitExpr(op->value);
    Array<PrimExpr> idx = VisitArray(op->indices);
    if (IsFlat(op->buffer)) {
      if (value.same_as(op->value) && idx.same_as(op->indices)) return GetRef<Stmt>(op);
      return WithSpan(BufferStore(op->buffer, value, idx), op->span);
    }
    return WithSpan(BufferStore(Flat(op->buffer), value, {FlatIndex(op->buffer, idx)}), op->span);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt body = VisitStmt(op->body);
    PrimExpr cond = VisitExpr(op->condition);
    Array<PrimExpr> extents = VisitArray(op->extents);
    if (extents.size() != 1) {
      PrimExpr n = MakeConst(extents.empty() ? DataType::Int(32) : extents[0].dtype(), 1);
      for (const PrimExpr& e : extents) n = mul(n, e);
      extents = {n};
    }
    if (extents.same_as(op->extents) && cond.same_as(op->condition) && body.same_as(op->body)) {
      return GetRef<Stmt>(op);
    }
    return WithSpan(Allocate(op->buffer_var, op->dtype, extents, cond, body, op->annotations),
                    op->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer buf = Flat(op->buffer);
    Stmt body = VisitStmt(op->body);
    if (buf.same_as(op->buffer) && body.same_as(op->body)) return GetRef<Stmt>(op);
    return WithSpan(DeclBuffer(buf, body), op->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override { NeedsLowering(op->name_hint); }
  Stmt VisitStmt_(const BlockRealizeNode* op) override { NeedsLowering(op->block->name_hint); }

 private:
  [[noreturn]] static void NeedsLowering(const String& name) {
    TVM_FFI_THROW(ValueError) << "FlattenBuffer: run LowerBlocks first: block \"" << name
                              << "\" found";
    TVM_FFI_UNREACHABLE();
  }

  static PrimExpr FlatIndex(const Buffer& buf, const Array<PrimExpr>& idx) {
    std::vector<PrimExpr> strides = StridesOf(buf);
    PrimExpr rest = buf->elem_offset;
    size_t n = idx.size();
    for (size_t k = 0; k + 1 < n; ++k) rest = add(rest, mul(idx[k], strides[k]));
    if (n == 0) return rest;
    const PrimExpr& last = idx[n - 1];
    if (const auto* ramp = last.as<RampNode>()) {
      PrimExpr base = add(rest, mul(ramp->base, strides[n - 1]));
      PrimExpr step = mul(ramp->stride, strides[n - 1]);
      MatchIndexTypes(&base, &step);
      return Ramp(base, step, ramp->lanes);
    }
    return add(rest, mul(last, strides[n - 1]));
  }

  std::unordered_map<const BufferNode*, Buffer> flat_;
  arith::Analyzer analyzer_;
};

bool IsFlatAlready(const PrimFunc& func) {
  bool flat = true;
  PostOrderVisit(func->body, [&](const ObjectRef& n) {
    if (const auto* load = n.as<BufferLoadNode>()) flat = flat && IsFlat(load->buffer);
    if (const auto* store = n.as<BufferStoreNode>()) flat = flat && IsFlat(store->buffer);
    if (const auto* alloc = n.as<AllocateNode>()) flat = flat && alloc->extents.size() == 1;
    if (const auto* decl = n.as<DeclBufferNode>()) flat = flat && IsFlat(decl->buffer);
    if (n.as<BlockNode>() || n.as<BlockRealizeNode>()) flat = false;
  });
  return flat;
}

}  // namespace

PrimFunc FlattenBuffer(const PrimFunc& func) {
  if (!func.defined()) TVM_FFI_THROW(ValueError) << "FlattenBuffer: undefined function";
  if (IsFlatAlready(func)) return func;
  Flattener flattener;
  Stmt body = flattener.VisitStmt(func->body);
  // Declared innermost-last so that the printed order follows the parameters.
  for (size_t i = func->params.size(); i-- > 0;) {
    auto buf = func->buffer_map.Get(func->params[i]);
    if (buf && flattener.HasTwin(*buf)) body = DeclBuffer(flattener.Flat(*buf), body);
  }
  return WithBody(func, body);
}

IRModule FlattenBuffer(const IRModule& mod) {
  return MapFunctions(mod, [](const String&, const PrimFunc& f) { return FlattenBuffer(f); });
}

Pass FlattenBufferPass() {
  return CreatePrimFuncPass([](PrimFunc f) { return FlattenBuffer(f); }, 0, "FlattenBuffer");
}

}  // namespace transform
}  // namespace tessel
