// The CompactBufferAllocation pass (contract in
// include/tessel/transform/compact_buffer_allocation.h).
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/transform/compact_buffer_allocation.h>
#include <tessel/transform/pass.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

struct Access {
  std::vector<const ForNode*> path;  // the loops under the allocation, outermost first
  Array<PrimExpr> indices;
};

// The loads and stores of one buffer below its allocation, with the loops above each.
class AccessCollector : public StmtExprVisitor {
 public:
  explicit AccessCollector(const VarNode* data) : data_(data) {}
  std::vector<Access> accesses;
  bool escaped = false;

  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  void VisitStmt_(const ForNode* op) override {
    path_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    path_.pop_back();
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    if (op->buffer->data.get() == data_) accesses.push_back({path_, op->indices});
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    if (op->buffer->data.get() == data_) accesses.push_back({path_, op->indices});
    StmtExprVisitor::VisitStmt_(op);
  }
  // Any other use (an address taken, a second declaration) keeps the layout as it is: an
  // address given to TMA, wgmma or cp.async depends on the buffer's offset and alignment, which a
  // shifted window would change.
  void VisitExpr_(const VarNode* op) override { escaped = escaped || op == data_; }
  void VisitExpr_(const CallNode* op) override {
    if (op->op.same_as(builtin::address_of()) && op->args.size() == 1) {
      const auto* load = op->args[0].as<BufferLoadNode>();
      escaped = escaped || (load && load->buffer->data.get() == data_);
    }
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const DeclBufferNode* op) override {
    escaped = escaped || op->buffer->data.get() == data_;
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  const VarNode* data_;
  std::vector<const ForNode*> path_;
};

using Region = std::vector<std::pair<PrimExpr, PrimExpr>>;

bool IsThreadIdx(const ForNode* l) {
  return l->kind == ForKind::kThreadBinding &&
         std::string(l->thread_tag).rfind("threadIdx", 0) == 0;
}

// The accesses relaxed over the loops of their paths below depth `depth`, joined; nullopt when a
// dimension is unbounded.
// A shared buffer is one for all threads of a block: its region is relaxed over the threadIdx
// loops above the allocation too (`threads`).
std::optional<Region> RegionBelow(const std::vector<Access>& accesses, size_t depth, bool threads,
                                  arith::Analyzer* ana) {
  std::optional<Region> out;
  for (const Access& a : accesses) {
    tvm::ffi::Map<Var, Range> dom;
    for (size_t k = 0; k < a.path.size(); ++k) {
      if (k >= depth || (threads && IsThreadIdx(a.path[k]))) {
        dom.Set(a.path[k]->loop_var, Range(a.path[k]->min, a.path[k]->extent));
      }
    }
    Region r;
    for (const PrimExpr& idx : a.indices) {
      if (idx.dtype().lanes() != 1) return std::nullopt;
      arith::IntSet s = ana->IntSet(idx, dom);
      if (!s->HasLowerBound() || !s->HasUpperBound()) return std::nullopt;
      r.emplace_back(ana->Simplify(*s->min_value), ana->Simplify(*s->max_value));
    }
    if (!out) {
      out = r;
      continue;
    }
    for (size_t d = 0; d < r.size(); ++d) {
      auto& [lo, hi] = (*out)[d];
      if (!ana->CanProve(lo <= r[d].first)) {
        lo = ana->CanProve(r[d].first <= lo) ? r[d].first : ana->Simplify(min(lo, r[d].first));
      }
      if (!ana->CanProve(hi >= r[d].second)) {
        hi = ana->CanProve(r[d].second >= hi) ? r[d].second : ana->Simplify(max(hi, r[d].second));
      }
    }
  }
  return out;
}

// Whether the iterations of serial loop `l` touch disjoint slabs that move forward: in some
// dimension, hi(v) < lo(v + 1), with lo and hi non-decreasing in v.
bool DisjointSlabs(const ForNode* l, const Region& region, arith::Analyzer* ana) {
  const Var& v = l->loop_var;
  std::unordered_map<const VarNode*, PrimExpr> next{{v.get(), v + 1}};
  class Shift : public ExprMutator {
   public:
    explicit Shift(const std::unordered_map<const VarNode*, PrimExpr>& m) : m_(m) {}
    using ExprMutator::VisitExpr_;
    PrimExpr VisitExpr_(const VarNode* op) override {
      auto it = m_.find(op);
      return it == m_.end() ? GetRef<PrimExpr>(op) : it->second;
    }

   private:
    const std::unordered_map<const VarNode*, PrimExpr>& m_;
  } shift(next);
  for (const auto& [lo, hi] : region) {
    PrimExpr lo1 = shift.VisitExpr(lo), hi1 = shift.VisitExpr(hi);
    if (ana->CanProve(hi < lo1) && ana->CanProve(lo <= lo1) && ana->CanProve(hi <= hi1)) {
      return true;
    }
  }
  return false;
}

class Compactor : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    const auto* decl = op->body.as<DeclBufferNode>();
    if (decl == nullptr || decl->buffer->data.get() != op->buffer_var.get()) {
      return StmtExprMutator::VisitStmt_(op);
    }
    const Buffer& buf = decl->buffer;
    std::string scope = buf->scope;
    bool shared = scope.rfind("shared", 0) == 0;
    if ((scope != "local" && !shared) || !buf->strides.empty() || !IsZero(buf->elem_offset)) {
      return StmtExprMutator::VisitStmt_(op);
    }
    AccessCollector collect(buf->data.get());
    collect.VisitStmt(decl->body);
    if (collect.escaped || collect.accesses.empty()) return StmtExprMutator::VisitStmt_(op);
    // The loops every access is under.
    std::vector<const ForNode*> common = collect.accesses[0].path;
    for (const Access& a : collect.accesses) {
      size_t n = 0;
      while (n < common.size() && n < a.path.size() && common[n] == a.path[n]) ++n;
      common.resize(n);
    }
    arith::Analyzer ana;
    size_t depth = 0;
    std::optional<Region> region = RegionBelow(collect.accesses, 0, shared, &ana);
    if (!region) return StmtExprMutator::VisitStmt_(op);
    for (; depth < common.size(); ++depth) {
      const ForNode* l = common[depth];
      bool may = l->kind == ForKind::kParallel || l->kind == ForKind::kThreadBinding ||
                 l->kind == ForKind::kSerial;
      if (!may) break;
      arith::Analyzer inner;
      for (size_t k = 0; k <= depth; ++k) {
        inner.Bind(common[k]->loop_var, Range(common[k]->min, common[k]->extent), true);
      }
      std::optional<Region> below = RegionBelow(collect.accesses, depth + 1, shared, &inner);
      if (!below) break;
      if (l->kind == ForKind::kSerial && !DisjointSlabs(l, *below, &inner)) break;
      region = below;
    }
    arith::Analyzer bound;
    for (size_t k = 0; k < depth; ++k) {
      bound.Bind(common[k]->loop_var, Range(common[k]->min, common[k]->extent), true);
    }
    Array<PrimExpr> shape;
    std::vector<PrimExpr> mins;
    bool smaller = false;
    for (size_t d = 0; d < region->size(); ++d) {
      const auto& [lo, hi] = (*region)[d];
      DataType t = buf->shape[d].dtype();
      auto full = AsConstInt(buf->shape[d]);
      int64_t ub = bound.ConstIntBound(bound.Simplify(hi - lo + 1))->max_value;
      if (!full || ub <= 0 || ub >= *full || ub >= arith::ConstIntBound::kPosInf) {
        shape.push_back(buf->shape[d]);
        mins.push_back(MakeConst(t, int64_t{0}));
        continue;
      }
      smaller = true;
      shape.push_back(MakeConst(t, ub));
      mins.push_back(cast(t, lo));
    }
    if (!smaller && depth == 0) return StmtExprMutator::VisitStmt_(op);
    Buffer compact(buf->name, buf->data, buf->dtype, shape, {}, buf->elem_offset, buf->scope,
                   buf->data_alignment, buf->offset_factor);
    rewrites_[buf->data.get()] = {compact, mins};
    Stmt body = VisitStmt(decl->body);
    auto wrap = [&](const Stmt& s) -> Stmt {
      Array<PrimExpr> extents(shape.begin(), shape.end());
      return WithSpan(Allocate(op->buffer_var, op->dtype, extents, op->condition,
                               WithSpan(DeclBuffer(compact, s), decl->span), op->annotations),
                      op->span);
    };
    if (depth == 0) return wrap(body);
    // Into the body of the innermost loop that holds every access.
    return PlaceIn(body, common, depth, wrap);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr e = StmtExprMutator::VisitExpr_(op);
    const auto* l = e.as<BufferLoadNode>();
    auto it = rewrites_.find(l->buffer->data.get());
    if (it == rewrites_.end()) return e;
    return BufferLoad(it->second.first, Shifted(l->indices, it->second.second));
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    const auto* st = s.as<BufferStoreNode>();
    auto it = rewrites_.find(st->buffer->data.get());
    if (it == rewrites_.end()) return s;
    return WithSpan(
        BufferStore(it->second.first, st->value, Shifted(st->indices, it->second.second)),
        op->span);
  }

 private:
  static bool IsZero(const PrimExpr& e) {
    auto v = AsConstInt(e);
    return v && *v == 0;
  }

  Array<PrimExpr> Shifted(const Array<PrimExpr>& indices, const std::vector<PrimExpr>& mins) {
    Array<PrimExpr> out;
    for (size_t d = 0; d < indices.size(); ++d) {
      out.push_back(IsZero(mins[d]) ? indices[d] : analyzer_.Simplify(indices[d] - mins[d]));
    }
    return out;
  }

  // `body` (the allocation's old body, rewritten) with the allocation wrapped around the body of
  // loop common[depth - 1]; the loops on the way are the same objects as in `common` unless the
  // rewrite changed them, so they are found by loop variable.
  Stmt PlaceIn(const Stmt& body, const std::vector<const ForNode*>& common, size_t depth,
               const std::function<Stmt(const Stmt&)>& wrap) {
    const VarNode* home = common[depth - 1]->loop_var.get();
    class Placer : public StmtExprMutator {
     public:
      Placer(const VarNode* home, const std::function<Stmt(const Stmt&)>& wrap)
          : home_(home), wrap_(wrap) {}
      using StmtExprMutator::VisitStmt_;
      Stmt VisitStmt_(const ForNode* op) override {
        if (op->loop_var.get() != home_) return StmtExprMutator::VisitStmt_(op);
        return WithSpan(For(op->loop_var, op->min, op->extent, op->kind, wrap_(op->body),
                            op->thread_tag, op->annotations),
                        op->span);
      }

     private:
      const VarNode* home_;
      const std::function<Stmt(const Stmt&)>& wrap_;
    } placer(home, wrap);
    return placer.VisitStmt(body);
  }

  std::unordered_map<const VarNode*, std::pair<Buffer, std::vector<PrimExpr>>> rewrites_;
  arith::Analyzer analyzer_;
};

}  // namespace

PrimFunc CompactBufferAllocation(const PrimFunc& func) {
  Compactor c;
  Stmt body = c.VisitStmt(func->body);
  if (body.same_as(func->body)) return func;
  return WithBody(func, body);
}

IRModule CompactBufferAllocation(const IRModule& mod) {
  return MapFunctions(mod,
                      [](const String&, const PrimFunc& f) { return CompactBufferAllocation(f); });
}

Pass CompactBufferAllocationPass() {
  return CreatePrimFuncPass([](PrimFunc f) { return CompactBufferAllocation(f); }, 0,
                            "CompactBufferAllocation");
}

}  // namespace transform
}  // namespace tessel
