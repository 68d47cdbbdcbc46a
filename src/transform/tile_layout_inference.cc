// Layout inference for tile programs on GPUs: the plan of each T.Kernel
// (src/transform/tile_layout_inference.h says what a plan holds and decides).
#include "transform/tile_layout_inference.h"

#include <tessel/arith/int_eval.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/reflection/registry.h>

#include <map>
#include <unordered_map>
#include <unordered_set>

#include "transform/tile_lowering.h"
#include "transform/tile_mma.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

namespace {

// Shared memory a block may use on sm_90 (227 KB).
constexpr int64_t kMaxSharedBytes = 227 * 1024;

std::string Line(const Optional<Span>& span) {
  return span ? " at line " + std::to_string((*span)->line) : "";
}

std::string OpName(const CallNode* call) {
  std::string n = (*call->op.as<Op>())->name;
  return "T." + n.substr(5);  // tile_copy -> T.copy
}

bool IsShared(const Buffer& b) { return b->scope == "shared" || b->scope == "shared.dyn"; }
bool IsFragment(const Buffer& b) { return b->scope == "local.fragment"; }

std::vector<int64_t> ConstShape(const Buffer& b) {
  std::vector<int64_t> out;
  for (const PrimExpr& e : b->shape) out.push_back(ConstOf(e));
  return out;
}

bool Whole(const TileRegion& r) {
  for (size_t d = 0; d < r.starts.size(); ++d) {
    if (ConstOf(r.starts[d]) != 0 || ConstOf(r.extents[d]) != ConstOf(r.buffer->shape[d])) {
      return false;
    }
  }
  return r.starts.size() == r.buffer->shape.size();
}

// A tile call with its statement's span.
struct Use {
  const CallNode* call;
  Optional<Span> span;
};

class Planner {
 public:
  Planner(const ForNode* kernel, std::string arch) : kernel_(kernel), arch_(std::move(arch)) {}

  TileKernelPlan Run() {
    auto threads = kernel_->annotations.Get("tessel.tile_kernel")->try_cast<int64_t>();
    plan_.threads = threads ? *threads : 0;
    Stmt body = kernel_->body;
    while (const auto* b = body.as<ForNode>()) {
      if (b->kind != ForKind::kThreadBinding) break;
      body = b->body;
    }
    while (true) {
      if (const auto* a = body.as<AllocateNode>()) {
        body = a->body;
      } else if (const auto* d = body.as<DeclBufferNode>()) {
        if (IsShared(d->buffer) || IsFragment(d->buffer)) tiles_.push_back(d->buffer);
        body = d->body;
      } else {
        break;
      }
    }
    body_ = body;
    CollectUses();
    plan_.why_not = TryWarpSpecialized();
    if (!plan_.why_not.empty()) {
      plan_.warp_specialized = false;
      plan_.pipelined = nullptr;
      plan_.copies.clear();
      plan_.gemms.clear();
      plan_.layouts.clear();
      PlanSimt();
    }
    return plan_;
  }

 private:
  void CollectUses() {
    PostOrderVisit(body_, [&](const ObjectRef& n) {
      const auto* ev = n.as<EvaluateNode>();
      if (const CallNode* call = ev ? TileCall(GetRef<Stmt>(ev)) : nullptr) {
        uses_.push_back(Use{call, ev->span});
      }
    });
  }

  void PlanSimt() {
    std::vector<Buffer> fragments;
    for (const Buffer& b : tiles_) {
      if (IsFragment(b)) fragments.push_back(b);
    }
    std::unordered_set<const VarNode*> reduced = ReplicatedFragments(body_, fragments);
    std::map<std::vector<int64_t>, std::string> no_mma;
    auto mma = MmaAccumulatorShapes(body_, fragments, reduced, plan_.threads, arch_, &no_mma);
    for (const Buffer& b : tiles_) {
      TileLayoutChoice c;
      c.buffer = b;
      std::vector<int64_t> shape;
      for (const PrimExpr& e : b->shape) shape.push_back(ConstOf(e));
      if (IsShared(b)) {
        c.kind = TileLayoutKind::kPlain;
      } else if (reduced.count(b->data.get())) {
        c.kind = TileLayoutKind::kReplicated;
        c.why = "a T.reduce writes it or a T.Parallel reads it whole (ReplicatedFragments)";
      } else if (mma.count(shape)) {
        c.kind = TileLayoutKind::kMma;
        c.grid = mma.at(shape).Text();
        c.why = "the shape of a T.gemm accumulator";
      } else {
        c.kind = TileLayoutKind::kSpread;
        if (no_mma.count(shape))
          c.why = "a T.gemm of this shape cannot use mma.sync: " + no_mma.at(shape);
      }
      plan_.layouts.push_back(c);
    }
  }

  TileLayoutChoice& Choice(const Buffer& b) {
    for (TileLayoutChoice& c : plan_.layouts) {
      if (c.buffer.same_as(b) || c.buffer->data.same_as(b->data)) return c;
    }
    TileLayoutChoice c;
    c.buffer = b;
    c.kind = IsShared(b) ? TileLayoutKind::kPlain : TileLayoutKind::kReplicated;
    plan_.layouts.push_back(c);
    return plan_.layouts.back();
  }

  bool IsTile(const Buffer& b) const {
    for (const Buffer& t : tiles_) {
      if (t->data.same_as(b->data)) return true;
    }
    return false;
  }

  // "" when the kernel takes the warp-specialized form (plan_ filled), else why not.
  std::string TryWarpSpecialized() {
    if (arch_ != "sm_90a") {
      return "the target is " + (arch_.empty() ? std::string("not CUDA") : arch_) +
             "; the warp-specialized form (TMA, wgmma) needs sm_90a";
    }
    if (plan_.threads != 128 && plan_.threads != 256 && plan_.threads != 384) {
      return "threads=" + std::to_string(plan_.threads) +
             ": the warp-specialized form takes 128, 256 or 384 threads (one to three consumer "
             "warpgroups)";
    }
    int64_t warpgroups = plan_.threads / 128;
    // The T.Pipelined loop: one, at the top level of the kernel.
    std::vector<Stmt> top = FlattenSeq(body_);
    for (const Stmt& s : top) {
      const auto* f = s.as<ForNode>();
      if (f && f->annotations.count("tessel.pipeline_stages")) {
        if (plan_.pipelined) return "two T.Pipelined loops" + Line(f->span);
        plan_.pipelined = f;
      }
    }
    if (!plan_.pipelined) return "no T.Pipelined loop at the top level of the T.Kernel";
    const ForNode* loop = plan_.pipelined;
    std::string where = "the T.Pipelined loop" + Line(loop->span);
    plan_.stages = plan_.pipelined->annotations.Get("tessel.pipeline_stages")->cast<int64_t>();
    if (plan_.stages < 1 || plan_.stages > 8) {
      return where + " asks for " + std::to_string(plan_.stages) + " stages (1 to 8)";
    }
    // Its body: TMA copies into shared tiles and wgmma gemms on them; and, in the fused form,
    // what the consumers do with the accumulators between them.
    for (const Stmt& s : FlattenSeq(loop->body)) {
      const CallNode* call = TileCall(s);
      std::string name = call ? std::string((*call->op.as<Op>())->name) : "";
      std::string at = call ? OpName(call) + Line(s->span) : "a statement" + Line(s->span);
      const auto* nest = s.as<ForNode>();
      if (name == "tile_copy" && FragmentToFragment(call)) {
        plan_.fused = true;
      } else if (name == "tile_copy") {
        std::string bad = AddCopy(call, at, &plan_.copies);
        if (!bad.empty()) return bad;
      } else if (name == "tile_gemm") {
        std::string bad = AddGemm(call, at, warpgroups);
        if (!bad.empty()) return bad;
      } else if (name == "tile_reduce" || name == "tile_fill") {
        plan_.fused = true;
      } else if (nest && nest->annotations.count("tessel.tile_parallel")) {
        plan_.fused = true;
      } else {
        return where + " holds " + at +
               "; the warp-specialized form takes T.copy, T.gemm, T.reduce, T.fill and "
               "T.Parallel there";
      }
    }
    if (plan_.copies.empty() || plan_.gemms.empty()) {
      return where + " needs T.copy into shared tiles and a T.gemm on them";
    }
    // Copies into shared tiles before the loop: loaded once per block, by the producer.
    for (const Stmt& s : FlattenSeq(body_)) {
      if (s.get() == loop) break;
      const CallNode* call = TileCall(s);
      if (!call || (*call->op.as<Op>())->name != "tile_copy") continue;
      auto dst = AsTileRegion(call->args[1]);
      if (!dst || !IsShared(dst->buffer)) continue;
      std::string bad = AddCopy(call, OpName(call) + Line(s->span), &plan_.preloads);
      if (!bad.empty()) return bad;
      plan_.fused = true;
    }
    for (const WgmmaGemm& g : plan_.gemms) plan_.fused = plan_.fused || g.a_regs || g.b_mn;
    std::unordered_set<const VarNode*> written;
    int64_t bytes = 0;
    for (const std::vector<TmaCopy>* copies : {&plan_.copies, &plan_.preloads}) {
      int64_t times = copies == &plan_.copies ? plan_.stages : 1;
      for (const TmaCopy& c : *copies) {
        if (!written.insert(c.dst->data.get()).second) {
          return "shared tile " + std::string(c.dst->name) + " is written by two T.copy";
        }
        bytes += StageBytes(c) * times;
      }
    }
    if (bytes > kMaxSharedBytes) {
      return where + ": " + std::to_string(plan_.stages) + " stages of its tiles take " +
             std::to_string(bytes) + " bytes of shared memory (at most " +
             std::to_string(kMaxSharedBytes) + ")";
    }
    for (const WgmmaGemm& g : plan_.gemms) {
      for (const Buffer& b : {g.a, g.b}) {
        if (IsShared(b) && !written.count(b->data.get())) {
          return "shared tile " + std::string(b->name) + " of " + OpName(g.call) +
                 " is not written by a T.copy in " + where + " or before it";
        }
      }
    }
    // Every shared tile is a TMA ring or a preloaded tile; nothing else may touch it.
    for (const Buffer& t : tiles_) {
      if (IsShared(t) && !written.count(t->data.get())) {
        return "shared tile " + std::string(t->name) + " is not one that " + where +
               " or a T.copy before it copies into (the warp-specialized form has only those)";
      }
    }
    std::string bad = CheckOutsideLoop();
    if (!bad.empty()) return bad;
    for (const std::vector<TmaCopy>* copies : {&plan_.copies, &plan_.preloads}) {
      for (const TmaCopy& c : *copies) {
        TileLayoutChoice& ch = Choice(c.dst);
        ch.kind = TileLayoutKind::kSwizzled;
        ch.swizzle_bytes = c.block_cols * c.dst->dtype.bytes();
        ch.why = OpName(c.call) + " by TMA" +
                 (c.blocks > 1 ? " in " + std::to_string(c.blocks) + " column blocks" : "") +
                 ", read by wgmma";
      }
    }
    for (const WgmmaGemm& g : plan_.gemms) {
      TileLayoutChoice& ch = Choice(g.c);
      if (ch.kind == TileLayoutKind::kWgmma && ch.n != g.n) {
        return "fragment " + std::string(g.c->name) + ": " + ch.why + " and C of " +
               OpName(g.call) + " need different layouts";
      }
      ch.kind = TileLayoutKind::kWgmma;
      ch.n = g.n;
      ch.why = "C of " + OpName(g.call) + Line(SpanOf(g.call));
    }
    bad = Propagate();
    if (!bad.empty()) return bad;
    PropagateRows();
    bad = CheckOperands();
    if (!bad.empty()) return bad;
    // A reduction (after the loop, in the persistent form too) works on rows of accumulators:
    // the fragments then all follow them.
    if (plan_.fused || reduces_) {
      bad = CheckFusedFragments();
      if (!bad.empty()) return bad;
    }
    if (plan_.fused) {
      PlanLateGemm();
      plan_.split = PlanTileLoopSplit(plan_.pipelined);
    }
    PlanStore(bytes);
    for (const Buffer& t : tiles_) Choice(t);  // the rest: replicated
    plan_.warp_specialized = true;
    return "";
  }

  // plan_.late_gemm and late_wait (tile_layout_inference.h). Each statement then sees the values
  // it sees in order: the late gemm of iteration k - 1 reads and writes only its fragments (its
  // A through the registers packed after iteration k - 1, before anything can change them) and
  // its stage, which stays loaded until it completes.
  void PlanLateGemm() {
    std::vector<Stmt> stmts;
    std::vector<size_t> gemms;
    for (const Stmt& s : FlattenSeq(plan_.pipelined->body)) {
      const CallNode* call = TileCall(s);
      std::string name = call ? std::string((*call->op.as<Op>())->name) : "";
      if (name == "tile_copy" && !FragmentToFragment(call)) continue;  // the producer's
      if (name == "tile_gemm") gemms.push_back(stmts.size());
      stmts.push_back(s);
    }
    if (gemms.size() != 2 || gemms[1] + 1 != stmts.size()) return;
    const CallNode* late = TileCall(stmts.back());
    const WgmmaGemm* g = nullptr;
    for (const WgmmaGemm& x : plan_.gemms) g = x.call == late ? &x : g;
    std::unordered_set<const VarNode*> frags{g->c->data.get()};
    if (g->a_regs) frags.insert(g->a->data.get());
    for (size_t i = 0; i <= gemms[0]; ++i) {
      if (Touches(stmts[i], frags)) return;
    }
    plan_.late_gemm = stmts.back().get();
    for (size_t i = gemms[0] + 1; i < gemms[1] && !plan_.late_wait; ++i) {
      if (Touches(stmts[i], frags)) plan_.late_wait = stmts[i].get();
    }
  }

  bool FragmentToFragment(const CallNode* call) const {
    auto src = AsTileRegion(call->args[0]), dst = AsTileRegion(call->args[1]);
    return src && dst && IsFragment(src->buffer) && IsFragment(dst->buffer);
  }

  // After layout inference: a gemm's A from registers must be a 16-bit wgmma fragment whose
  // columns are the gemm's K (m64nK: its registers are then the A operand as they stand).
  std::string CheckOperands() {
    for (const WgmmaGemm& g : plan_.gemms) {
      if (!g.a_regs) continue;
      const TileLayoutChoice* c = plan_.Find(g.a);
      std::string at = OpName(g.call) + Line(SpanOf(g.call));
      if (!c || c->kind != TileLayoutKind::kWgmma || c->n != g.k) {
        return at + ": A (" + std::string(g.a->name) +
               ") is a fragment that is not a wgmma accumulator of K = " + std::to_string(g.k) +
               " columns (wgmma reads A from registers in that layout only)";
      }
    }
    return "";
  }

  // The fused form holds every fragment in registers by rows of the accumulators: each must be a
  // wgmma accumulator or a row statistic of one, and each T.Parallel nest must index them so that
  // a thread touches its own rows only.
  std::string CheckFusedFragments() {
    for (const Buffer& t : tiles_) {
      if (!IsFragment(t)) continue;
      const TileLayoutChoice* c = plan_.Find(t);
      if (!c || (c->kind != TileLayoutKind::kWgmma && c->kind != TileLayoutKind::kWgmmaRows)) {
        return "fragment " + std::string(t->name) +
               " is neither a wgmma accumulator nor a row statistic of one (one value per row, "
               "written by a T.reduce over its columns or read as x[i] beside it in a "
               "T.Parallel); with a T.reduce or a fused loop, the warp-specialized form holds only "
               "those";
      }
    }
    std::string bad;
    ForEachNest([&](const ForNode* f, const std::vector<Var>& vars,
                    const std::vector<int64_t>& shape, const Stmt& inner) {
      if (!bad.empty()) return;
      PostOrderVisit(inner, [&](const ObjectRef& m) {
        Buffer b;
        Array<PrimExpr> idx;
        if (const auto* l = m.as<BufferLoadNode>()) b = l->buffer, idx = l->indices;
        if (const auto* s = m.as<BufferStoreNode>()) b = s->buffer, idx = s->indices;
        if (!b.defined() || !IsFragment(b) || !bad.empty()) return;
        const TileLayoutChoice* c = plan_.Find(b);
        bool ok = false;
        if (c->kind == TileLayoutKind::kWgmma) {
          ok = ConstShape(b) == shape && ByVars(idx, vars, vars.size());
        } else {
          ok = idx.size() == 1 && idx[0].same_as(vars[0]) && ConstShape(b)[0] == shape[0];
        }
        if (!ok) {
          bad = "the T.Parallel" + Line(f->span) + " indexes fragment " + std::string(b->name) +
                " other than by its own loop variables (a row statistic by the first one)";
        }
      });
    });
    return bad;
  }

  static bool ByVars(const Array<PrimExpr>& idx, const std::vector<Var>& vars, size_t n) {
    if (idx.size() != n) return false;
    for (size_t d = 0; d < n; ++d) {
      if (!idx[d].same_as(vars[d])) return false;
    }
    return true;
  }

  // f(outermost loop, its variables, extents, body) for each T.Parallel nest of the kernel.
  void ForEachNest(const std::function<void(const ForNode*, const std::vector<Var>&,
                                            const std::vector<int64_t>&, const Stmt&)>& f) const {
    std::unordered_set<const ForNode*> inner_loops;
    PostOrderVisit(body_, [&](const ObjectRef& n) {
      const auto* l = n.as<ForNode>();
      if (!l || !l->annotations.count("tessel.tile_parallel")) return;
      if (const auto* g = l->body.as<ForNode>(); g && g->annotations.count("tessel.tile_parallel"))
        inner_loops.insert(g);
    });
    PostOrderVisit(body_, [&](const ObjectRef& n) {
      const auto* l = n.as<ForNode>();
      if (!l || !l->annotations.count("tessel.tile_parallel") || inner_loops.count(l)) return;
      std::vector<Var> vars{l->loop_var};
      std::vector<int64_t> shape{ConstOf(l->extent)};
      Stmt inner = l->body;
      while (const auto* g = inner.as<ForNode>()) {
        if (!g->annotations.count("tessel.tile_parallel")) break;
        vars.push_back(g->loop_var);
        shape.push_back(ConstOf(g->extent));
        inner = g->body;
      }
      f(l, vars, shape, inner);
    });
  }

  // The first T.copy of a wgmma fragment into a tensor goes through TMA stores when its tensor is
  // a compact 2-D float16 / bfloat16 one, the fragment has a multiple of 64 columns and the
  // staging tile fits in shared memory; the others are stored by each thread from its registers.
  void PlanStore(int64_t ring_bytes) {
    for (const Use& u : uses_) {
      if ((*u.call->op.as<Op>())->name != "tile_copy") continue;
      auto src = AsTileRegion(u.call->args[0]), dst = AsTileRegion(u.call->args[1]);
      if (!src || !dst || !IsFragment(src->buffer) || IsTile(dst->buffer)) continue;
      const TileLayoutChoice* c = plan_.Find(src->buffer);
      DataType t = dst->buffer->dtype;
      if (!c || c->kind != TileLayoutKind::kWgmma || c->n % 64 != 0 || t.bits() != 16 ||
          t.lanes() != 1 || !(t.is_float() || t.is_bfloat()) || dst->buffer->shape.size() != 2 ||
          !dst->buffer->strides.empty() || ConstOf(dst->buffer->elem_offset) != 0) {
        continue;
      }
      int64_t staging = (plan_.threads / 128) * 64 * c->n * t.bytes();
      if (ring_bytes + staging > kMaxSharedBytes) return;
      plan_.stores.push_back(TmaStore{u.call, src->buffer, *dst});
      return;
    }
  }

  Optional<Span> SpanOf(const CallNode* call) const {
    for (const Use& u : uses_) {
      if (u.call == call) return u.span;
    }
    return Optional<Span>();
  }

  static int64_t StageBytes(const TmaCopy& c) {
    int64_t bytes = c.rows * c.block_cols * c.blocks * c.dst->dtype.bytes();
    return (bytes + 1023) / 1024 * 1024;
  }

  std::string AddCopy(const CallNode* call, const std::string& at, std::vector<TmaCopy>* out) {
    auto src = AsTileRegion(call->args[0]);
    auto dst = AsTileRegion(call->args[1]);
    if (!src || !dst) return at + ": operands are not tile regions";
    if (IsTile(src->buffer) || !IsShared(dst->buffer) || !IsTile(dst->buffer)) {
      return at + " is not a copy of a tensor into a shared tile";
    }
    if (!Whole(*dst)) return at + " writes part of " + std::string(dst->buffer->name);
    DataType t = dst->buffer->dtype;
    if (src->buffer->dtype != t || t.bits() != 16 || t.lanes() != 1 ||
        !(t.is_float() || t.is_bfloat())) {
      return at + ": TMA copies float16 / bfloat16 tiles without conversion here";
    }
    size_t rank = src->buffer->shape.size();
    if (dst->extents.size() != 2 || rank < 2 || rank > 5 || src->extents.size() != rank) {
      return at + ": the warp-specialized form copies 2-D tiles of tensors of rank 2 to 5";
    }
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (ConstOf(src->extents[d]) != 1) {
        return at + ": dimension " + std::to_string(d) + " of the box in " +
               std::string(src->buffer->name) + " has extent " + AsText(src->extents[d]) +
               " (a 2-D tile of a tensor of rank " + std::to_string(rank) +
               " takes one element of each leading dimension)";
      }
    }
    TmaCopy c{call, *src, dst->buffer};
    c.rows = ConstOf(dst->extents[0]);
    int64_t cols = ConstOf(dst->extents[1]), row_bytes = cols * t.bytes();
    if (row_bytes == 32 || row_bytes == 64 || row_bytes == 128) {
      c.block_cols = cols;
    } else if (row_bytes > 128 && row_bytes % 128 == 0) {
      c.block_cols = 128 / t.bytes();
      c.blocks = row_bytes / 128;
    }
    if (c.rows < 1 || c.rows > 256 || c.block_cols == 0) {
      return at + ": a TMA box of " + std::to_string(c.rows) + " rows of " +
             std::to_string(row_bytes) +
             " bytes (rows up to 256, rows of 32, 64 or a multiple of 128 bytes)";
    }
    if (ConstOf(src->buffer->elem_offset) != 0 ||
        (!src->buffer->strides.empty() && ConstOf(src->buffer->strides[rank - 1]) != 1)) {
      return at + ": tensor " + std::string(src->buffer->name) +
             " is a view with an offset or an inner stride";
    }
    out->push_back(c);
    return "";
  }

  // The TMA copy into shared tile `b`, if any.
  const TmaCopy* CopyInto(const Buffer& b) const {
    for (const std::vector<TmaCopy>* copies : {&plan_.copies, &plan_.preloads}) {
      for (const TmaCopy& c : *copies) {
        if (c.dst->data.same_as(b->data)) return &c;
      }
    }
    return nullptr;
  }

  std::string AddGemm(const CallNode* call, const std::string& at, int64_t warpgroups) {
    auto a = AsTileRegion(call->args[0]);
    auto b = AsTileRegion(call->args[1]);
    auto c = AsTileRegion(call->args[2]);
    if (!a || !b || !c) return at + ": operands are not tile regions";
    if (!(IsShared(a->buffer) || IsFragment(a->buffer)) || !IsShared(b->buffer) ||
        !IsFragment(c->buffer)) {
      return at +
             ": wgmma here reads A from a shared tile or a fragment, B from a shared tile, "
             "into a fragment C";
    }
    if (!Whole(*a) || !Whole(*b) || !Whole(*c)) return at + " on part of a tile";
    if (ConstOf(call->args[3]) != 0) {
      return at + ": wgmma here takes A as (M, K) (transpose_A=False)";
    }
    DataType t = a->buffer->dtype;
    if (b->buffer->dtype != t || c->buffer->dtype != DataType::Float(32) || t.bits() != 16 ||
        !(t.is_float() || t.is_bfloat())) {
      return at + ": wgmma here multiplies float16 or bfloat16 into float32";
    }
    WgmmaGemm g;
    g.call = call;
    g.a = a->buffer;
    g.b = b->buffer;
    g.c = c->buffer;
    g.a_regs = IsFragment(a->buffer);
    g.b_mn = ConstOf(call->args[4]) != 1;
    g.m = ConstOf(a->extents[0]);
    g.k = ConstOf(a->extents[1]);
    g.n = ConstOf(b->extents[g.b_mn ? 1 : 0]);
    g.clear = ConstOf(call->args[5]) == 1;
    if (ConstOf(b->extents[g.b_mn ? 0 : 1]) != g.k || ConstOf(c->extents[0]) != g.m ||
        ConstOf(c->extents[1]) != g.n) {
      return at + ": the extents of A, B and C do not agree";
    }
    if (g.m != 64 * warpgroups) {
      return at + ": M = " + std::to_string(g.m) + "; with " + std::to_string(plan_.threads) +
             " threads the warpgroups cover M = " + std::to_string(64 * warpgroups);
    }
    if (g.n < 8 || g.n > 256 || g.n % 8 != 0 || g.k % 16 != 0) {
      return at + ": N = " + std::to_string(g.n) + ", K = " + std::to_string(g.k) +
             " (wgmma takes N a multiple of 8 up to 256, K a multiple of 16)";
    }
    if (g.b_mn && g.n % 64 != 0) {
      return at + ": B (" + std::string(g.b->name) + ") is (K, N) with N = " + std::to_string(g.n) +
             "; wgmma reads an N-major B here in 128-byte rows (N a multiple of 64), or give B "
             "as (N, K) with transpose_B=True";
    }
    plan_.gemms.push_back(g);
    return "";
  }

  // Outside the T.Pipelined loop: only fragments and tensors, through T.copy, T.fill and
  // T.Parallel; no shared tile.
  std::string CheckOutsideLoop() {
    std::unordered_set<const CallNode*> in_loop;
    for (const TmaCopy& c : plan_.copies) in_loop.insert(c.call);
    for (const TmaCopy& c : plan_.preloads) in_loop.insert(c.call);
    for (const WgmmaGemm& g : plan_.gemms) in_loop.insert(g.call);
    for (const Use& u : uses_) {
      if (in_loop.count(u.call)) continue;
      std::string name = (*u.call->op.as<Op>())->name;
      std::string at = OpName(u.call) + Line(u.span);
      if (name == "tile_gemm") return at + " outside the T.Pipelined loop";
      if (name == "tile_reduce") reduces_ = true;
      if (name == "tile_atomic_add") {
        return at +
               ": atomic adds are not in the warp-specialized form yet (the SIMT form adds "
               "each thread's elements)";
      }
      for (size_t i = 0; i < 2 && i < u.call->args.size(); ++i) {
        auto r = AsTileRegion(u.call->args[i]);
        if (r && IsShared(r->buffer))
          return at + " uses shared tile " + std::string(r->buffer->name);
        if (r && IsFragment(r->buffer) && !Whole(*r)) return at + " on part of a fragment";
      }
    }
    // The buffer[starts] of each tile operand is a load in the IR, not an access.
    std::unordered_set<const Object*> operands;
    for (const Use& u : uses_) {
      PostOrderVisit(GetRef<PrimExpr>(u.call),
                     [&](const ObjectRef& n) { operands.insert(n.get()); });
    }
    std::string bad;
    PostOrderVisit(body_, [&](const ObjectRef& n) {
      if (operands.count(n.get())) return;
      Buffer b;
      if (const auto* l = n.as<BufferLoadNode>()) b = l->buffer;
      if (const auto* s = n.as<BufferStoreNode>()) b = s->buffer;
      if (b.defined() && IsShared(b) && bad.empty()) {
        bad = "shared tile " + std::string(b->name) + " is indexed directly";
      }
    });
    return bad;
  }

  // The wgmma layout flows through T.Parallel nests and fragment-to-fragment copies of one shape.
  std::string Propagate() {
    auto layout_of = [&](const Buffer& b) -> TileLayoutChoice* {
      for (TileLayoutChoice& c : plan_.layouts) {
        if (c.buffer->data.same_as(b->data)) return &c;
      }
      return nullptr;
    };
    for (int round = 0; round < 8; ++round) {
      bool changed = false;
      std::string bad;
      auto tie = [&](const Buffer& x, const Buffer& y, const std::string& at) {
        TileLayoutChoice* cx = layout_of(x);
        TileLayoutChoice* cy = layout_of(y);
        bool wx = cx && cx->kind == TileLayoutKind::kWgmma;
        bool wy = cy && cy->kind == TileLayoutKind::kWgmma;
        if (wx == wy) {
          if (wx && cx->n != cy->n && bad.empty()) {
            bad = "fragments " + std::string(x->name) + " (" + cx->why + ") and " +
                  std::string(y->name) + " (" + cy->why + ") meet " + at +
                  " with two wgmma layouts";
          }
          return;
        }
        const Buffer& to = wx ? y : x;
        TileLayoutChoice* from = wx ? cx : cy;
        TileLayoutChoice& c = Choice(to);
        c.kind = TileLayoutKind::kWgmma;
        c.n = from->n;
        c.why = "tied to " + std::string((wx ? x : y)->name) + " " + at;
        changed = true;
      };
      for (const Use& u : uses_) {
        if ((*u.call->op.as<Op>())->name != "tile_copy") continue;
        auto s = AsTileRegion(u.call->args[0]), d = AsTileRegion(u.call->args[1]);
        if (s && d && IsFragment(s->buffer) && IsFragment(d->buffer) &&
            ConstShape(s->buffer) == ConstShape(d->buffer)) {
          tie(s->buffer, d->buffer, "by " + OpName(u.call) + Line(u.span));
        }
      }
      ForEachNest([&](const ForNode* f, const std::vector<Var>& vars,
                      const std::vector<int64_t>& shape, const Stmt& inner) {
        std::vector<Buffer> own;
        PostOrderVisit(inner, [&](const ObjectRef& m) {
          Buffer b;
          Array<PrimExpr> idx;
          if (const auto* l = m.as<BufferLoadNode>()) b = l->buffer, idx = l->indices;
          if (const auto* s = m.as<BufferStoreNode>()) b = s->buffer, idx = s->indices;
          if (b.defined() && IsFragment(b) && ConstShape(b) == shape &&
              ByVars(idx, vars, vars.size())) {
            own.push_back(b);
          }
        });
        for (size_t i = 1; i < own.size(); ++i) {
          tie(own[0], own[i], "in the T.Parallel" + Line(f->span));
        }
      });
      if (!bad.empty()) return bad;
      if (!changed) break;
    }
    return "";
  }

  // Row statistics of the wgmma accumulators: a 1-D fragment of M values written by a T.reduce
  // over an accumulator's columns, or read as x[i] in a T.Parallel over an accumulator's (i, j);
  // then those tied to them by a fragment T.copy or a 1-D T.Parallel of the same shape.
  void PropagateRows() {
    auto kind_of = [&](const Buffer& b) {
      const TileLayoutChoice* c = plan_.Find(b);
      return c ? c->kind : TileLayoutKind::kReplicated;
    };
    bool changed = false;
    auto mark = [&](const Buffer& b, const std::string& why) {
      if (!IsFragment(b) || b->shape.size() != 1 || kind_of(b) == TileLayoutKind::kWgmmaRows) {
        return;
      }
      TileLayoutChoice& c = Choice(b);
      c.kind = TileLayoutKind::kWgmmaRows;
      c.why = why;
      changed = true;
    };
    int64_t m = 64 * (plan_.threads / 128);
    for (const Use& u : uses_) {
      if ((*u.call->op.as<Op>())->name != "tile_reduce") continue;
      auto src = AsTileRegion(u.call->args[0]), dst = AsTileRegion(u.call->args[1]);
      if (src && dst && kind_of(src->buffer) == TileLayoutKind::kWgmma &&
          ConstOf(u.call->args[3]) == 1 && ConstShape(dst->buffer) == std::vector<int64_t>{m}) {
        mark(dst->buffer,
             "rows of " + std::string(src->buffer->name) + " by " + OpName(u.call) + Line(u.span));
      }
    }
    ForEachNest([&](const ForNode* f, const std::vector<Var>& vars,
                    const std::vector<int64_t>& shape, const Stmt& inner) {
      if (shape.size() != 2 || shape[0] != m) return;
      bool led = false;
      PostOrderVisit(inner, [&](const ObjectRef& n) {
        Buffer b;
        if (const auto* l = n.as<BufferLoadNode>()) b = l->buffer;
        if (const auto* s = n.as<BufferStoreNode>()) b = s->buffer;
        led =
            led || (b.defined() && kind_of(b) == TileLayoutKind::kWgmma && ConstShape(b) == shape);
      });
      if (!led) return;
      PostOrderVisit(inner, [&](const ObjectRef& n) {
        const auto* l = n.as<BufferLoadNode>();
        if (l && l->indices.size() == 1 && l->indices[0].same_as(vars[0])) {
          mark(l->buffer, "read by rows in the T.Parallel" + Line(f->span));
        }
      });
    });
    for (int round = 0; round < 8; ++round) {
      changed = false;
      for (const Use& u : uses_) {
        if ((*u.call->op.as<Op>())->name != "tile_copy") continue;
        auto s = AsTileRegion(u.call->args[0]), d = AsTileRegion(u.call->args[1]);
        if (!s || !d) continue;
        std::string at = "tied to a row statistic by " + OpName(u.call) + Line(u.span);
        if (kind_of(s->buffer) == TileLayoutKind::kWgmmaRows) mark(d->buffer, at);
        if (kind_of(d->buffer) == TileLayoutKind::kWgmmaRows) mark(s->buffer, at);
      }
      ForEachNest([&](const ForNode* f, const std::vector<Var>& vars,
                      const std::vector<int64_t>& shape, const Stmt& inner) {
        if (shape != std::vector<int64_t>{m}) return;
        std::vector<Buffer> own;
        bool rows = false;
        PostOrderVisit(inner, [&](const ObjectRef& n) {
          Buffer b;
          Array<PrimExpr> idx;
          if (const auto* l = n.as<BufferLoadNode>()) b = l->buffer, idx = l->indices;
          if (const auto* s = n.as<BufferStoreNode>()) b = s->buffer, idx = s->indices;
          if (!b.defined() || !IsFragment(b) || !ByVars(idx, vars, 1)) return;
          own.push_back(b);
          rows = rows || kind_of(b) == TileLayoutKind::kWgmmaRows;
        });
        if (!rows) return;
        for (const Buffer& b : own)
          mark(b, "tied to a row statistic in the T.Parallel" + Line(f->span));
      });
      if (!changed) break;
    }
  }

  const ForNode* kernel_;
  std::string arch_;
  TileKernelPlan plan_;
  Stmt body_;
  std::vector<Buffer> tiles_;
  std::vector<Use> uses_;
  bool reduces_ = false;  // a T.reduce outside the T.Pipelined loop
};

}  // namespace

// Replicated: the destinations of reductions; then a fragment a T.Parallel nest reads or
// writes other than as its own element (a row statistic rescale[i] in a (128, 64) nest); every
// fragment of a nest that writes a replicated one (such a nest runs whole on every thread, so
// what it reads must be everywhere); and the source of a copy into a replicated fragment.
std::unordered_set<const VarNode*> ReplicatedFragments(const Stmt& body,
                                                       const std::vector<Buffer>& fragments) {
  std::unordered_set<const VarNode*> out;
  std::unordered_set<const VarNode*>* replicated = &out;
  std::unordered_map<const VarNode*, std::vector<int64_t>> shape_of;
  for (const Buffer& b : fragments) {
    std::vector<int64_t> shape;
    for (const PrimExpr& e : b->shape) shape.push_back(ConstOf(e));
    shape_of[b->data.get()] = shape;
  }
  PostOrderVisit(body, [&](const ObjectRef& n) {
    const auto* call = n.as<CallNode>();
    auto op = call ? call->op.as<Op>() : std::nullopt;
    if (op && (*op)->name == "tile_reduce" && call->args.size() > 1) {
      if (auto r = AsTileRegion(call->args[1])) out.insert(r->buffer->data.get());
    }
  });
  std::vector<const ForNode*> nests;
  std::unordered_set<const ForNode*> inner;
  PostOrderVisit(body, [&](const ObjectRef& n) {
    const auto* f = n.as<ForNode>();
    if (!f || !f->annotations.count("tessel.tile_parallel")) return;
    nests.push_back(f);
    if (const auto* g = f->body.as<ForNode>(); g && g->annotations.count("tessel.tile_parallel")) {
      inner.insert(g);
    }
  });
  for (bool changed = true; changed;) {
    changed = false;
    auto mark = [&](const VarNode* v) {
      if (shape_of.count(v) && replicated->insert(v).second) changed = true;
    };
    for (const ForNode* f : nests) {
      if (inner.count(f)) continue;
      std::vector<const VarNode*> vars;
      std::vector<int64_t> shape;
      const ForNode* l = f;
      Stmt nest_body;
      while (true) {
        vars.push_back(l->loop_var.get());
        shape.push_back(ConstOf(l->extent));
        const auto* g = l->body.as<ForNode>();
        if (!g || !g->annotations.count("tessel.tile_parallel")) {
          nest_body = l->body;
          break;
        }
        l = g;
      }
      std::vector<const VarNode*> touched;
      bool writes_replicated = false;
      PostOrderVisit(nest_body, [&](const ObjectRef& n) {
        Buffer b;
        Array<PrimExpr> idx;
        bool store = false;
        if (const auto* ld = n.as<BufferLoadNode>()) b = ld->buffer, idx = ld->indices;
        if (const auto* st = n.as<BufferStoreNode>())
          b = st->buffer, idx = st->indices, store = true;
        if (!b.defined() || !shape_of.count(b->data.get())) return;
        const VarNode* v = b->data.get();
        touched.push_back(v);
        if (store && replicated->count(v)) writes_replicated = true;
        bool own = shape_of[v] == shape && idx.size() == vars.size();
        for (size_t d = 0; own && d < idx.size(); ++d) own = idx[d].get() == vars[d];
        if (!own) mark(v);
      });
      if (writes_replicated) {
        for (const VarNode* v : touched) mark(v);
      }
    }
    PostOrderVisit(body, [&](const ObjectRef& n) {
      const auto* call = n.as<CallNode>();
      auto op = call ? call->op.as<Op>() : std::nullopt;
      if (!op || (*op)->name != "tile_copy") return;
      auto src = AsTileRegion(call->args[0]), dst = AsTileRegion(call->args[1]);
      if (src && dst && replicated->count(dst->buffer->data.get())) mark(src->buffer->data.get());
    });
  }
  return out;
}

std::string TileLayoutChoice::Text() const {
  std::string out;
  switch (kind) {
    case TileLayoutKind::kSpread:
      out = "spread over the threads, in vectors dealt round-robin";
      break;
    case TileLayoutKind::kReplicated:
      out = "replicated in every thread";
      break;
    case TileLayoutKind::kWgmma:
      out = "wgmma accumulator m64n" + std::to_string(n) + " (warpgroup w: rows 64w..64w+63)";
      break;
    case TileLayoutKind::kWgmmaRows:
      out = "one value per wgmma accumulator row, in the row's four threads";
      break;
    case TileLayoutKind::kMma:
      out = grid;
      break;
    case TileLayoutKind::kSwizzled:
      out = std::to_string(swizzle_bytes) + "-byte swizzle";
      break;
    case TileLayoutKind::kPlain:
      out = "row-major";
      break;
  }
  return why.empty() ? out : out + ": " + why;
}

const TileLayoutChoice* TileKernelPlan::Find(const Buffer& b) const {
  for (const TileLayoutChoice& c : layouts) {
    if (c.buffer->data.same_as(b->data)) return &c;
  }
  return nullptr;
}

TileKernelPlan PlanTileKernel(const ForNode* kernel, const std::string& arch) {
  return Planner(kernel, arch).Run();
}

Map<String, Any> DescribePlan(const TileKernelPlan& plan) {
  Map<String, Any> out;
  std::string text;
  if (plan.warp_specialized) {
    text = "warp-specialized: " + std::to_string(plan.threads / 128) +
           " consumer warpgroup(s) run wgmma, a producer warpgroup issues TMA into " +
           std::to_string(plan.stages) + " stages";
    if (plan.fused) {
      if (plan.late_gemm) {
        text += "; fused: the consumers run the loop's statements in order, its last T.gemm" +
                Line(plan.late_gemm->span) +
                " one iteration late, beside the next iteration's statements up to " +
                (plan.late_wait ? "the one" + Line(plan.late_wait->span) : std::string("it")) +
                ", the others to completion";
      } else {
        text +=
            "; fused: the consumers run the loop's statements in order, each T.gemm to "
            "completion";
      }
      if (!plan.preloads.empty()) {
        text += ", after " + std::to_string(plan.preloads.size()) + " tile(s) loaded once";
      }
      if (plan.split) {
        std::string lines;
        for (const StmtNode* s : plan.split->where)
          lines += (lines.empty() ? "" : ",") + Line(s->span);
        text += "; iterations " + std::string(plan.pipelined->loop_var->name_hint) + " < " +
                AsText(plan.split->before) + " leave out the T.if_then_else(s) of the T.Parallel" +
                lines + " (their conditions hold for every element there)";
      }
    }
  } else {
    text = "SIMT: " + plan.why_not;
  }
  out.Set("tessel.tile_plan", String(text));
  Map<String, Any> layouts;
  for (const TileLayoutChoice& c : plan.layouts) layouts.Set(c.buffer->name, String(c.Text()));
  out.Set("tessel.tile_layouts", layouts);
  return out;
}

Array<PrimExpr> WgmmaElement(const PrimExpr& thread, const PrimExpr& local) {
  PrimExpr w = floordiv(thread, Int32(128)), t = floormod(thread, Int32(128));
  PrimExpr row = add(add(add(mul(w, Int32(64)), mul(floordiv(t, Int32(32)), Int32(16))),
                         floordiv(floormod(t, Int32(32)), Int32(4))),
                     mul(floormod(floordiv(local, Int32(2)), Int32(2)), Int32(8)));
  PrimExpr col =
      add(add(mul(floordiv(local, Int32(4)), Int32(8)), mul(floormod(t, Int32(4)), Int32(2))),
          floormod(local, Int32(2)));
  return {row, col};
}

PrimExpr WgmmaRow(const PrimExpr& thread, const PrimExpr& local) {
  return WgmmaElement(thread, mul(local, Int32(2)))[0];
}

// For tests: WgmmaElement at one (thread, register), and the plan of each T.Kernel of a function
// as its annotations.
TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef().def(
      "tessel.tile.WgmmaElement", [](int64_t thread, int64_t local) {
        Var t("t"), r("r");
        Array<PrimExpr> at = WgmmaElement(t, r);
        std::unordered_map<const VarNode*, int64_t> env{{t.get(), thread}, {r.get(), local}};
        return Array<int64_t>{*arith::EvalInt(at[0], env), *arith::EvalInt(at[1], env)};
      });
}

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel
