// The warp-specialized lowering of a tile kernel on Hopper (sm_90a), for kernels whose plan
// (src/transform/tile_layout_inference.h) allows it: the shape of examples/gemm_hopper.py, made
// from T.copy / T.gemm / T.Pipelined.
//
// The block runs the kernel's n threads (one or two warpgroups) as consumers and one more
// warpgroup as producer (threads n .. n + 127). The shared tiles the T.Pipelined loop copies into
// become rings of `stages` copies (each stage rounded to 1024 bytes, the 128-byte swizzle's atom,
// so every stage starts aligned), written by TMA with the swizzle their wgmma descriptors name.
// Per stage, a "full" mbarrier (one arrival plus the TMA bytes) and an "empty" one (one arrival per
// consumer warp); in the fused form a pair per copy and stage, otherwise one pair for all the
// copies of a stage. Iteration i of the loop uses stage i % stages in phase (i / stages) % 2:
// - producer (one thread): waits until the consumers released the stage, announces the bytes of
//   its boxes, and issues the TMA loads (out-of-range elements arrive as zeros, and count);
// - consumers: wait for the stage, run each T.gemm as wgmma m64nNk16 steps (warpgroup w takes rows
//   64w .. 64w + 63 of A), commit, and keep one wgmma group in flight: the stage of the previous
//   iteration is released once its group has completed (wait_group 1), the last after the loop.
//   In the fused form the consumers run the loop's statements instead (FusedConsumerLoop), a
//   late gemm one iteration behind (plan.late_gemm), two warpgroups taking turns to issue.
// The statements before and after the loop run on the consumers only, over fragments in their
// planned layouts (the wgmma accumulator: register r of thread t is WgmmaElement(t, r);
// replicated fragments: every consumer holds all of it). The mbarriers order every shared access,
// so the kernel is marked for InjectSharedBarriers to leave alone. A persistent kernel
// (Persistence) wraps both roles in the same walk over the tiles; tests/python/hopper_protocol.py
// checks the protocol of the result on the CPU.
#include <tessel/ir/substitute.h>
#include <tessel/transform/inject_shared_barriers.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "transform/tile_layout_inference.h"
#include "transform/tile_loop_split.h"
#include "transform/tile_lowering.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

namespace {

Stmt Intrin(const char* name, Array<PrimExpr> args) {
  return Evaluate(Call(DataType::Int(32), Op::Get(name), std::move(args)));
}

PrimExpr AddressOf(const Buffer& b, const PrimExpr& index) {
  return Call(DataType::Handle(), builtin::address_of(), {BufferLoad(b, {index})});
}

class Hopper : public TileLowering {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Hopper(const TileKernelPlan& plan, std::string function, Persistent mode)
      : TileLowering(std::move(function)), plan_(plan), mode_(mode) {}

  Stmt Lower(const ForNode* kernel) {
    std::vector<const ForNode*> blocks{kernel};
    Stmt body = kernel->body;
    while (const auto* b = body.as<ForNode>()) {
      if (b->kind != ForKind::kThreadBinding) break;
      blocks.push_back(b);
      body = b->body;
    }
    for (const ForNode* b : blocks) analyzer_.Bind(b->loop_var, Range(b->min, b->extent), true);
    std::vector<Stmt> inner;  // declarations that are not tiles, kept inside the thread loop
    while (true) {
      if (const auto* a = body.as<AllocateNode>()) {
        std::string scope = a->buffer_var->storage_scope;
        if (scope != "local.fragment" && scope != "shared" && scope != "shared.dyn") {
          inner.push_back(body);
        }
        body = a->body;
      } else if (const auto* d = body.as<DeclBufferNode>()) {
        if (const TileLayoutChoice* c = plan_.Find(d->buffer)) {
          if (d->buffer->scope == "local.fragment") AddFragment(d->buffer, *c);
        } else {
          inner.push_back(body);
        }
        body = d->body;
      } else {
        break;
      }
    }
    FindDirectPacks(body);
    consumers_ = plan_.threads;
    tx_ = Var("tx");
    analyzer_.Bind(tx_, Range(Int32(0), Int32(consumers_ + 128)), true);
    MakeRings();

    std::vector<Stmt> pre, post;
    bool after = false;
    for (const Stmt& s : FlattenSeq(body)) {
      if (s.get() == plan_.pipelined) {
        after = true;
      } else {
        (after ? post : pre).push_back(s);
      }
    }
    Persistence(blocks);
    MakeBars();
    std::vector<Stmt> consumer;
    // The producer needs few registers; the consumers take the rest of the 64K (FA3's split).
    if (plan_.threads >= 256) {
      consumer.push_back(Intrin("ptx_setmaxnreg_inc", {Int32(plan_.threads == 256 ? 232 : 160)}));
    }
    // The consumer's warpgroup, broadcast from lane 0 so that ptxas knows it is the same in the
    // whole warp: the wgmma descriptors computed from it then live in uniform registers instead
    // of being moved into them before each wgmma.
    wg_ = Var("wg");
    analyzer_.Bind(wg_, Range(Int32(0), Int32(consumers_ / 128)), true);
    {
      // Consumers only: their thread index is below n.
      analyzer_.Bind(tx_, Range(Int32(0), Int32(consumers_)), true);
      std::vector<Stmt> tile;
      tile_i_ = Var("tile_i");
      for (const Stmt& s : pre) tile.push_back(VisitStmt(s));
      tile.push_back(ConsumerLoop());
      if (ReloadsPreloads()) {
        // The loop's gemms have completed: the producer may load the next tile's preloads.
        tile.push_back(IfThenElse(EQ(floormod(tx_, Int32(32)), Int32(0)),
                                  Intrin("ptx_mbarrier_arrive", {PreloadEmptyBar()})));
      }
      for (const Stmt& s : post) tile.push_back(VisitStmt(s));
      std::vector<Stmt> walk;
      if (persistent_ && pingpong_start_.defined()) walk.push_back(pingpong_start_);
      walk.push_back(persistent_ ? TileWalk(Seq(tile), {}, tile_i_) : Seq(tile));
      consumer.push_back(LetStmt(wg_,
                                 Call(DataType::Int(32), builtin::shfl_sync(),
                                      {floordiv(tx_, Int32(128)), Int32(0), Int32(32)}),
                                 Seq(walk)));
      if (stored_) {
        // The last stores must have read the staging tile before the block's shared memory goes.
        consumer.push_back(IfThenElse(EQ(floormod(tx_, Int32(128)), Int32(0)),
                                      Intrin("ptx_tma_store_wait_group", {Int32(0)})));
      }
    }
    std::vector<Stmt> producer;
    if (plan_.threads >= 256) {
      producer.push_back(Intrin("ptx_setmaxnreg_dec", {Int32(plan_.threads == 256 ? 40 : 24)}));
    }
    {
      // The producer binds its own copies of the block variables (each is bound once).
      VarMap own;
      for (const ForNode* b : blocks) {
        own[b->loop_var.get()] = Var(tvm::ffi::make_object<VarNode>(*b->loop_var.get()));
      }
      tile_i_ = Var("tile_i");
      VarMap mine = persistent_ ? own : VarMap{};
      Stmt loads = ProducerLoop(mine);
      if (!plan_.preloads.empty()) loads = SeqStmt::Flatten(Array<Stmt>{Preloads(mine), loads});
      producer.push_back(IfThenElse(EQ(tx_, Int32(consumers_)),
                                    persistent_ ? TileWalk(loads, own, tile_i_) : loads));
    }

    std::vector<Stmt> init;
    for (int64_t g = 0; g < Groups(); ++g) {
      for (int64_t s = 0; s < plan_.stages; ++s) {
        init.push_back(Intrin("ptx_mbarrier_init", {FullBar(g, Int32(s)), Int32(1)}));
        init.push_back(
            Intrin("ptx_mbarrier_init", {EmptyBar(g, Int32(s)), Int32(consumers_ / 32)}));
      }
    }
    init.push_back(Intrin("ptx_mbarrier_init", {PreloadBar(), Int32(1)}));
    if (ReloadsPreloads()) {
      init.push_back(Intrin("ptx_mbarrier_init", {PreloadEmptyBar(), Int32(consumers_ / 32)}));
    }
    init.push_back(Intrin("ptx_fence_mbarrier_init", {}));
    Stmt threads_body = SeqStmt::Flatten(Array<Stmt>{
        IfThenElse(EQ(tx_, Int32(0)), Seq(init)),
        Evaluate(Call(DataType::Int(32), builtin::tvm_storage_sync(), {StringImm("shared")})),
        IfThenElse(GE(tx_, Int32(consumers_)), Seq(producer), Seq(consumer))});
    // In the order they were made, not the maps' (pointer) order: the same program must give
    // the same source, or the build cache never hits.
    for (const VarNode* data : frag_order_) {
      const Frag& f = frags_.at(data);
      threads_body = Allocate(f.local->data, f.local->dtype, {f.local->shape[0]},
                              MakeConst(DataType::Bool(), 1), DeclBuffer(f.local, threads_body));
    }
    for (const VarNode* data : pack_order_) {
      const Buffer& p = packs_.at(data);
      threads_body = Allocate(p->data, p->dtype, {p->shape[0]}, MakeConst(DataType::Bool(), 1),
                              DeclBuffer(p, threads_body));
    }
    if (running_) {
      threads_body = Allocate(ring_iter_->data, ring_iter_->dtype, {Int32(1)},
                              MakeConst(DataType::Bool(), 1), DeclBuffer(ring_iter_, threads_body));
    }
    for (auto it = inner.rbegin(); it != inner.rend(); ++it)
      threads_body = WithBody(*it, threads_body);
    Stmt s = For(tx_, Int32(0), Int32(consumers_ + 128), ForKind::kThreadBinding, threads_body,
                 "threadIdx.x");
    s = Allocate(bars_->data, bars_->dtype, bars_->shape, MakeConst(DataType::Bool(), 1),
                 DeclBuffer(bars_, s));
    if (staging_.defined()) {
      Map<String, Any> ann;
      ann.Set("tessel.swizzle_bytes", 128);
      if (staging_pairs_.defined()) s = DeclBuffer(staging_pairs_, s);
      s = Allocate(staging_->data, staging_->dtype, staging_->shape, MakeConst(DataType::Bool(), 1),
                   DeclBuffer(staging_, s), ann);
    }
    for (auto& [data, r] : rings_) {
      Map<String, Any> ann;
      ann.Set("tessel.swizzle_bytes", r.swizzle);
      s = Allocate(r.ring->data, r.ring->dtype, r.ring->shape, MakeConst(DataType::Bool(), 1),
                   DeclBuffer(r.ring, s), ann);
    }
    // The mbarriers and the thread split order every shared access of this kernel.
    s = AttrStmt(Int32(0), kManualSharedSyncAttr, Int32(1), s);
    if (persistent_) {
      Map<String, Any> ann = kernel->annotations;
      ann.erase("tessel.tile_kernel");
      for (const auto& [k, v] : DescribePlan(plan_)) ann.Set(k, v);
      std::string how = "; persistent: at most " + std::to_string(kPersistentBlocks) +
                        " blocks walk the " + std::to_string(blocks.size()) + "-D grid's tiles";
      if (running_) how += ", stages counted across tiles of different trip counts";
      if (ReloadsPreloads()) how += ", the preloaded tiles reloaded per tile";
      ann.Set("tessel.tile_plan", String(ann.Get("tessel.tile_plan")->cast<String>() + how));
      return WithSpan(For(bid_, Int32(0), grid_, ForKind::kThreadBinding, s, "blockIdx.x", ann),
                      kernel->span);
    }
    for (size_t i = blocks.size(); i-- > 0;) {
      Map<String, Any> ann = blocks[i]->annotations;
      ann.erase("tessel.tile_kernel");
      if (i == 0) {
        for (const auto& [k, v] : DescribePlan(plan_)) ann.Set(k, v);
      }
      s = WithSpan(For(blocks[i]->loop_var, blocks[i]->min, blocks[i]->extent, blocks[i]->kind, s,
                       blocks[i]->thread_tag, ann),
                   blocks[i]->span);
    }
    return s;
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    const CallNode* call = TileCall(GetRef<Stmt>(op));
    return call ? LowerTileCall(op, call) : StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->annotations.count("tessel.tile_parallel")) return Parallel(op);
    analyzer_.Bind(op->loop_var, Range(op->min, op->extent), true);
    return StmtExprMutator::VisitStmt_(op);
  }

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    const Frag* f = FragOf(op->buffer);
    if (!f) return StmtExprMutator::VisitExpr_(op);
    return BufferLoad(f->local, {Flat(*f, VisitArray(op->indices))});
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    const Frag* f = FragOf(op->buffer);
    if (!f) return StmtExprMutator::VisitStmt_(op);
    return WithSpan(
        BufferStore(f->local, VisitExpr(op->value), {Flat(*f, VisitArray(op->indices))}), op->span);
  }

 private:
  struct Frag {
    Buffer logical, local;
    std::vector<int64_t> shape;
    int64_t size = 0;
    bool wgmma = false;
    bool rows = false;  // kWgmmaRows: register h is row WgmmaRow(tx, h)
  };
  // The stages of a TMA-copied tile: `stages` copies of stage_elems elements, each `blocks`
  // column blocks of rows x block_cols.
  struct Ring {
    Buffer ring;
    int64_t stage_elems = 0, tile_bytes = 0, swizzle = 0;
    int64_t rows = 0, block_cols = 0, blocks = 1;
    bool preload = false;  // loaded once, before the loop (one stage)
  };

  [[noreturn]] void FailAt(const std::string& what) const {
    TVM_FFI_THROW(ValueError) << "LowerTileOps: function '" << function_ << "': " << what;
    TVM_FFI_UNREACHABLE();
  }

  static Stmt Seq(const std::vector<Stmt>& v) {
    return SeqStmt::Flatten(Array<Stmt>(v.begin(), v.end()));
  }

  void AddFragment(const Buffer& b, const TileLayoutChoice& c) {
    Frag f;
    f.logical = b;
    f.size = 1;
    for (const PrimExpr& e : b->shape) {
      f.shape.push_back(ConstOf(e));
      f.size *= f.shape.back();
    }
    f.wgmma = c.kind == TileLayoutKind::kWgmma;
    f.rows = c.kind == TileLayoutKind::kWgmmaRows;
    int64_t regs = f.wgmma ? c.n / 2 : f.rows ? 2 : f.size;
    f.local = MakeBuffer(std::string(b->name) + "_local", b->dtype, {Int32(regs)}, "local");
    if (!frags_.count(b->data.get())) frag_order_.push_back(b->data.get());
    frags_[b->data.get()] = f;
  }

  const Frag* FragOf(const Buffer& b) const {
    auto it = frags_.find(b->data.get());
    return it == frags_.end() ? nullptr : &it->second;
  }

  PrimExpr Flat(const Frag& f, const Array<PrimExpr>& idx) {
    if (f.wgmma || f.rows) {
      FailAt("fragment " + std::string(f.logical->name) +
             " is a wgmma accumulator spread over the warpgroups; index it inside T.Parallel over "
             "its shape, by the loop variables themselves, or through tile operations");
    }
    return tile_lowering::Flat(f.shape, idx);
  }

  void MakeRings() {
    for (const std::vector<TmaCopy>* copies : {&plan_.copies, &plan_.preloads}) {
      for (const TmaCopy& c : *copies) {
        Ring r;
        r.preload = copies == &plan_.preloads;
        r.rows = c.rows;
        r.block_cols = c.block_cols;
        r.blocks = c.blocks;
        int64_t bytes = c.dst->dtype.bytes();
        r.tile_bytes = c.rows * c.block_cols * c.blocks * bytes;
        r.stage_elems = (r.tile_bytes + 1023) / 1024 * 1024 / bytes;
        r.swizzle = plan_.Find(c.dst)->swizzle_bytes;
        r.ring =
            MakeBuffer(std::string(c.dst->name) + (r.preload ? "_tile" : "_ring"), c.dst->dtype,
                       {Int32(r.stage_elems * (r.preload ? 1 : plan_.stages))}, "shared.dyn");
        rings_.emplace_back(c.dst->data.get(), r);
      }
    }
    // The fused form gives each copy its own barriers, so that the consumers wait for a tile
    // where they first read it and release it after its last reader (attention's V is read a
    // whole softmax later than its K); otherwise every gemm of an iteration reads every tile.
    if (plan_.fused) {
      for (const TmaCopy& c : plan_.copies) groups_.push_back({&c});
    }
    if (groups_.empty()) {
      groups_.emplace_back();
      for (const TmaCopy& c : plan_.copies) groups_.back().push_back(&c);
    }
  }

  // Full and empty barriers per group and stage, then a full one for the preloaded tiles and, in
  // a persistent walk that reloads them per tile, an empty one.
  void MakeBars() {
    bars_ =
        MakeBuffer("tile_bars", DataType::UInt(64),
                   {Int32(2 * Groups() * plan_.stages + (ReloadsPreloads() ? 2 : 1))}, "shared");
  }
  bool ReloadsPreloads() const { return persistent_ && !plan_.preloads.empty(); }

  int64_t Groups() const { return static_cast<int64_t>(groups_.size()); }
  PrimExpr FullBar(int64_t g, const PrimExpr& s) const {
    return AddressOf(bars_, add(Int32(g * plan_.stages), s));
  }
  PrimExpr EmptyBar(int64_t g, const PrimExpr& s) const {
    return AddressOf(bars_, add(Int32((Groups() + g) * plan_.stages), s));
  }
  PrimExpr PreloadBar() const { return AddressOf(bars_, Int32(2 * Groups() * plan_.stages)); }
  PrimExpr PreloadEmptyBar() const {
    return AddressOf(bars_, Int32(2 * Groups() * plan_.stages + 1));
  }

  // The TMA loads of copy `c` into stage `stage_at` (an element offset) of its ring, block by
  // block, coordinates through `to_ko`.
  std::vector<Stmt> TmaLoads(const TmaCopy& c, const PrimExpr& stage_at, const PrimExpr& bar,
                             const VarMap& to_ko) {
    const Ring& r = RingOf(c.dst);
    const Buffer& t = c.src.buffer;
    size_t rank = t->shape.size();
    Array<PrimExpr> desc{StringImm(t->dtype.str()), Int32(r.swizzle), PrimExpr(t->data)};
    for (const PrimExpr& d : t->shape) desc.push_back(d);
    if (t->strides.empty()) {
      // Compact: the stride of each dimension is the product of the ones inside it.
      std::vector<PrimExpr> strides(rank);
      strides[rank - 1] = MakeConst(t->shape[rank - 1].dtype(), 1);
      for (size_t d = rank - 1; d-- > 0;) strides[d] = mul(strides[d + 1], t->shape[d + 1]);
      for (const PrimExpr& st : strides) desc.push_back(st);
    } else {
      for (const PrimExpr& st : t->strides) desc.push_back(st);
    }
    for (size_t d = 0; d + 2 < rank; ++d) desc.push_back(Int32(1));
    desc.push_back(Int32(r.rows));
    desc.push_back(Int32(r.block_cols));
    PrimExpr map = Call(DataType::Handle(), Op::Get("tma_descriptor"), desc);
    std::vector<Stmt> out;
    for (int64_t b = 0; b < r.blocks; ++b) {
      Array<PrimExpr> args{AddressOf(r.ring, add(stage_at, Int32(b * r.rows * r.block_cols))), map,
                           bar};
      for (size_t d = 0; d < rank; ++d) {
        PrimExpr st = Substitute(c.src.starts[d], to_ko);
        if (d + 1 == rank && b > 0) st = add(st, MakeConst(st.dtype(), b * r.block_cols));
        args.push_back(st);
      }
      out.push_back(Intrin("ptx_tma_load", args));
    }
    return out;
  }

  const Ring& RingOf(const Buffer& b) const {
    for (const auto& [data, r] : rings_) {
      if (data == b->data.get()) return r;
    }
    FailAt("no ring for shared tile " + std::string(b->name));
  }

  // Persistent (see Persistent) when the grid is blockIdx.x (.y, .z) from 0: kPersistentBlocks
  // blocks then walk the tiles, so that the producer loads the next tile while the consumers
  // finish the last one and no wave is left part-empty. By default only a plain pipelined kernel
  // of at most two grid dimensions whose loop has the same trip count for every tile; with kOn
  // also a fused one, three dimensions, and trip counts that vary by tile, the stage and phase
  // then counted by a running iteration (ring_iter_) in each role.
  void Persistence(const std::vector<const ForNode*>& blocks) {
    static const char* const kTags[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
    if (mode_ == Persistent::kOff || (plan_.fused && mode_ != Persistent::kOn)) return;
    bool on = mode_ == Persistent::kOn;
    std::unordered_set<const VarNode*> block_vars;
    bool ok = blocks.size() <= (on ? 3u : 2u);
    for (size_t i = 0; ok && i < blocks.size(); ++i) {
      ok = ConstOf(blocks[i]->min) == 0 && std::string(blocks[i]->thread_tag) == kTags[i];
      block_vars.insert(blocks[i]->loop_var.get());
    }
    bool varies = false;
    for (const PrimExpr& e : {plan_.pipelined->extent, plan_.pipelined->min}) {
      PostOrderVisit(e, [&](const ObjectRef& n) {
        if (block_vars.count(static_cast<const VarNode*>(n.get()))) varies = true;
      });
    }
    if (varies && !on) ok = false;
    persistent_ = ok;
    if (!ok) return;
    running_ = varies;
    if (running_) ring_iter_ = MakeBuffer("ring_iter", DataType::Int(32), {Int32(1)}, "local");
    blocks_ = blocks;
    auto extent = [&](size_t i) {
      return i < blocks.size() ? cast(DataType::Int(32), blocks[i]->extent) : PrimExpr(Int32(1));
    };
    gx_ = extent(0);
    gy_ = extent(1);
    gz_ = extent(2);
    grid_ = min(mul(mul(gx_, gy_), gz_), Int32(kPersistentBlocks));
    bid_ = Var("bid");
  }

  // for i in [0, my tiles): t = bid + i * grid; (bx, by) of tile t; body. Tiles go in groups of 8
  // rows of blocks (blockIdx.y), 8 consecutive blocks sharing a column (blockIdx.x): in L2
  // together. With three grid dimensions, t is (bx, by, bz) with bx fastest, so that the blocks
  // of one wave share a few (by, bz), attention's heads, and with them their keys and values in
  // L2; bx runs down in even heads and up in odd ones. In order, a block's bx would be fixed modulo
  // gcd(grid, gx) (4 for 132 blocks and 32 row tiles), and under a causal mask, whose work grows
  // with bx, the busiest block would do 12% more than the mean (20% at 16 row tiles; a model of
  // the walk, not a measurement); alternating, 3%.
  // `own`: the block variables to bind instead of the kernel's. With trip counts that vary by tile,
  // the walk also keeps the role's running iteration: 0 before the first tile, each tile's trip
  // count added after it.
  Stmt TileWalk(const Stmt& tile, const VarMap& own, const Var& i) {
    PrimExpr total = mul(mul(gx_, gy_), gz_);
    PrimExpr mine = floordiv(sub(add(total, grid_), add(bid_, Int32(1))), grid_);
    PrimExpr t = add(bid_, mul(i, grid_));
    PrimExpr group = mul(gx_, Int32(8));
    PrimExpr first = mul(floordiv(t, group), Int32(8));
    PrimExpr rows = min(sub(gy_, first), Int32(8));
    PrimExpr y = add(first, floormod(floormod(t, group), rows));
    PrimExpr x = floordiv(floormod(t, group), rows);
    auto var = [&](const ForNode* b) {
      auto it = own.find(b->loop_var.get());
      return it == own.end()            ? b->loop_var
             : it->second.as<VarNode>() ? GetRef<Var>(it->second.as<VarNode>())
                                        : b->loop_var;
    };
    Stmt s = tile;
    if (running_) {
      PrimExpr n = cast(DataType::Int(32), Substitute(plan_.pipelined->extent, own));
      s = SeqStmt::Flatten(Array<Stmt>{
          s, BufferStore(ring_iter_, add(BufferLoad(ring_iter_, {Int32(0)}), max(n, Int32(0))),
                         {Int32(0)})});
    }
    if (blocks_.size() == 3) {
      PrimExpr j = floormod(t, gx_), h = floordiv(t, gx_);
      x = Select(EQ(floormod(h, Int32(2)), Int32(0)), sub(sub(gx_, Int32(1)), j), j);
      y = floormod(h, gy_);
      PrimExpr z = floordiv(h, gy_);
      s = LetStmt(var(blocks_[2]), cast(blocks_[2]->loop_var.dtype(), z), s);
    }
    if (blocks_.size() > 1) s = LetStmt(var(blocks_[1]), cast(blocks_[1]->loop_var.dtype(), y), s);
    s = LetStmt(var(blocks_[0]), cast(blocks_[0]->loop_var.dtype(), blocks_.size() > 1 ? x : t), s);
    Stmt walk = For(i, Int32(0), mine, ForKind::kSerial, s);
    if (!running_) return walk;
    return SeqStmt::Flatten(Array<Stmt>{BufferStore(ring_iter_, Int32(0), {Int32(0)}), walk});
  }

  // The iteration (from 0 over the whole walk), its stage and its phase.
  PrimExpr Iter(const Var& ko) const {
    PrimExpr it = sub(ko, cast(ko.dtype(), plan_.pipelined->min));
    if (!persistent_) return it;
    if (running_) return add(cast(it.dtype(), BufferLoad(ring_iter_, {Int32(0)})), it);
    return add(mul(cast(it.dtype(), tile_i_), cast(it.dtype(), plan_.pipelined->extent)), it);
  }
  PrimExpr StageOf(const PrimExpr& it) const {
    return cast(DataType::Int(32), floormod(it, MakeConst(it.dtype(), plan_.stages)));
  }
  PrimExpr PhaseOf(const PrimExpr& it) const {
    return cast(DataType::Int(32), floormod(floordiv(it, MakeConst(it.dtype(), plan_.stages)),
                                            MakeConst(it.dtype(), 2)));
  }

  Stmt ProducerLoop(VarMap to_ko) {
    const ForNode* loop = plan_.pipelined;
    // The consumers' loop binds the loop's own variable; this one gets a fresh one.
    Var ko(tvm::ffi::make_object<VarNode>(*loop->loop_var.get()));
    to_ko[loop->loop_var.get()] = ko;
    // In the producer's own block variables (a persistent walk binds its own).
    PrimExpr it = Substitute(Iter(ko), to_ko), s = StageOf(it), phase = PhaseOf(it);
    std::vector<Stmt> body;
    for (int64_t g = 0; g < Groups(); ++g) {
      body.push_back(Intrin("ptx_mbarrier_wait", {EmptyBar(g, s), bitwise_xor(phase, Int32(1))}));
      int64_t bytes = 0;
      for (const TmaCopy* c : groups_[g]) bytes += RingOf(c->dst).tile_bytes;
      body.push_back(Intrin("ptx_mbarrier_arrive_expect_tx", {FullBar(g, s), Int32(bytes)}));
      for (const TmaCopy* c : groups_[g]) {
        for (Stmt& l :
             TmaLoads(*c, mul(s, Int32(RingOf(c->dst).stage_elems)), FullBar(g, s), to_ko)) {
          body.push_back(l);
        }
      }
    }
    return For(ko, Substitute(loop->min, to_ko), Substitute(loop->extent, to_ko), ForKind::kSerial,
               Seq(body));
  }

  // The wgmma steps of gemm `g` reading stage `s` of its rings (A from registers when it is a
  // fragment). clear_accum overwrites C at the first step of every call, as on every target.
  std::vector<Stmt> WgmmaSteps(const WgmmaGemm& g, const PrimExpr& s) {
    const Frag* fc = FragOf(g.c);
    std::string dtype = g.b->dtype.is_bfloat() ? "bf16" : "f16";
    auto base = [&](const Ring& r) {
      return r.preload ? PrimExpr(Int32(0)) : mul(s, Int32(r.stage_elems));
    };
    // The descriptor of element at + step of ring r: that of `at` plus the step in 16-byte units
    // when the swizzle provably leaves both where they are (at on a 1024-byte boundary, the
    // step less than 128 bytes past one), so that ptxas computes one descriptor per ring and
    // stage and adds constants, instead of masking and shifting each address (8 uniform
    // instructions a wgmma). The 14-bit address field cannot carry: shared addresses are below
    // 256 KB.
    auto desc = [&](const Ring& r, const PrimExpr& at, int64_t step, int64_t lbo, int64_t sbo) {
      int64_t bytes = r.ring->dtype.bytes();
      bool aligned = analyzer_.CanProve(EQ(floormod(mul(at, Int32(bytes)), Int32(1024)), Int32(0)));
      bool add_on = aligned && (step * bytes) % 1024 < 128 && (step * bytes) % 16 == 0;
      PrimExpr d = Call(DataType::UInt(64), Op::Get("ptx_wgmma_desc"),
                        {AddressOf(r.ring, add_on ? at : add(at, Int32(step))), Int32(lbo),
                         Int32(sbo), Int32(r.swizzle)});
      if (!add_on || step == 0) return d;
      return add(d, MakeConst(DataType::UInt(64), step * bytes / 16));
    };
    // A K-major tile (rows x K in column blocks): the 16 columns of step ks from row `row0`.
    auto k_major = [&](const Ring& r, const PrimExpr& row0, int64_t ks) {
      int64_t col = ks * 16, blk = col / r.block_cols, within = col % r.block_cols;
      PrimExpr at = add(base(r), mul(row0, Int32(r.block_cols)));
      return desc(r, at, blk * r.rows * r.block_cols + within, 16, 8 * r.swizzle);
    };
    std::vector<Stmt> out;
    PrimExpr w = wg_;
    for (int64_t ks = 0; ks < g.k / 16; ++ks) {
      PrimExpr scale = Int32(g.clear && ks == 0 ? 0 : 1);
      PrimExpr b;
      const Ring& rb = RingOf(g.b);
      if (g.b_mn) {
        // N-major B (K rows of N in 128-byte column blocks): the leading byte offset steps from
        // one block of 64 columns to the next, the stride offset from 8 rows to the next 8.
        int64_t bytes = g.b->dtype.bytes();
        b = desc(rb, base(rb), ks * 16 * rb.block_cols, rb.rows * rb.block_cols * bytes,
                 8 * rb.block_cols * bytes);
      } else {
        b = k_major(rb, Int32(0), ks);
      }
      std::string shape = "m64n" + std::to_string(g.n) + "k16";
      if (g.a_regs) {
        out.push_back(Intrin("ptx_wgmma_mma_async_rs",
                             {AddressOf(fc->local, Int32(0)), AddressOf(PackOf(g.a), Int32(4 * ks)),
                              b, scale, StringImm(shape), StringImm(dtype), Int32(g.b_mn)}));
      } else {
        PrimExpr a = k_major(RingOf(g.a), mul(w, Int32(64)), ks);
        out.push_back(Intrin("ptx_wgmma_mma_async",
                             {AddressOf(fc->local, Int32(0)), a, b, scale, StringImm(shape),
                              StringImm(dtype), Int32(0), Int32(g.b_mn)}));
      }
    }
    return out;
  }

  // The uint32 registers a gemm reads fragment `a` from: its 16-bit values packed in pairs.
  Buffer PackOf(const Buffer& a) {
    auto it = packs_.find(a->data.get());
    if (it != packs_.end()) return it->second;
    const Frag* f = FragOf(a);
    Buffer p = MakeBuffer(std::string(a->name) + "_pack", DataType::UInt(32),
                          {Int32(ConstOf(f->local->shape[0]) / 2)}, "local");
    packs_[a->data.get()] = p;
    pack_order_.push_back(a->data.get());
    return p;
  }

  // The 16-bit register A operands that only T.copy from a float32 fragment of the same layout
  // writes and only wgmma reads (attention's P): their copies convert straight into the packed
  // registers, two elements per cvt.rn.f16x2.f32, instead of converting each element and packing
  // the pairs before the gemm (three instructions for two elements).
  void FindDirectPacks(const Stmt& body) {
    std::unordered_set<const VarNode*> cand;
    for (const WgmmaGemm& g : plan_.gemms) {
      DataType t = g.a->dtype;
      if (g.a_regs && (t == DataType::Float(16) || t == DataType::BFloat(16)))
        cand.insert(g.a->data.get());
    }
    if (cand.empty()) return;
    std::unordered_set<const VarNode*> bad;
    std::function<void(const Stmt&)> walk = [&](const Stmt& st) {
      const CallNode* call = TileCall(st);
      if (!call) {
        if (const auto* seq = st.as<SeqStmtNode>()) {
          for (const Stmt& x : seq->seq) walk(x);
          return;
        }
        if (const auto* f = st.as<ForNode>(); f && !f->annotations.count("tessel.tile_parallel")) {
          walk(f->body);
          return;
        }
        PostOrderVisit(st, [&](const ObjectRef& n) {
          if (const auto* l = n.as<BufferLoadNode>()) bad.insert(l->buffer->data.get());
          if (const auto* w = n.as<BufferStoreNode>()) bad.insert(w->buffer->data.get());
        });
        return;
      }
      std::string name = (*call->op.as<Op>())->name;
      for (size_t i = 0; i < call->args.size(); ++i) {
        auto r = AsTileRegion(call->args[i]);
        if (!r || !cand.count(r->buffer->data.get())) continue;
        bool ok = name == "tile_gemm" && i == 0;
        if (name == "tile_copy" && i == 1) {
          auto src = AsTileRegion(call->args[0]);
          const Frag* fs = src ? FragOf(src->buffer) : nullptr;
          const Frag* fd = FragOf(r->buffer);
          ok = fs && fd && src->buffer->dtype == DataType::Float(32) && fs->wgmma && fd->wgmma &&
               fs->size == fd->size;
        }
        if (!ok) bad.insert(r->buffer->data.get());
      }
    };
    walk(body);
    for (const VarNode* v : cand) {
      if (!bad.count(v)) direct_packs_.insert(v);
    }
  }

  // Packs the A fragment of gemm `g` (if it reads one from registers), before its wgmma fence;
  // nothing when its copies wrote the packed registers (FindDirectPacks).
  Stmt Pack(const WgmmaGemm& g) {
    if (!g.a_regs || direct_packs_.count(g.a->data.get())) return Evaluate(Int32(0));
    const Frag* f = FragOf(g.a);
    Buffer p = PackOf(g.a);
    Var i("i");
    auto half = [&](const PrimExpr& at) {
      PrimExpr bits =
          Call(DataType::UInt(16), builtin::reinterpret(), {BufferLoad(f->local, {at})});
      return cast(DataType::UInt(32), bits);
    };
    PrimExpr v = bitwise_or(
        half(mul(i, Int32(2))),
        shift_left(half(add(mul(i, Int32(2)), Int32(1))), MakeConst(DataType::UInt(32), 16)));
    return For(i, Int32(0), Int32(ConstOf(p->shape[0])), ForKind::kUnrolled,
               BufferStore(p, v, {i}));
  }

  Stmt ConsumerLoop() { return plan_.fused ? FusedConsumerLoop() : PipelinedConsumerLoop(); }

  // Copies and gemms only: every gemm of an iteration in one wgmma group, one group in flight.
  Stmt PipelinedConsumerLoop() {
    const ForNode* loop = plan_.pipelined;
    Var ko = loop->loop_var;
    PrimExpr it = Iter(ko), s = StageOf(it), phase = PhaseOf(it);
    PrimExpr lane0 = EQ(floormod(tx_, Int32(32)), Int32(0));
    std::vector<Stmt> body;
    body.push_back(Intrin("ptx_mbarrier_wait", {FullBar(0, s), phase}));
    body.push_back(Intrin("ptx_wgmma_fence", {}));
    for (const WgmmaGemm& g : plan_.gemms) {
      for (Stmt& st : WgmmaSteps(g, s)) body.push_back(st);
    }
    body.push_back(Intrin("ptx_wgmma_commit_group", {}));
    body.push_back(Intrin("ptx_wgmma_wait_group", {Int32(1)}));
    // The previous iteration's group has completed: its stage may be refilled. Within this tile
    // only: the last stage of the tile before was released after its drain.
    PrimExpr local = sub(ko, cast(ko.dtype(), loop->min));
    PrimExpr prev = StageOf(sub(it, MakeConst(it.dtype(), 1)));
    body.push_back(IfThenElse(And(GT(local, MakeConst(local.dtype(), 0)), lane0),
                              Intrin("ptx_mbarrier_arrive", {EmptyBar(0, prev)})));
    Stmt main = For(ko, loop->min, loop->extent, ForKind::kSerial, Seq(body));
    PrimExpr n = loop->extent;
    // The stage of the tile's last iteration (over the whole walk when persistent).
    PrimExpr last_ko =
        add(cast(ko.dtype(), loop->min), sub(cast(ko.dtype(), n), MakeConst(ko.dtype(), 1)));
    PrimExpr last = StageOf(Substitute(it, VarMap{{ko.get(), last_ko}}));
    Stmt drain = SeqStmt::Flatten(
        Array<Stmt>{Intrin("ptx_wgmma_wait_group", {Int32(0)}),
                    IfThenElse(And(GT(n, MakeConst(n.dtype(), 0)), lane0),
                               Intrin("ptx_mbarrier_arrive", {EmptyBar(0, last)}))});
    return WithSpan(SeqStmt::Flatten(Array<Stmt>{main, drain}), loop->span);
  }

  // The barrier groups whose tiles `st` reads.
  std::vector<int64_t> GroupsOf(const Stmt& st) const {
    std::vector<int64_t> out;
    for (int64_t g = 0; g < Groups(); ++g) {
      std::unordered_set<const VarNode*> dst;
      for (const TmaCopy* c : groups_[g]) dst.insert(c->dst->data.get());
      if (Touches(st, dst)) out.push_back(g);
    }
    return out;
  }

  // The fused form: the loop's statements (without the producer's copies) on the consumers, each
  // tile waited for where it is first read; with a late gemm in the plan, that gemm overlapped
  // with the next iteration, otherwise in order, each gemm to completion.
  Stmt FusedConsumerLoop() {
    const ForNode* loop = plan_.pipelined;
    analyzer_.Bind(loop->loop_var, Range(loop->min, loop->extent), true);
    std::unordered_map<const CallNode*, const WgmmaGemm*> gemms;
    for (const WgmmaGemm& g : plan_.gemms) gemms[g.call] = &g;
    std::unordered_set<const CallNode*> copies;
    for (const TmaCopy& c : plan_.copies) copies.insert(c.call);
    std::vector<Stmt> stmts;
    std::vector<const WgmmaGemm*> gemm_of;
    for (const Stmt& st : FlattenSeq(loop->body)) {
      const CallNode* call = TileCall(st);
      if (call && copies.count(call)) continue;  // the producer's
      stmts.push_back(st);
      gemm_of.push_back(call && gemms.count(call) ? gemms[call] : nullptr);
    }
    std::optional<Stmt> late = Overlapped(stmts, gemm_of);
    return WithSpan(late ? *late : InOrder(stmts, gemm_of), loop->span);
  }

  // Issues gemm `g` on stage `s` as one wgmma group (its A operand packed first).
  void IssueGemm(const WgmmaGemm& g, const PrimExpr& s, bool pack, std::vector<Stmt>* out) {
    if (pack) out->push_back(Pack(g));
    out->push_back(Intrin("ptx_wgmma_fence", {}));
    for (Stmt& step : WgmmaSteps(g, s)) out->push_back(step);
    out->push_back(Intrin("ptx_wgmma_commit_group", {}));
  }

  Stmt Release(int64_t g, const PrimExpr& s) {
    return IfThenElse(EQ(floormod(tx_, Int32(32)), Int32(0)),
                      Intrin("ptx_mbarrier_arrive", {EmptyBar(g, s)}));
  }

  // Waits for group g's tiles of stage s in this iteration, unless already waited for.
  void WaitOnce(int64_t g, const PrimExpr& s, const PrimExpr& phase, std::vector<bool>* waited,
                std::vector<Stmt>* body) {
    if ((*waited)[g]) return;
    (*waited)[g] = true;
    body->push_back(Intrin("ptx_mbarrier_wait", {FullBar(g, s), phase}));
  }

  Stmt InOrder(const std::vector<Stmt>& stmts, const std::vector<const WgmmaGemm*>& gemm_of) {
    const ForNode* loop = plan_.pipelined;
    Var ko = loop->loop_var;
    PrimExpr it = Iter(ko), s = StageOf(it), phase = PhaseOf(it);
    auto iteration = [&](const std::vector<Stmt>& code) {
      std::vector<bool> waited(Groups(), false);
      std::vector<Stmt> body;
      auto wait = [&](int64_t g) { WaitOnce(g, s, phase, &waited, &body); };
      for (size_t i = 0; i < code.size(); ++i) {
        for (int64_t g : GroupsOf(code[i])) wait(g);
        if (gemm_of[i]) {
          IssueGemm(*gemm_of[i], s, true, &body);
          body.push_back(Intrin("ptx_wgmma_wait_group", {Int32(0)}));
        } else {
          body.push_back(VisitStmt(code[i]));
        }
      }
      // A stage is refilled only after its loads have landed, read or not.
      for (int64_t g = 0; g < Groups(); ++g) {
        wait(g);
        body.push_back(Release(g, s));
      }
      return Seq(body);
    };
    return SplitLoop(ko, loop->min, loop->extent, stmts, iteration);
  }

  // for ko in [lo, lo + n): iteration(stmts), as two loops when the plan has a split: first the
  // iterations below its bound with the decided selects left out, then the others as written.
  // The second loop binds a copy of ko (a variable is bound once).
  Stmt SplitLoop(const Var& ko, const PrimExpr& lo, const PrimExpr& n,
                 const std::vector<Stmt>& stmts,
                 const std::function<Stmt(const std::vector<Stmt>&)>& iteration) {
    if (!plan_.split) return For(ko, lo, n, ForKind::kSerial, iteration(stmts));
    std::vector<Stmt> decided;
    for (const Stmt& st : stmts) decided.push_back(DropDecidedSelects(st, *plan_.split));
    PrimExpr end = add(lo, cast(lo.dtype(), n));
    PrimExpr at = analyzer_.Simplify(max(lo, min(cast(lo.dtype(), plan_.split->before), end)));
    Stmt fast = For(ko, lo, sub(at, lo), ForKind::kSerial, iteration(decided));
    Var k2(tvm::ffi::make_object<VarNode>(*ko.get()));
    Stmt rest = For(k2, at, sub(end, at), ForKind::kSerial,
                    Substitute(iteration(stmts), VarMap{{ko.get(), k2}}));
    return SeqStmt::Flatten(Array<Stmt>{fast, rest});
  }

  // The loop as pre; G0; mid; G1 with G1 plan_.late_gemm: G1 of iteration k - 1 is issued
  // right after G0 of iteration k, so that the tensor cores run it while the consumers run mid up
  // to plan_.late_wait; the statements from there on wait for it. The first iteration is peeled
  // (nothing to overlap) and the last G1 follows the loop. The tiles G1 reads are released when
  // it completes, one iteration later than the others.
  std::optional<Stmt> Overlapped(const std::vector<Stmt>& stmts,
                                 const std::vector<const WgmmaGemm*>& gemm_of) {
    if (!plan_.late_gemm) return std::nullopt;
    std::vector<size_t> at;
    for (size_t i = 0; i < stmts.size(); ++i) {
      if (gemm_of[i]) at.push_back(i);
    }
    TVM_FFI_ICHECK(at.size() == 2 && stmts[at[1]].get() == plan_.late_gemm)
        << "LowerTileOps: the plan's late gemm is not the loop's second and last";
    const WgmmaGemm& g0 = *gemm_of[at[0]];
    const WgmmaGemm& g1 = *gemm_of[at[1]];
    size_t split = at[0] + 1;  // the first statement of mid that waits for G1
    while (split < at[1] && stmts[split].get() != plan_.late_wait) ++split;
    std::vector<int64_t> late = GroupsOf(stmts[at[1]]);  // the tiles G1 reads
    auto is_late = [&](int64_t g) { return std::find(late.begin(), late.end(), g) != late.end(); };

    const ForNode* loop = plan_.pipelined;
    Var ko = loop->loop_var;
    PrimExpr it = Iter(ko), s = StageOf(it), phase = PhaseOf(it);
    PrimExpr prev_it = sub(it, MakeConst(it.dtype(), 1));
    PrimExpr prev_s = StageOf(prev_it), prev_phase = PhaseOf(prev_it);
    // Two consumer warpgroups take turns to issue their gemms (named barriers 3 and 4, warpgroup
    // 1 letting 0 go first), so that one's softmax runs while the other's gemms hold the tensor
    // cores rather than both waiting on them at once (FA3's ping-pong). Measured on the H200
    // (attention fp16, S = 4096): +3% at D = 128 full, +10% causal, +13% / +9% at D = 64.
    bool pingpong = consumers_ == 256;
    auto iteration = [&](bool first, const std::vector<Stmt>& code) {
      std::vector<bool> waited(Groups(), false);
      std::vector<Stmt> body;
      auto wait = [&](int64_t g) { WaitOnce(g, s, phase, &waited, &body); };
      auto run = [&](size_t from, size_t to) {
        for (size_t i = from; i < to; ++i) {
          for (int64_t g : GroupsOf(code[i])) wait(g);
          body.push_back(VisitStmt(code[i]));
        }
      };
      run(0, at[0]);
      for (int64_t g : GroupsOf(stmts[at[0]])) wait(g);
      PrimExpr w = floordiv(tx_, Int32(128));
      if (pingpong)
        body.push_back(Intrin("ptx_named_barrier_sync", {add(w, Int32(3)), Int32(256)}));
      IssueGemm(g0, s, true, &body);
      if (!first) {
        for (int64_t g : late)
          body.push_back(Intrin("ptx_mbarrier_wait", {FullBar(g, prev_s), prev_phase}));
        IssueGemm(g1, prev_s, false, &body);  // packed at the end of the iteration before
      }
      if (pingpong) {
        body.push_back(Intrin("ptx_named_barrier_arrive", {sub(Int32(4), w), Int32(256)}));
      }
      body.push_back(Intrin("ptx_wgmma_wait_group", {Int32(first ? 0 : 1)}));
      run(at[0] + 1, split);
      if (!first) {
        body.push_back(Intrin("ptx_wgmma_wait_group", {Int32(0)}));
        for (int64_t g : late) body.push_back(Release(g, prev_s));
      }
      run(split, at[1]);
      for (int64_t g = 0; g < Groups(); ++g) {
        if (is_late(g)) continue;
        wait(g);
        body.push_back(Release(g, s));
      }
      // G1 of the iteration before has completed: its A registers may be rewritten.
      body.push_back(Pack(g1));
      return Seq(body);
    };
    PrimExpr n = loop->extent;
    PrimExpr last_ko =
        add(cast(ko.dtype(), loop->min), sub(cast(ko.dtype(), n), MakeConst(ko.dtype(), 1)));
    PrimExpr last_it = Substitute(it, VarMap{{ko.get(), last_ko}});
    std::vector<Stmt> tail;
    for (int64_t g : late) {
      tail.push_back(Intrin("ptx_mbarrier_wait", {FullBar(g, StageOf(last_it)), PhaseOf(last_it)}));
    }
    IssueGemm(g1, StageOf(last_it), false, &tail);
    tail.push_back(Intrin("ptx_wgmma_wait_group", {Int32(0)}));
    for (int64_t g : late) tail.push_back(Release(g, StageOf(last_it)));
    Stmt head = Substitute(iteration(true, stmts), VarMap{{ko.get(), cast(ko.dtype(), loop->min)}});
    PrimExpr one = MakeConst(n.dtype(), 1);
    Stmt rest = SplitLoop(ko, add(loop->min, cast(loop->min.dtype(), one)), sub(n, one), stmts,
                          [&](const std::vector<Stmt>& code) { return iteration(false, code); });
    Stmt start = Evaluate(Int32(0));
    if (pingpong) {
      start = IfThenElse(EQ(floordiv(tx_, Int32(128)), Int32(1)),
                         Intrin("ptx_named_barrier_arrive", {Int32(3), Int32(256)}));
      // A persistent walk lets warpgroup 0 go first once, before its first tile: the turns then
      // alternate across tiles, and each warpgroup syncs as often as the other arrives.
      if (persistent_) {
        pingpong_start_ = start;
        start = Evaluate(Int32(0));
      }
    }
    return IfThenElse(GT(n, MakeConst(n.dtype(), 0)),
                      SeqStmt::Flatten(Array<Stmt>{start, head, rest, Seq(tail)}));
  }

  // The producer's loads of the tiles copied before the loop, on their own barrier; in a
  // persistent walk each tile's once the consumers have released the last tile's (phase
  // tile_i % 2 of the empty barrier: the first wait, on the phase before, passes at once).
  Stmt Preloads(const VarMap& own) {
    int64_t bytes = 0;
    std::vector<Stmt> out;
    if (ReloadsPreloads()) {
      out.push_back(
          Intrin("ptx_mbarrier_wait", {PreloadEmptyBar(), bitwise_xor(TileParity(), Int32(1))}));
    }
    for (const TmaCopy& c : plan_.preloads) bytes += RingOf(c.dst).tile_bytes;
    out.push_back(Intrin("ptx_mbarrier_arrive_expect_tx", {PreloadBar(), Int32(bytes)}));
    for (const TmaCopy& c : plan_.preloads) {
      for (Stmt& l : TmaLoads(c, Int32(0), PreloadBar(), own)) out.push_back(l);
    }
    return Seq(out);
  }

  // The phase of the preload barriers in the current tile of a walk.
  PrimExpr TileParity() const {
    return persistent_ ? floormod(cast(DataType::Int(32), tile_i_), Int32(2)) : PrimExpr(Int32(0));
  }

  // for r in [0, regs): body(r, logical indices of register r of this thread).
  Stmt Own(const Frag& f,
           const std::function<Stmt(const Var& r, const Array<PrimExpr>& at)>& body) {
    Var r("r");
    int64_t regs = ConstOf(f.local->shape[0]);
    analyzer_.Bind(r, Range(Int32(0), Int32(regs)), true);
    Array<PrimExpr> at;
    if (f.wgmma) {
      at = WgmmaElement(tx_, r);
    } else if (f.rows) {
      at = {WgmmaRow(tx_, r)};
    } else {
      PrimExpr rest = r;
      std::vector<PrimExpr> idx(f.shape.size());
      for (size_t d = f.shape.size(); d-- > 0;) {
        idx[d] = d == 0 ? rest : floormod(rest, Int32(f.shape[d]));
        rest = floordiv(rest, Int32(f.shape[d]));
      }
      at = Array<PrimExpr>(idx.begin(), idx.end());
    }
    // Unrolled: registers are only registers when every index is a constant.
    return For(r, Int32(0), Int32(regs), ForKind::kUnrolled, body(r, at));
  }

  static Array<PrimExpr> Add(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
    Array<PrimExpr> out;
    for (size_t d = 0; d < a.size(); ++d) out.push_back(add(a[d], cast(a[d].dtype(), b[d])));
    return out;
  }

  Stmt Copy(const CallNode* call) override {
    for (const TmaCopy& c : plan_.preloads) {
      // The producer loads it; the consumers wait for it here.
      if (c.call == call) return Intrin("ptx_mbarrier_wait", {PreloadBar(), TileParity()});
    }
    TileRegion src = Region(call, 0), dst = Region(call, 1);
    size_t rank = std::min(src.extents.size(), dst.extents.size());
    src.extents = Squeeze(call, src, rank);
    dst.extents = Squeeze(call, dst, rank);
    for (size_t d = 0; d < rank; ++d) {
      SameExtent(call, src.extents[d], dst.extents[d], "tile_copy: extent " + std::to_string(d));
    }
    const Frag* fs = FragOf(src.buffer);
    const Frag* fd = FragOf(dst.buffer);
    DataType t = dst.buffer->dtype;
    if (fd) {
      if (fs && (fs->wgmma != fd->wgmma || fs->rows != fd->rows)) {
        Fail(call, "a copy between fragments of two layouts (not planned)");
      }
      if (direct_packs_.count(dst.buffer->data.get())) {
        Buffer p = PackOf(dst.buffer);
        Var i("i");
        PrimExpr lo = BufferLoad(fs->local, {mul(i, Int32(2))});
        PrimExpr hi = BufferLoad(fs->local, {add(mul(i, Int32(2)), Int32(1))});
        PrimExpr v = Call(DataType::UInt(32), Op::Get("ptx_cvt_pack"),
                          {StringImm(t == DataType::Float(16) ? "f16" : "bf16"), lo, hi});
        return For(i, Int32(0), Int32(ConstOf(p->shape[0])), ForKind::kUnrolled,
                   BufferStore(p, v, {i}));
      }
      return Own(*fd, [&](const Var& r, const Array<PrimExpr>& at) {
        PrimExpr v = fs ? BufferLoad(fs->local, {r}) : Load(src.buffer, SqueezedAt(src, at), t);
        return BufferStore(fd->local, cast(t, v), {r});
      });
    }
    if (!fs) Fail(call, "a copy between memory tiles in the consumers (not planned)");
    if (fs->wgmma && !plan_.stores.empty() && plan_.stores[0].call == call) {
      return StoreByTma(*fs, dst, call);
    }
    if (fs->rows) {
      // One thread of each row's four stores it.
      return Own(*fs, [&](const Var& r, const Array<PrimExpr>& at) {
        return IfThenElse(
            EQ(floormod(tx_, Int32(4)), Int32(0)),
            Store(dst.buffer, SqueezedAt(dst, at), cast(t, BufferLoad(fs->local, {r}))));
      });
    }
    if (fs->wgmma) {
      return Own(*fs, [&](const Var& r, const Array<PrimExpr>& at) {
        return Store(dst.buffer, SqueezedAt(dst, at), cast(t, BufferLoad(fs->local, {r})));
      });
    }
    // A replicated fragment: the consumers share the stores.
    return Spread(fs->size, [&](const PrimExpr& e) {
      Array<PrimExpr> at = Unflat(e, fs->shape);
      return Store(dst.buffer, SqueezedAt(dst, at), cast(t, BufferLoad(fs->local, {e})));
    });
  }

  // The accumulator into the tensor through the staging tile: each warpgroup writes its 64 rows,
  // cast, as 64 x 64 boxes (logically indexed; SwizzleLayout stores them with the 128-byte
  // swizzle the TMA map reads), and its first thread stores the boxes. The staging tile is reused
  // by the next tile of a persistent walk only after those stores have read it.
  Stmt StoreByTma(const Frag& f, const TileRegion& dst, const CallNode* call) {
    DataType t = dst.buffer->dtype;
    int64_t n = f.shape[1], boxes = n / 64;
    if (!staging_.defined()) {
      staging_ = MakeBuffer("C_stage", t, {Int32(plan_.threads / 128 * 64 * n)}, "shared.dyn");
    }
    PrimExpr w = floordiv(tx_, Int32(128));
    PrimExpr first = EQ(floormod(tx_, Int32(128)), Int32(0));
    Stmt sync = Intrin("ptx_named_barrier_sync", {add(w, Int32(1)), Int32(128)});
    auto flat_of = [&](const Array<PrimExpr>& at) {
      PrimExpr row = floormod(at[0], Int32(64)), col = at[1];
      return add(add(mul(add(mul(w, Int32(boxes)), floordiv(col, Int32(64))), Int32(4096)),
                     mul(row, Int32(64))),
                 floormod(col, Int32(64)));
    };
    Stmt fill;
    if (t == DataType::Float(16) || t == DataType::BFloat(16)) {
      // Registers 2k and 2k + 1 of the wgmma accumulator are adjacent columns of one row: one
      // conversion packs them and one 32-bit store writes them, through a 32-bit view of the
      // staging tile (swizzled by its own element size: the same bytes). Half the stores and
      // half the addresses of element-wise 16-bit ones; with those, ptxas kept the 128
      // addresses live across the persistent loop and spilled them.
      if (!staging_pairs_.defined()) {
        staging_pairs_ =
            Buffer(staging_->name + "_pairs", staging_->data, DataType::UInt(32),
                   {Int32(ConstOf(staging_->shape[0]) / 2)}, {}, Int32(0), staging_->scope, 16, 1);
      }
      Buffer pairs = staging_pairs_;
      int64_t count = ConstOf(f.local->shape[0]) / 2;  // register pairs a thread
      Var k("k");
      analyzer_.Bind(k, Range(Int32(0), Int32(count)), true);
      Array<PrimExpr> at = WgmmaElement(tx_, mul(k, Int32(2)));
      PrimExpr v = Call(DataType::UInt(32), Op::Get("ptx_cvt_pack"),
                        {StringImm(t == DataType::Float(16) ? "f16" : "bf16"),
                         BufferLoad(f.local, {mul(k, Int32(2))}),
                         BufferLoad(f.local, {add(mul(k, Int32(2)), Int32(1))})});
      fill = For(k, Int32(0), Int32(count), ForKind::kUnrolled,
                 BufferStore(pairs, v, {floordiv(flat_of(at), Int32(2))}));
    } else {
      fill = Own(f, [&](const Var& r, const Array<PrimExpr>& at) {
        return BufferStore(staging_, cast(t, BufferLoad(f.local, {r})), {flat_of(at)});
      });
    }
    Array<PrimExpr> desc{StringImm(t.str()), Int32(128), PrimExpr(dst.buffer->data)};
    for (const PrimExpr& d : dst.buffer->shape) desc.push_back(d);
    desc.push_back(dst.buffer->shape[1]);
    desc.push_back(MakeConst(dst.buffer->shape[1].dtype(), 1));
    desc.push_back(Int32(64));
    desc.push_back(Int32(64));
    PrimExpr map = Call(DataType::Handle(), Op::Get("tma_descriptor"), desc);
    std::vector<Stmt> issue;
    for (int64_t b = 0; b < boxes; ++b) {
      PrimExpr r0 = add(dst.starts[0], cast(dst.starts[0].dtype(), mul(w, Int32(64))));
      PrimExpr c0 = add(dst.starts[1], MakeConst(dst.starts[1].dtype(), b * 64));
      issue.push_back(
          Intrin("ptx_tma_store",
                 {map,
                  AddressOf(staging_,
                            add(mul(add(mul(w, Int32(boxes)), Int32(b)), Int32(4096)), Int32(0))),
                  r0, c0}));
    }
    issue.push_back(Intrin("ptx_tma_store_commit_group", {}));
    stored_ = true;
    return SeqStmt::Flatten(
        Array<Stmt>{IfThenElse(first, Intrin("ptx_tma_store_wait_group", {Int32(0)})), sync, fill,
                    Intrin("ptx_fence_proxy_async", {}), sync, IfThenElse(first, Seq(issue))});
  }

  // Element e = k * consumers + tx of [0, size) for each k: the consumers' round-robin share.
  Stmt Spread(int64_t size, const std::function<Stmt(const PrimExpr& e)>& body) {
    Var k("k");
    int64_t trips = (size + consumers_ - 1) / consumers_;
    analyzer_.Bind(k, Range(Int32(0), Int32(trips)), true);
    PrimExpr e = add(mul(k, Int32(consumers_)), tx_);
    Stmt s = body(e);
    if (size % consumers_ != 0) s = IfThenElse(LT(e, Int32(size)), s);
    return For(k, Int32(0), Int32(trips), ForKind::kSerial, s);
  }

  Stmt Fill(const CallNode* call) override {
    TileRegion dst = Region(call, 0);
    PrimExpr value = cast(dst.buffer->dtype, VisitExpr(call->args[1]));
    const Frag* f = FragOf(dst.buffer);
    if (!f) Fail(call, "a fill of a memory tile in the consumers (not planned)");
    return Own(*f, [&](const Var& r, const Array<PrimExpr>&) {
      return BufferStore(f->local, value, {r});
    });
  }

  Stmt Gemm(const CallNode* call) override {
    Fail(call, "a T.gemm outside the T.Pipelined loop (not planned)");
  }
  // A row reduction of a wgmma accumulator into a row statistic: each thread folds its registers
  // of each of its two rows, the row's four threads (lanes 4q .. 4q + 3) exchange by shuffles,
  // and only then the old value joins (clear=False), so that it counts once.
  Stmt Reduce(const CallNode* call) override {
    TileRegion src = Region(call, 0), dst = Region(call, 1);
    const Frag* fs = FragOf(src.buffer);
    const Frag* fd = FragOf(dst.buffer);
    std::string kind = call->args[2].as<StringImmNode>()
                           ? std::string(call->args[2].as<StringImmNode>()->value)
                           : "";
    if (!fs || !fd || !fs->wgmma || !fd->rows || ConstOf(call->args[3]) != 1 ||
        (kind != "sum" && kind != "max" && kind != "min")) {
      Fail(call,
           "a T.reduce in the warp-specialized form goes over the columns (dim=1) of a wgmma "
           "accumulator into a row statistic, by sum, max or min");
    }
    bool clear = ConstOf(call->args[4]) == 1;
    DataType t = fd->logical->dtype;
    auto combine = [&](const PrimExpr& a, const PrimExpr& b) -> PrimExpr {
      if (kind == "sum") return add(a, b);
      return kind == "max" ? max(a, b) : min(a, b);
    };
    int64_t regs = ConstOf(fs->local->shape[0]);
    std::vector<Stmt> out;
    for (int64_t h = 0; h < 2; ++h) {
      // Registers 4j + 2h + c hold row h of this thread. Folded as a balanced tree: a chain of
      // 64 dependent adds would put its latency on the softmax's critical path.
      std::vector<PrimExpr> level;
      for (int64_t j = 0; 4 * j < regs; ++j) {
        for (int64_t c = 0; c < 2; ++c) {
          level.push_back(cast(t, BufferLoad(fs->local, {Int32(4 * j + 2 * h + c)})));
        }
      }
      while (level.size() > 1) {
        std::vector<PrimExpr> next;
        for (size_t i = 0; i + 1 < level.size(); i += 2)
          next.push_back(combine(level[i], level[i + 1]));
        if (level.size() % 2) next.push_back(level.back());
        level = std::move(next);
      }
      PrimExpr v = level[0];
      Var own("row_own", t), pair("row_pair", t), quad("row_quad", t);
      auto shfl = [&](const Var& x, int64_t lane) {
        return combine(x, Call(t, builtin::shfl_xor(), {x, Int32(lane), Int32(32)}));
      };
      PrimExpr result = quad;
      if (!clear) result = combine(BufferLoad(fd->local, {Int32(h)}), quad);
      out.push_back(LetStmt(
          own, v,
          LetStmt(pair, shfl(own, 1),
                  LetStmt(quad, shfl(pair, 2), BufferStore(fd->local, result, {Int32(h)})))));
    }
    return Seq(out);
  }
  Stmt AtomicAdd(const CallNode* call) override {
    Fail(call, "a T.atomic_add in the warp-specialized form (not planned)");
  }

  Stmt Parallel(const ForNode* op) {
    std::vector<const ForNode*> loops{op};
    Stmt body = op->body;
    while (const auto* inner = body.as<ForNode>()) {
      if (!inner->annotations.count("tessel.tile_parallel")) break;
      loops.push_back(inner);
      body = inner->body;
    }
    std::vector<int64_t> shape;
    for (const ForNode* l : loops) {
      if (ConstOf(l->min) != 0 || ConstOf(l->extent) < 1) {
        FailAt("T.Parallel needs constant extents from 0 on the GPU");
      }
      shape.push_back(ConstOf(l->extent));
    }
    // The wgmma fragment of this shape the nest walks, if any (or, for a 1-D nest, the row
    // statistic): each thread then visits its own registers of it.
    const Frag* lead = nullptr;
    PostOrderVisit(body, [&](const ObjectRef& n) {
      Buffer b;
      if (const auto* l = n.as<BufferLoadNode>()) b = l->buffer;
      if (const auto* s = n.as<BufferStoreNode>()) b = s->buffer;
      const Frag* f = b.defined() ? FragOf(b) : nullptr;
      if (f && (f->wgmma || f->rows) && f->shape == shape && (!lead || f->wgmma)) lead = f;
    });
    auto substitute = [&](const Array<PrimExpr>& at, const Var& r) {
      // Fragments of the lead's layout indexed by the loop variables are this thread's register
      // r; in a wgmma nest, a row statistic indexed by the first is its register of r's row.
      class Mine : public StmtExprMutator {
       public:
        Mine(Hopper* h, const std::vector<const ForNode*>& loops, Var r, bool wgmma)
            : h_(h), loops_(loops), r_(std::move(r)), wgmma_(wgmma) {}
        using StmtExprMutator::VisitExpr_;
        using StmtExprMutator::VisitStmt_;
        PrimExpr VisitExpr_(const BufferLoadNode* op) override {
          const Frag* f = h_->FragOf(op->buffer);
          if (f && (f->wgmma || f->rows)) return BufferLoad(f->local, {Register(*f, op->indices)});
          return StmtExprMutator::VisitExpr_(op);
        }
        Stmt VisitStmt_(const BufferStoreNode* op) override {
          const Frag* f = h_->FragOf(op->buffer);
          if (f && (f->wgmma || f->rows)) {
            return BufferStore(f->local, VisitExpr(op->value), {Register(*f, op->indices)});
          }
          return StmtExprMutator::VisitStmt_(op);
        }

       private:
        PrimExpr Register(const Frag& f, const Array<PrimExpr>& idx) {
          if (wgmma_ && f.rows && idx.size() == 1 && idx[0].same_as(loops_[0]->loop_var) &&
              f.shape[0] == ConstOf(loops_[0]->extent)) {
            return floormod(floordiv(r_, Int32(2)), Int32(2));
          }
          bool same = f.wgmma == wgmma_ && idx.size() == loops_.size();
          for (size_t d = 0; same && d < idx.size(); ++d) {
            same = idx[d].same_as(loops_[d]->loop_var) && f.shape[d] == ConstOf(loops_[d]->extent);
          }
          if (!same) {
            h_->FailAt("inside T.Parallel, fragment " + std::string(f.logical->name) +
                       " must have the loops' shape and be indexed by the loop variables in "
                       "order (a row statistic by the first loop variable of a wgmma nest)");
          }
          return r_;
        }
        Hopper* h_;
        const std::vector<const ForNode*>& loops_;
        Var r_;
        bool wgmma_;
      };
      Stmt s = r.defined() ? Mine(this, loops, r, lead->wgmma).VisitStmt(body) : body;
      VarMap sub;
      for (size_t d = 0; d < loops.size(); ++d) sub[loops[d]->loop_var.get()] = at[d];
      return VisitStmt(Substitute(s, sub));
    };
    if (lead) {
      const auto* branch = body.as<IfThenElseNode>();
      if (lead->wgmma && branch && !branch->else_case) return RowGuarded(*lead, substitute);
      return Own(*lead, [&](const Var& r, const Array<PrimExpr>& at) { return substitute(at, r); });
    }
    int64_t size = 1;
    for (int64_t e : shape) size *= e;
    return Spread(size, [&](const PrimExpr& e) { return substitute(Unflat(e, shape), Var()); });
  }

  // `if c: ...` as the whole body of a T.Parallel nest over a wgmma accumulator, c a function of
  // the row alone (e.g. `if rescale[i] != 1`): each thread tests each of its two rows once and
  // branches around that row's registers. Unrolled register by register, the test would guard
  // every register on its own and ptxas predicates them, so a warp whose rows all fail would still
  // issue every instruction; as one branch a row, it skips them. c must give the same value for
  // every register of a row: checked by simplifying it at register c*4 + 2q + p (the layout's row
  // is q) and at 2q, under their ranges; where the two differ, the plain per-register loop (Own's
  // form) is kept, made from the same lowered body.
  Stmt RowGuarded(const Frag& f,
                  const std::function<Stmt(const Array<PrimExpr>&, const Var&)>& substitute) {
    int64_t regs = ConstOf(f.local->shape[0]);
    Var r("r");
    analyzer_.Bind(r, Range(Int32(0), Int32(regs)), true);
    Stmt per = substitute(WgmmaElement(tx_, r), r);
    Stmt plain = For(r, Int32(0), Int32(regs), ForKind::kUnrolled, per);
    const auto* branch = per.as<IfThenElseNode>();
    if (regs % 4 != 0 || !branch || branch->else_case) return plain;
    Var q("q"), c("c"), p("p");
    analyzer_.Bind(q, Range(Int32(0), Int32(2)), true);
    analyzer_.Bind(c, Range(Int32(0), Int32(regs / 4)), true);
    analyzer_.Bind(p, Range(Int32(0), Int32(2)), true);
    PrimExpr element = add(add(mul(c, Int32(4)), mul(q, Int32(2))), p);
    PrimExpr row_test =
        analyzer_.Simplify(Substitute(branch->condition, {{r.get(), mul(q, Int32(2))}}));
    PrimExpr element_test = analyzer_.Simplify(Substitute(branch->condition, {{r.get(), element}}));
    if (!tvm::ffi::StructuralEqual::Equal(row_test, element_test)) return plain;
    Stmt then = Substitute(branch->then_case, {{r.get(), element}});
    Stmt row = For(c, Int32(0), Int32(regs / 4), ForKind::kUnrolled,
                   For(p, Int32(0), Int32(2), ForKind::kUnrolled, then));
    return For(q, Int32(0), Int32(2), ForKind::kUnrolled, IfThenElse(row_test, row));
  }

  // The blocks of a persistent kernel: the SMs of an H100 / H200 (elsewhere it is still correct).
  static constexpr int64_t kPersistentBlocks = 132;

  const TileKernelPlan& plan_;
  Persistent mode_;
  bool persistent_ = false;
  bool running_ = false;  // persistent with trip counts that vary by tile: ring_iter_ counts
  Buffer ring_iter_;      // the iterations of the tiles walked so far (each role its own)
  Stmt pingpong_start_;   // a persistent walk's first turn, before its first tile
  std::vector<const ForNode*> blocks_;
  PrimExpr gx_, gy_, gz_, grid_;
  Var bid_, tile_i_;
  Buffer staging_;        // the TMA store's staging tile, once a T.copy needs it
  Buffer staging_pairs_;  // its 32-bit view, for 16-bit outputs stored in pairs
  bool stored_ = false;
  int64_t consumers_ = 0;
  Var tx_;
  std::unordered_map<const VarNode*, Frag> frags_;
  std::unordered_map<const VarNode*, Buffer> packs_;     // packed A operands, by fragment
  std::unordered_set<const VarNode*> direct_packs_;      // FindDirectPacks
  std::vector<const VarNode*> frag_order_, pack_order_;  // the maps' keys, in order made
  Var wg_;                                               // the consumer's warpgroup (uniform)
  std::vector<std::pair<const VarNode*, Ring>> rings_;
  std::vector<std::vector<const TmaCopy*>> groups_;  // copies sharing full / empty barriers
  Buffer bars_;
};

}  // namespace

Stmt LowerTileKernelHopper(const ForNode* kernel, const TileKernelPlan& plan,
                           const std::string& function, Persistent persistent) {
  return Hopper(plan, function, persistent).Lower(kernel);
}

PrimExpr TmaDescribable(const TileKernelPlan& plan) {
  PrimExpr ok = MakeConst(DataType::Bool(), 1);
  auto describable = [&](const Buffer& t) {
    for (const PrimExpr& d : t->shape) ok = And(ok, GT(d, MakeConst(d.dtype(), 0)));
    int64_t per16 = 16 / t->dtype.bytes();
    size_t rank = t->shape.size();
    // Compact: every outer stride is a multiple of the innermost dimension.
    std::vector<PrimExpr> outer;
    if (t->strides.empty()) {
      outer.push_back(t->shape[rank - 1]);
    } else {
      for (size_t d = 0; d + 1 < rank; ++d) outer.push_back(t->strides[d]);
    }
    for (const PrimExpr& st : outer) {
      ok = And(ok, EQ(floormod(st, MakeConst(st.dtype(), per16)), MakeConst(st.dtype(), 0)));
    }
  };
  for (const TmaCopy& c : plan.copies) describable(c.src.buffer);
  for (const TmaCopy& c : plan.preloads) describable(c.src.buffer);
  for (const TmaStore& st : plan.stores) describable(st.dst.buffer);
  return ok;
}

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel
