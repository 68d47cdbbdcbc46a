// Internal to src/transform: what the CPU and GPU lowerings of tile operations share (operand
// regions, guarded loads and stores at ragged edges, loop nests).
#ifndef TESSEL_SRC_TRANSFORM_TILE_LOWERING_H_
#define TESSEL_SRC_TRANSFORM_TILE_LOWERING_H_

#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/builtin_tile.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessel {
namespace transform {
namespace tile_lowering {

using namespace ir;  // NOLINT(build/namespaces)

inline bool IsTileScope(const std::string& s) {
  return s == "shared" || s == "shared.dyn" || s == "local" || s == "local.fragment";
}

// The lowest (highest = false) or highest value of t: the identity of max (min).
inline PrimExpr Extreme(DataType t, bool highest) {
  if (t.is_floating()) {
    return FloatImm(t, highest ? std::numeric_limits<double>::infinity()
                               : -std::numeric_limits<double>::infinity());
  }
  if (t.is_uint()) {
    return highest ? MakeConst(t, t.bits() == 64 ? int64_t{-1} : (int64_t{1} << t.bits()) - 1)
                   : MakeConst(t, 0);
  }
  int64_t hi =
      t.bits() == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (t.bits() - 1)) - 1;
  return MakeConst(t, highest ? hi : -hi - 1);
}

// A constant's value; -1 when not a constant (tile extents are positive).
inline int64_t ConstOf(const PrimExpr& e) {
  auto v = AsConstInt(e);
  return v ? *v : -1;
}

// The statements of nested SeqStmts, in order.
inline std::vector<Stmt> FlattenSeq(const Stmt& s) {
  std::vector<Stmt> out;
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->seq) {
      std::vector<Stmt> inner = FlattenSeq(x);
      out.insert(out.end(), inner.begin(), inner.end());
    }
    return out;
  }
  return {s};
}

// The logical indices of element e of a tile of this constant shape (row-major).
inline Array<PrimExpr> Unflat(const PrimExpr& e, const std::vector<int64_t>& shape) {
  std::vector<PrimExpr> out(shape.size());
  PrimExpr rest = e;
  for (size_t d = shape.size(); d-- > 0;) {
    out[d] = d == 0 ? rest : floormod(rest, Int32(shape[d]));
    rest = floordiv(rest, Int32(shape[d]));
  }
  return Array<PrimExpr>(out.begin(), out.end());
}

// The row-major flat index of `idx` in a tile of this constant shape (the inverse of Unflat).
inline PrimExpr Flat(const std::vector<int64_t>& shape, const Array<PrimExpr>& idx) {
  PrimExpr e = Int32(0);
  for (size_t d = 0; d < idx.size(); ++d) {
    e = add(mul(e, Int32(shape[d])), cast(DataType::Int(32), idx[d]));
  }
  return e;
}

inline const CallNode* TileCall(const Stmt& s) {
  const auto* ev = s.as<EvaluateNode>();
  const auto* call = ev ? ev->value.as<CallNode>() : nullptr;
  auto op = call ? call->op.as<Op>() : std::nullopt;
  return op && IsTileOp((*op)->name) ? call : nullptr;
}

// Whether `st` reads or writes a buffer whose data variable is in `bufs` (tile operations name
// their regions by loads, so they count too).
inline bool Touches(const Stmt& st, const std::unordered_set<const VarNode*>& bufs) {
  bool hit = false;
  PostOrderVisit(st, [&](const ObjectRef& n) {
    if (const auto* l = n.as<BufferLoadNode>()) hit = hit || bufs.count(l->buffer->data.get());
    if (const auto* w = n.as<BufferStoreNode>()) hit = hit || bufs.count(w->buffer->data.get());
  });
  return hit;
}

inline bool IsTileKernel(const ForNode* op) {
  return op->kind == ForKind::kThreadBinding && op->annotations.count("tessel.tile_kernel");
}

class TileLowering : public StmtExprMutator {
 public:
  explicit TileLowering(std::string function) : function_(std::move(function)) {}

 protected:
  // The lowering of each tile operation, per target.
  virtual Stmt Copy(const CallNode* call) = 0;
  virtual Stmt Fill(const CallNode* call) = 0;
  virtual Stmt Gemm(const CallNode* call) = 0;
  virtual Stmt Reduce(const CallNode* call) = 0;
  virtual Stmt AtomicAdd(const CallNode* call) = 0;

  // `op`, the statement of tile operation `call`, lowered.
  Stmt LowerTileCall(const EvaluateNode* op, const CallNode* call) {
    std::string name = (*call->op.as<Op>())->name;
    Stmt out = name == "tile_copy"         ? Copy(call)
               : name == "tile_fill"       ? Fill(call)
               : name == "tile_reduce"     ? Reduce(call)
               : name == "tile_atomic_add" ? AtomicAdd(call)
                                           : Gemm(call);
    return WithSpan(out, op->span);
  }

  [[noreturn]] void Fail(const CallNode* call, const std::string& what) const {
    TVM_FFI_THROW(ValueError) << "LowerTileOps: function '" << function_ << "': " << what
                              << "\n  in: " << AsText(GetRef<PrimExpr>(call));
    TVM_FFI_UNREACHABLE();
  }

  TileRegion Region(const CallNode* call, size_t i) {
    auto r = AsTileRegion(call->args[i]);
    if (!r) Fail(call, "operand " + std::to_string(i) + " is not a tile_region");
    Array<PrimExpr> starts;
    for (const PrimExpr& s : r->starts) starts.push_back(VisitExpr(s));
    return TileRegion{r->buffer, starts, r->extents};
  }

  // Whether the indices may leave buf's shape (only asked of buffers that are not tiles).
  PrimExpr InBounds(const Buffer& buf, const Array<PrimExpr>& idx) {
    if (IsTileScope(buf->scope)) return PrimExpr();
    PrimExpr cond;
    auto need = [&](const PrimExpr& c) {
      if (!analyzer_.CanProve(c)) cond = cond.defined() ? And(cond, c) : c;
    };
    for (size_t d = 0; d < idx.size(); ++d) {
      need(GE(idx[d], MakeConst(idx[d].dtype(), 0)));
      need(LT(idx[d], cast(idx[d].dtype(), buf->shape[d])));
    }
    return cond;
  }

  PrimExpr Load(const Buffer& buf, const Array<PrimExpr>& idx, DataType to) {
    PrimExpr v = cast(to, BufferLoad(buf, idx));
    PrimExpr ok = InBounds(buf, idx);
    if (!ok.defined()) return v;
    return Call(to, builtin::if_then_else(), {ok, v, MakeConst(to, 0)});
  }

  Stmt Store(const Buffer& buf, const Array<PrimExpr>& idx, const PrimExpr& value) {
    Stmt s = BufferStore(buf, value, idx);
    PrimExpr ok = InBounds(buf, idx);
    return ok.defined() ? IfThenElse(ok, s) : s;
  }

  // The operands of tile_atomic_add, checked: dst, and src (a region of dst's extents) or a value
  // of dst's dtype to add to every element.
  struct AtomicOperands {
    TileRegion dst;
    std::optional<TileRegion> src;
    PrimExpr value;
  };
  AtomicOperands AtomicAddOperands(const CallNode* call) {
    AtomicOperands o{Region(call, 0), std::nullopt, PrimExpr()};
    const std::string dst_name = o.dst.buffer->name;
    if (o.dst.buffer->scope == "local.fragment" || o.dst.buffer->scope == "local") {
      Fail(call, "tile_atomic_add: the destination " + dst_name + " is a register tile (scope " +
                     std::string(o.dst.buffer->scope) + "); give a tensor or a shared tile");
    }
    if (!AsTileRegion(call->args[1])) {
      o.value = cast(o.dst.buffer->dtype, VisitExpr(call->args[1]));
      return o;
    }
    o.src = Region(call, 1);
    if (o.src->extents.size() != o.dst.extents.size()) {
      Fail(call, "tile_atomic_add: the destination " + dst_name + " has rank " +
                     std::to_string(o.dst.extents.size()) + ", the source " +
                     std::string(o.src->buffer->name) + " rank " +
                     std::to_string(o.src->extents.size()));
    }
    for (size_t d = 0; d < o.dst.extents.size(); ++d) {
      SameExtent(call, o.src->extents[d], o.dst.extents[d],
                 "tile_atomic_add: extent " + std::to_string(d) + " of " +
                     std::string(o.src->buffer->name) + " and " + dst_name);
    }
    return o;
  }

  // buf[idx] += value as one atomic read-modify-write, skipped outside a tensor's shape.
  Stmt AtomicAddAt(const Buffer& buf, const Array<PrimExpr>& idx, const PrimExpr& value) {
    PrimExpr addr = Call(DataType::Handle(), builtin::address_of(), {BufferLoad(buf, idx)});
    Stmt s = Evaluate(Call(DataType::Int(32), builtin::atomic_add_at(), {addr, value}));
    PrimExpr ok = InBounds(buf, idx);
    return ok.defined() ? IfThenElse(ok, s) : s;
  }

  // Loops over `extents` around body(vars), outermost first.
  Stmt Nest(const Array<PrimExpr>& extents, const std::string& prefix,
            const std::function<Stmt(const std::vector<Var>&)>& body) {
    std::vector<Var> vars;
    for (size_t d = 0; d < extents.size(); ++d) {
      Var v(prefix + std::to_string(d), extents[d].dtype());
      analyzer_.Bind(v, Range(MakeConst(v.dtype(), 0), extents[d]));
      vars.push_back(v);
    }
    Stmt s = body(vars);
    for (size_t d = extents.size(); d-- > 0;) {
      s = For(vars[d], MakeConst(vars[d].dtype(), 0), extents[d], ForKind::kSerial, s);
    }
    return s;
  }

  static Array<PrimExpr> Offset(const Array<PrimExpr>& starts, const std::vector<Var>& vars) {
    Array<PrimExpr> out;
    for (size_t d = 0; d < starts.size(); ++d)
      out.push_back(add(starts[d], cast(starts[d].dtype(), vars[d])));
    return out;
  }

  // The extents of `r` as an operand of rank `rank`: leading dimensions beyond it must have
  // extent 1 and are squeezed (TileLang's Q[b, h, i:i + 128, :] against a 2-D tile).
  Array<PrimExpr> Squeeze(const CallNode* call, const TileRegion& r, size_t rank) {
    size_t extra = r.extents.size() - rank;
    Array<PrimExpr> out;
    for (size_t d = 0; d < r.extents.size(); ++d) {
      if (d >= extra) {
        out.push_back(r.extents[d]);
      } else if (!analyzer_.CanProveEqual(r.extents[d], MakeConst(r.extents[d].dtype(), 1))) {
        Fail(call, "a region of rank " + std::to_string(r.extents.size()) + " of " +
                       std::string(r.buffer->name) + " against one of rank " +
                       std::to_string(rank) + ": its extent " + AsText(r.extents[d]) +
                       " in dimension " + std::to_string(d) + " is not 1");
      }
    }
    return out;
  }

  // The indices of `r` at `local` (offsets in its last local.size() dimensions; the squeezed
  // leading ones stay at their starts).
  static Array<PrimExpr> SqueezedAt(const TileRegion& r, const Array<PrimExpr>& local) {
    size_t extra = r.starts.size() - local.size();
    Array<PrimExpr> out;
    for (size_t d = 0; d < r.starts.size(); ++d) {
      out.push_back(d < extra ? r.starts[d]
                              : add(r.starts[d], cast(r.starts[d].dtype(), local[d - extra])));
    }
    return out;
  }

  void SameExtent(const CallNode* call, const PrimExpr& a, const PrimExpr& b,
                  const std::string& what) {
    if (!analyzer_.CanProveEqual(a, b)) {
      // Three-valued: a difference the analyzer proves is reported as one; anything it could
      // not decide (Z3's budget included) as not proved, never as a difference.
      bool differ = analyzer_.CanProve(NE(a, b));
      Fail(call, what + ": " + AsText(a) + " and " + AsText(b) +
                     (differ ? " differ"
                             : " are not proved equal (the analyzer could not decide it within "
                               "its budget; make the extents the same expression or constants)"));
    }
  }

  std::string function_;
  arith::Analyzer analyzer_;
};

// The SIMT lowering of the T.Kernels of a function body for GPU targets
// (src/transform/lower_tile_ops_gpu.cc); T.gemm on tensor cores (mma.sync) where CUDA `arch` has
// them (src/transform/tile_mma.h).
Stmt LowerTileKernelsSIMT(const Stmt& body, const std::string& function, const std::string& arch);

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_SRC_TRANSFORM_TILE_LOWERING_H_
