// The LowerTileOps pass (contract in include/tessel/transform/lower_tile_ops.h).
#include <tessel/arith/analyzer.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/builtin_tile.h>
#include <tessel/ir/fresh_copy.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/lower_tile_ops.h>
#include <tvm/ffi/error.h>

#include <limits>
#include <string>
#include <vector>

#include "transform/tile_divisible.h"
#include "transform/tile_layout_inference.h"
#include "transform/tile_lowering.h"

namespace tessel {
namespace transform {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

using namespace tile_lowering;  // NOLINT(build/namespaces)

class Lowerer : public TileLowering {
 public:
  explicit Lowerer(std::string function) : TileLowering(std::move(function)) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const EvaluateNode* op) override {
    const CallNode* call = TileCall(GetRef<Stmt>(op));
    return call ? LowerTileCall(op, call) : StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    // The loop's range lets the guards below be dropped where they always hold.
    analyzer_.Bind(op->loop_var, Range(op->min, op->extent), true);
    bool kernel = IsTileKernel(op);
    bool inner_block = in_kernel_ && op->kind == ForKind::kThreadBinding &&
                       std::string(op->thread_tag).rfind("blockIdx", 0) == 0;
    bool parallel = op->annotations.count("tessel.tile_parallel");
    if (!kernel && !inner_block && !parallel) return StmtExprMutator::VisitStmt_(op);
    bool saved = in_kernel_;
    in_kernel_ = in_kernel_ || kernel;
    Stmt body = VisitStmt(op->body);
    in_kernel_ = saved;
    Map<String, Any> ann = op->annotations;
    ann.erase("tessel.tile_kernel");
    ann.erase("tessel.tile_parallel");
    ForKind kind = kernel ? ForKind::kParallel : ForKind::kSerial;
    if (parallel) kind = op->kind;
    return WithSpan(For(op->loop_var, op->min, op->extent, kind, body, "", ann), op->span);
  }

  Stmt Copy(const CallNode* call) override {
    TileRegion src = Region(call, 0), dst = Region(call, 1);
    size_t rank = std::min(src.extents.size(), dst.extents.size());
    Array<PrimExpr> se = Squeeze(call, src, rank), de = Squeeze(call, dst, rank);
    for (size_t d = 0; d < rank; ++d) {
      SameExtent(call, se[d], de[d],
                 "tile_copy: extent " + std::to_string(d) + " of " + std::string(src.buffer->name) +
                     " and " + std::string(dst.buffer->name));
    }
    return Nest(de, "i", [&](const std::vector<Var>& v) {
      Array<PrimExpr> local(v.begin(), v.end());
      return Store(dst.buffer, SqueezedAt(dst, local),
                   Load(src.buffer, SqueezedAt(src, local), dst.buffer->dtype));
    });
  }

  Stmt Fill(const CallNode* call) override {
    TileRegion dst = Region(call, 0);
    PrimExpr value = cast(dst.buffer->dtype, VisitExpr(call->args[1]));
    return Nest(dst.extents, "i", [&](const std::vector<Var>& v) {
      return Store(dst.buffer, Offset(dst.starts, v), value);
    });
  }

  Stmt Gemm(const CallNode* call) override {
    TileRegion a = Region(call, 0), b = Region(call, 1), c = Region(call, 2);
    auto flag = [&](size_t i) {
      auto v = AsConstInt(call->args[i]);
      if (!v || (*v != 0 && *v != 1))
        Fail(call, "tile_gemm flag " + std::to_string(i) + " must be 0 or 1");
      return *v == 1;
    };
    bool ta = flag(3), tb = flag(4), clear = flag(5);
    for (const TileRegion* r : {&a, &b, &c}) {
      if (r->extents.size() != 2)
        Fail(call, "tile_gemm operand " + std::string(r->buffer->name) + " is not two-dimensional");
    }
    PrimExpr m = c.extents[0], n = c.extents[1];
    PrimExpr k = ta ? a.extents[0] : a.extents[1];
    SameExtent(call, ta ? a.extents[1] : a.extents[0], m, "tile_gemm: M of A and C");
    SameExtent(call, tb ? b.extents[0] : b.extents[1], n, "tile_gemm: N of B and C");
    SameExtent(call, tb ? b.extents[1] : b.extents[0], k, "tile_gemm: K of A and B");
    DataType t = c.buffer->dtype;
    std::vector<Stmt> seq;
    if (clear) {
      seq.push_back(Nest(c.extents, "i", [&](const std::vector<Var>& v) {
        return Store(c.buffer, Offset(c.starts, v), MakeConst(t, 0));
      }));
    }
    seq.push_back(Nest({m, n, k}, "g", [&](const std::vector<Var>& v) {
      const Var &i = v[0], &j = v[1], &kk = v[2];
      Array<PrimExpr> ai = ta ? Offset(a.starts, {kk, i}) : Offset(a.starts, {i, kk});
      Array<PrimExpr> bi = tb ? Offset(b.starts, {j, kk}) : Offset(b.starts, {kk, j});
      Array<PrimExpr> ci = Offset(c.starts, {i, j});
      PrimExpr acc =
          add(BufferLoad(c.buffer, ci), mul(Load(a.buffer, ai, t), Load(b.buffer, bi, t)));
      return Store(c.buffer, ci, acc);
    }));
    return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
  }

  Stmt Reduce(const CallNode* call) override {
    TileRegion src = Region(call, 0), dst = Region(call, 1);
    const auto* kind = call->args[2].as<StringImmNode>();
    auto dim = AsConstInt(call->args[3]);
    auto clear = AsConstInt(call->args[4]);
    std::string k = kind ? std::string(kind->value) : "";
    if ((k != "sum" && k != "max" && k != "min") || !dim || *dim < 0 ||
        *dim >= static_cast<int64_t>(src.extents.size()) || !clear) {
      Fail(call,
           "tile_reduce takes a kind (\"sum\", \"max\", \"min\"), a literal dim of the "
           "source and a literal clear");
    }
    // dst has the source's axes but dim, in order.
    Array<PrimExpr> kept;
    for (size_t d = 0; d < src.extents.size(); ++d) {
      if (static_cast<int64_t>(d) != *dim) kept.push_back(src.extents[d]);
    }
    if (kept.size() != dst.extents.size()) {
      Fail(call, "tile_reduce: the destination has rank " + std::to_string(dst.extents.size()) +
                     ", the source without axis " + std::to_string(*dim) + " has rank " +
                     std::to_string(kept.size()));
    }
    for (size_t d = 0; d < kept.size(); ++d) {
      SameExtent(call, kept[d], dst.extents[d], "tile_reduce: extent " + std::to_string(d));
    }
    DataType t = dst.buffer->dtype;
    auto combine = [&](const PrimExpr& a, const PrimExpr& b) -> PrimExpr {
      if (k == "sum") return add(a, b);
      return k == "max" ? max(a, b) : min(a, b);
    };
    PrimExpr identity = k == "sum" ? MakeConst(t, 0) : Extreme(t, k == "min");
    return Nest(kept, "o", [&](const std::vector<Var>& o) {
      Array<PrimExpr> di = Offset(dst.starts, o);
      std::vector<Stmt> seq;
      if (*clear) seq.push_back(Store(dst.buffer, di, identity));
      Var r("r", src.extents[*dim].dtype());
      std::vector<Var> full;
      for (size_t d = 0, j = 0; d < src.extents.size(); ++d) {
        full.push_back(static_cast<int64_t>(d) == *dim ? r : o[j++]);
      }
      Stmt step =
          Store(dst.buffer, di,
                combine(BufferLoad(dst.buffer, di), Load(src.buffer, Offset(src.starts, full), t)));
      seq.push_back(For(r, MakeConst(r.dtype(), 0), src.extents[*dim], ForKind::kSerial, step));
      return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
    });
  }

  // Blocks run in parallel on the CPU, so an add into a tensor is atomic. A shared tile belongs
  // to its block, which one CPU thread runs: a plain add.
  Stmt AtomicAdd(const CallNode* call) override {
    AtomicOperands o = AtomicAddOperands(call);
    DataType t = o.dst.buffer->dtype;
    return Nest(o.dst.extents, "i", [&](const std::vector<Var>& v) -> Stmt {
      Array<PrimExpr> di = Offset(o.dst.starts, v);
      PrimExpr value = o.src ? Load(o.src->buffer, Offset(o.src->starts, v), t) : o.value;
      if (IsTileScope(o.dst.buffer->scope)) {
        return BufferStore(o.dst.buffer, add(BufferLoad(o.dst.buffer, di), value), di);
      }
      return AtomicAddAt(o.dst.buffer, di, value);
    });
  }

  bool in_kernel_ = false;
};

// The first tile operation or T.Kernel loop of a function (for the GPU refusal), or null.
const Object* FirstTileConstruct(const PrimFunc& f) {
  const Object* found = nullptr;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (found) return;
    if (const auto* loop = n.as<ForNode>(); loop && IsTileKernel(loop)) found = loop;
    if (const auto* call = n.as<CallNode>()) {
      auto op = call->op.as<Op>();
      if (op && IsTileOp((*op)->name)) found = call;
    }
  });
  return found;
}

// Plans each T.Kernel for a GPU (layout inference) and lowers those whose plan is warp-specialized,
// under a host test that TMA can describe their tensors; the SIMT lowering after it takes the rest
// (and a fresh copy of each warp-specialized kernel as the other branch of that test).
class PlanKernels : public StmtExprMutator {
 public:
  PlanKernels(std::string arch, std::string function, Persistent persistent)
      : arch_(std::move(arch)), function_(std::move(function)), persistent_(persistent) {}
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    if (!IsTileKernel(op)) return StmtExprMutator::VisitStmt_(op);
    TileKernelPlan plan = PlanTileKernel(op, arch_);
    if (!plan.warp_specialized) {
      Stmt simt = Annotated(op, DescribePlan(plan));
      // cp.async (sm_80 on) moves whole 16-byte vectors only: worth a copy of the kernel.
      return arch_.empty() ? simt : SpecializeDivisible(simt.as<ForNode>());
    }
    Stmt fast = LowerTileKernelHopper(op, plan, function_, persistent_);
    Map<String, Any> fallback;
    fallback.Set("tessel.tile_plan",
                 String("SIMT: the fallback of the warp-specialized kernel, for tensors TMA cannot "
                        "describe (empty, or a row stride not a multiple of 16 bytes)"));
    Stmt slow = Annotated(op, fallback);
    return WithSpan(IfThenElse(TmaDescribable(plan), fast, FreshCopy(slow)), op->span);
  }

 private:
  static Stmt Annotated(const ForNode* op, const Map<String, Any>& extra) {
    Map<String, Any> ann = op->annotations;
    for (const auto& [k, v] : extra) ann.Set(k, v);
    return WithSpan(For(op->loop_var, op->min, op->extent, op->kind, op->body, op->thread_tag, ann),
                    op->span);
  }

  std::string arch_, function_;
  Persistent persistent_;
};

// The function's "tessel.persistent" attribute: absent, or a bool.
Persistent PersistentOf(const PrimFunc& f, const std::string& symbol) {
  auto v = f->attrs.Get("tessel.persistent");
  if (!v) return Persistent::kDefault;
  auto b = v->try_cast<bool>();
  if (!b) {
    std::string got = v->GetTypeKey();
    if (auto str = v->try_cast<String>()) got = "the string \"" + std::string(*str) + "\"";
    TVM_FFI_THROW(ValueError) << "LowerTileOps: function '" << symbol
                              << "': attribute \"tessel.persistent\" must be True or False, got "
                              << got;
  }
  return *b ? Persistent::kOn : Persistent::kOff;
}

}  // namespace

IRModule LowerTileOps(const IRModule& mod, bool gpu, const std::string& arch) {
  return MapFunctions(mod, [gpu, arch](const String& name, const PrimFunc& f) {
    const Object* first = FirstTileConstruct(f);
    if (!first) return f;
    std::string symbol = f.GetGlobalSymbol().value_or(name);
    PrimFunc out = f;
    if (gpu) {
      Stmt planned = PlanKernels(arch, symbol, PersistentOf(f, symbol)).VisitStmt(f->body);
      out.CopyOnWrite()->body = LowerTileKernelsSIMT(planned, symbol, arch);
      if (FirstTileConstruct(out)) {
        TVM_FFI_THROW(ValueError) << "LowerTileOps: function '" << symbol
                                  << "': a tile operation outside any T.Kernel; on a GPU it "
                                     "needs the kernel's threads";
      }
      return out;
    }
    out.CopyOnWrite()->body = Lowerer(symbol).VisitStmt(f->body);
    return out;
  });
}

Pass LowerTileOpsPass() {
  return CreateModulePass([](IRModule m) { return LowerTileOps(m, false); }, 0, "LowerTileOps");
}

Pass LowerTileOpsGPUPass() {
  return CreateModulePass([](IRModule m) { return LowerTileOps(m, true); }, 0, "LowerTileOpsGPU");
}

Pass LowerTileOpsSm80Pass() {
  return CreateModulePass([](IRModule m) { return LowerTileOps(m, true, "sm_80"); }, 0,
                          "LowerTileOpsSm80");
}

Pass LowerTileOpsHopperPass() {
  return CreateModulePass([](IRModule m) { return LowerTileOps(m, true, "sm_90a"); }, 0,
                          "LowerTileOpsHopper");
}

}  // namespace transform
}  // namespace tessel
