// The first GPU lowering of tile programs (contract in include/tessel/transform/lower_tile_ops.h):
// SIMT code, correct on any GPU; on CUDA sm_80 and later T.gemm runs on mma.sync where it can
// (src/transform/tile_mma.h).
//
// Inside each T.Kernel, a threadIdx.x loop of the kernel's thread count n runs the body. Shared
// tiles stay where they are, above that loop. A fragment is spread over the threads in vectors of
// v consecutive elements dealt round-robin ("blocked round-robin"): element e (row-major) is on
// thread (e / v) % n, register (e / (v * n)) * v + e % v. v is chosen per fragment shape by
// VectorWidth (16 bytes of the narrowest element the fragments of that shape hold or are copied
// from and to, where the last extent allows; v = 1 is plain round-robin), so that every fragment of
// one shape, and every T.Parallel nest of that shape, has the same distribution. A fragment that a
// reduction writes is replicated instead: every thread holds all of it, so that any thread can
// read any row statistic. Then:
// - copies between memory tiles (global, shared) are cooperative: thread t moves vectors t, t + n,
//   ... of 16 bytes (CopyMemory); a copy into or out of a spread fragment moves each thread's own
//   vectors, as a vectorized
//   loop (16-byte accesses) under one guard per vector when the tensor's last extent and the
//   region's start there are multiples of v, else element by element with a guard each;
//   InjectSharedBarriers (later in the pipeline) puts the barriers between a copy into shared
//   memory and its readers;
// - T.gemm computes each thread's own elements of C (a spread fragment) as dot products over shared
//   or global A and B; where mma.sync can run it, C's shape takes the mma accumulator layout
//   instead (tile_mma.h), the gemm becomes ldmatrix + mma.sync, and a reduction over the rows of
//   such a fragment goes by quad shuffles and one shared slot per row and warp column;
// - a reduction over the last axis of a spread fragment whose rows each lie on an aligned group of
//   threads (all n, or n / k groups of a row's vectors) goes by warp shuffles: each thread reduces
//   its own elements of each row it holds, shuffles combine the lanes of a group within a warp,
//   then (unless one warp holds everything) one shared slot per row and warp segment, which every
//   thread reads back in the same order, so that all threads hold the same replicated result.
//   Any other reduction goes through a shared scratch tile: each thread writes its elements (over
//   the last axis with v > 1: the reduction of each of its vectors, which lie in one row), then
//   every thread reduces every row into its replicated destination;
// - a T.Parallel nest over a spread fragment's shape runs each thread over its own elements; inside
//   it, the fragment must be indexed by the loop variables themselves (A_f[i, j]), and replicated
//   fragments may be indexed freely;
// - a T.Pipelined loop keeps its stages annotation: its cooperative copies into shared tiles are
//   what SoftwarePipeline(Async) stages later (cp.async for 4, 8 or 16 bytes).
#include <tessel/ir/substitute.h>
#include <tessel/transform/lower_tile_ops.h>
#include <tessel/transform/software_pipeline.h>
#include <tessel/transform/swizzle_layout.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "transform/tile_layout_inference.h"
#include "transform/tile_lowering.h"
#include "transform/tile_mma.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

namespace {

int64_t Size(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

// The vector width v of the blocked round-robin distribution of spread fragments of `shape` over
// `threads` threads (see the file comment), given the narrowest element, in bytes, that those
// fragments hold or are copied from and to: 16 bytes of it, so that each thread's accesses to the
// tensor can be one 16-byte access per vector, halved until a vector never straddles two rows (v
// divides the last extent) and every thread holds at least one vector. 1 is plain round-robin.
int64_t VectorWidth(const std::vector<int64_t>& shape, int64_t narrowest_bytes, int64_t threads) {
  if (shape.empty() || narrowest_bytes < 1 || narrowest_bytes > 16) return 1;
  int64_t v = 16 / narrowest_bytes;
  while (v > 1 && (shape.back() % v != 0 || Size(shape) < v * threads)) v /= 2;
  return v;
}

class Simt : public TileLowering {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  Simt(std::string function, std::string arch)
      : TileLowering(std::move(function)), arch_(std::move(arch)) {}

  Stmt VisitStmt_(const ForNode* op) override {
    if (IsTileKernel(op)) return Kernel(op);
    if (!in_kernel_) return StmtExprMutator::VisitStmt_(op);
    if (op->annotations.count("tessel.tile_parallel")) return Parallel(op);
    analyzer_.Bind(op->loop_var, Range(op->min, op->extent), true);
    Stmt body = VisitStmt(op->body);
    Map<String, Any> ann = op->annotations;
    // T.Pipelined asks for stages; SoftwarePipeline takes them as a hint for this SIMT form.
    if (ann.count("tessel.pipeline_stages")) ann.Set(kPipelineOptional, true);
    return WithSpan(For(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag, ann),
                    op->span);
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    if (!in_kernel_ || in_parallel_) return StmtExprMutator::VisitStmt_(op);
    std::vector<Stmt> out;
    for (size_t i = 0; i < op->seq.size(); ++i) {
      Stmt fused = i + 1 < op->seq.size() ? FuseParallel(op->seq[i], op->seq[i + 1]) : Stmt();
      if (fused.defined()) {
        out.push_back(fused);
        ++i;
      } else {
        out.push_back(VisitStmt(op->seq[i]));
      }
    }
    return SeqStmt::Flatten(Array<Stmt>(out.begin(), out.end()));
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    const CallNode* call = in_kernel_ ? TileCall(GetRef<Stmt>(op)) : nullptr;
    return call ? LowerTileCall(op, call) : StmtExprMutator::VisitStmt_(op);
  }

  // Replicated fragments outside T.Parallel: each thread's own full copy.
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    const Frag* f = FragOf(op->buffer);
    if (!f) return StmtExprMutator::VisitExpr_(op);
    return BufferLoad(f->local, {Flat(*f, VisitArray(op->indices), op->buffer->name)});
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    const Frag* f = FragOf(op->buffer);
    if (!f) return StmtExprMutator::VisitStmt_(op);
    return WithSpan(BufferStore(f->local, VisitExpr(op->value),
                                {Flat(*f, VisitArray(op->indices), op->buffer->name)}),
                    op->span);
  }

 private:
  struct Frag {
    Buffer logical, local;
    std::vector<int64_t> shape;
    int64_t size = 0;
    bool replicated = false;
    int64_t vec = 1;  // spread fragments: the v of the blocked round-robin distribution
  };

  // A spread distribution: `size` elements of a tile of `shape` in vectors of `vec`; blocked
  // round-robin, or the mma.sync accumulator's (vec 2) when `mma` is set.
  struct Dist {
    std::vector<int64_t> shape;
    int64_t size = 0, vec = 1;
    std::optional<MmaGrid> mma;
  };

  [[noreturn]] void FailAt(const std::string& what) const {
    TVM_FFI_THROW(ValueError) << "LowerTileOps: function '" << function_ << "': " << what;
    TVM_FFI_UNREACHABLE();
  }

  const Frag* FragOf(const Buffer& b) const {
    auto it = frags_.find(b->data.get());
    return it == frags_.end() ? nullptr : &it->second;
  }

  PrimExpr Flat(const Frag& f, const Array<PrimExpr>& idx, const String& name) {
    if (!f.replicated) {
      FailAt("fragment " + std::string(name) +
             " is spread over the threads; index it inside T.Parallel over its shape, by the loop "
             "variables themselves, or through tile operations");
    }
    return tile_lowering::Flat(f.shape, idx);
  }

  std::vector<int64_t> ConstShape(const Array<PrimExpr>& extents, const std::string& what) {
    std::vector<int64_t> out;
    for (const PrimExpr& e : extents) {
      int64_t v = ConstOf(e);
      if (v < 1) FailAt(what + " needs constant extents on the GPU, got " + AsText(e));
      out.push_back(v);
    }
    return out;
  }

  static Dist RoundRobin(const std::vector<int64_t>& shape, int64_t vec = 1) {
    return Dist{shape, Size(shape), vec, std::nullopt};
  }
  Dist DistOf(const Frag& f) const { return DistOf(f.shape); }
  // The distribution of a T.Parallel nest or tile operation of this shape: that of the spread
  // fragments of the shape.
  Dist DistOf(const std::vector<int64_t>& shape) const {
    auto it = vec_of_shape_.find(shape);
    auto mma = mma_of_shape_.find(shape);
    return Dist{shape, Size(shape), it == vec_of_shape_.end() ? 1 : it->second,
                mma == mma_of_shape_.end() ? std::nullopt : std::optional<MmaGrid>(mma->second)};
  }
  int64_t Trips(const Dist& d) const {
    if (d.mma) return d.mma->Vectors();
    return (d.size + d.vec * threads_ - 1) / (d.vec * threads_);
  }

  // For each of this thread's vectors of d: body(j, reg0, e0), j the vector's ordinal on the
  // thread, reg0 its first register (j * v), e0 its first element ((j * n + tx) * v). Vectors past
  // the end are skipped (v divides the size, so a vector is in or out whole).
  Stmt Own(
      const Dist& d, ForKind kind,
      const std::function<Stmt(const Var& j, const PrimExpr& reg0, const PrimExpr& e0)>& body) {
    Var j("r");
    int64_t trips = Trips(d);
    analyzer_.Bind(j, Range(Int32(0), Int32(trips)), true);
    if (d.mma) {
      PrimExpr e0 = tile_lowering::Flat(d.shape, MmaElement(*d.mma, tx_, j, Int32(0)));
      return For(j, Int32(0), Int32(trips), kind, body(j, mul(j, Int32(d.vec)), e0));
    }
    PrimExpr e0 = mul(add(mul(j, Int32(threads_)), tx_), Int32(d.vec));
    Stmt s = body(j, mul(j, Int32(d.vec)), e0);
    if (d.size % (d.vec * threads_) != 0) s = IfThenElse(LT(e0, Int32(d.size)), s);
    return For(j, Int32(0), Int32(trips), kind, s);
  }

  // The tile indices of element e0 + l of d, for a vector's first element e0 (a multiple of v,
  // which divides the last extent, so the lanes only move the last index). When a row holds a
  // whole number of rounds of vectors, the row is written from j alone, so that it folds to a
  // constant once j's loop is unrolled (a replicated row statistic indexed by it stays in
  // registers).
  Array<PrimExpr> At(const Dist& d, const Var& j, const PrimExpr& e0, const PrimExpr& l) const {
    if (d.mma) return MmaElement(*d.mma, tx_, j, l);
    int64_t last = d.shape.back(), round = d.vec * threads_;
    Array<PrimExpr> idx;
    if (last % round == 0 && d.shape.size() > 1) {
      int64_t k = last / round;
      std::vector<int64_t> rows(d.shape.begin(), d.shape.end() - 1);
      idx = Unflat(floordiv(j, Int32(k)), rows);
      idx.push_back(add(add(mul(floormod(j, Int32(k)), Int32(round)), mul(tx_, Int32(d.vec))), l));
      return idx;
    }
    idx = Unflat(e0, d.shape);
    idx.Set(idx.size() - 1, add(idx[idx.size() - 1], l));
    return idx;
  }

  // for l in kind(v): body(l); just the body when v is 1.
  static Stmt Lanes(int64_t v, ForKind kind, const std::function<Stmt(const PrimExpr& l)>& body) {
    if (v == 1) return body(Int32(0));
    Var l("l");
    return For(l, Int32(0), Int32(v), kind, body(l));
  }

  // Vectorized lanes in pieces of at most 16 bytes of t, each one wide access.
  static Stmt VectorLanes(int64_t v, DataType t,
                          const std::function<Stmt(const PrimExpr& l)>& body) {
    int64_t w = std::max<int64_t>(1, std::min<int64_t>(v, 16 / std::max(1, t.bytes())));
    if (w == v) return Lanes(v, ForKind::kVectorized, body);
    Var p("p");
    return For(p, Int32(0), Int32(v / w), ForKind::kUnrolled,
               Lanes(w, ForKind::kVectorized,
                     [&](const PrimExpr& l) { return body(add(mul(p, Int32(w)), l)); }));
  }

  // The guard of a whole vector of v elements of `buf` from indices `first` (its first element):
  // true, with `cond` undefined when no guard is needed, when the vector is provably all in or all
  // out of the tensor (the last extent and the last index are multiples of v); false otherwise.
  bool VectorGuard(const Buffer& buf, const Array<PrimExpr>& first, const PrimExpr& start_last,
                   int64_t v, PrimExpr* cond) {
    *cond = PrimExpr();
    if (IsTileScope(buf->scope)) return true;
    if (v > 1) {
      PrimExpr vv = MakeConst(start_last.dtype(), v);
      PrimExpr last = buf->shape[buf->shape.size() - 1];
      if (!analyzer_.CanProve(EQ(floormod(start_last, vv), MakeConst(vv.dtype(), 0))) ||
          !analyzer_.CanProve(
              EQ(floormod(last, MakeConst(last.dtype(), v)), MakeConst(last.dtype(), 0)))) {
        return false;
      }
    }
    *cond = InBounds(buf, first);
    return true;
  }

  void WholeFragment(const TileRegion& r, const Frag& f) {
    for (size_t d = 0; d < r.starts.size(); ++d) {
      if (ConstOf(r.starts[d]) != 0 || ConstOf(r.extents[d]) != f.shape[d]) {
        FailAt("a tile operation on part of fragment " + std::string(f.logical->name) +
               " (only whole fragments on the GPU so far)");
      }
    }
  }

  // Starts `a` offset by `b`; a start of higher rank keeps its leading (squeezed) dimensions.
  static Array<PrimExpr> Add(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
    return SqueezedAt(TileRegion{Buffer(), a, a}, b);
  }

  // Memory (a tensor or a shared tile) <-> this thread's vectors of spread fragment f, through
  // region `mem`: into f when `load`. One vectorized access per vector where the guard allows.
  Stmt CopySpread(const TileRegion& mem, const Frag& f, bool load) {
    Dist d = DistOf(f);
    return Own(d, ForKind::kUnrolled,
               [&](const Var& j, const PrimExpr& reg0, const PrimExpr& e0) -> Stmt {
                 return CopyVector(mem, f, load, d, j, reg0, e0);
               });
  }

  // CopySpread's copy of the thread's vector j (first register reg0, first element e0).
  Stmt CopyVector(const TileRegion& mem, const Frag& f, bool load, const Dist& d, const Var& j,
                  const PrimExpr& reg0, const PrimExpr& e0) {
    DataType ft = f.local->dtype, mt = mem.buffer->dtype;
    auto idx = [&](const PrimExpr& l) { return Add(mem.starts, At(d, j, e0, l)); };
    auto reg = [&](const PrimExpr& l) { return add(reg0, l); };
    PrimExpr cond;
    if (!VectorGuard(mem.buffer, idx(Int32(0)), mem.starts[mem.starts.size() - 1], d.vec, &cond)) {
      return Lanes(d.vec, ForKind::kUnrolled, [&](const PrimExpr& l) -> Stmt {
        if (load) return BufferStore(f.local, Load(mem.buffer, idx(l), ft), {reg(l)});
        return Store(mem.buffer, idx(l), cast(mt, BufferLoad(f.local, {reg(l)})));
      });
    }
    Stmt s = VectorLanes(d.vec, mt, [&](const PrimExpr& l) -> Stmt {
      if (load) return BufferStore(f.local, cast(ft, BufferLoad(mem.buffer, idx(l))), {reg(l)});
      return BufferStore(mem.buffer, cast(mt, BufferLoad(f.local, {reg(l)})), idx(l));
    });
    if (!cond.defined()) return s;
    if (!load) return IfThenElse(cond, s);
    // Reads outside the tensor give 0.
    return IfThenElse(cond, s, VectorLanes(d.vec, ft, [&](const PrimExpr& l) -> Stmt {
                        return BufferStore(f.local, MakeConst(ft, 0), {reg(l)});
                      }));
  }

  // A copy between memory tiles (tensors, shared tiles): thread t moves vectors t, t + n, ... of v
  // elements (16 bytes of the wider element type, where the shape allows), each one wide load and
  // one wide store where both sides' guards allow (global to shared in a T.Pipelined loop: one
  // 16-byte cp.async), else element by element with a guard each.
  Stmt CopyMemory(const TileRegion& src, const TileRegion& dst, const std::vector<int64_t>& shape) {
    DataType t = dst.buffer->dtype,
             wide = t.bytes() >= src.buffer->dtype.bytes() ? t : src.buffer->dtype;
    Dist d = RoundRobin(shape, VectorWidth(shape, wide.bytes(), threads_));
    ForKind kind = Trips(d) <= 32 ? ForKind::kUnrolled : ForKind::kSerial;
    return Own(d, kind, [&](const Var& j, const PrimExpr&, const PrimExpr& e0) -> Stmt {
      auto sidx = [&](const PrimExpr& l) { return Add(src.starts, At(d, j, e0, l)); };
      auto didx = [&](const PrimExpr& l) { return Add(dst.starts, At(d, j, e0, l)); };
      PrimExpr scond, dcond;
      Stmt s = VectorLanes(d.vec, wide, [&](const PrimExpr& l) -> Stmt {
        return BufferStore(dst.buffer, cast(t, BufferLoad(src.buffer, sidx(l))), didx(l));
      });
      if (!VectorGuard(src.buffer, sidx(Int32(0)), src.starts[src.starts.size() - 1], d.vec,
                       &scond) ||
          !VectorGuard(dst.buffer, didx(Int32(0)), dst.starts[dst.starts.size() - 1], d.vec,
                       &dcond)) {
        // A vector that may straddle a tensor's edge (a symbolic row length): whole when both of
        // its ends are inside both tensors (the code generator and cp.async test the address's
        // alignment at run time), else lane by lane, each guarded.
        Stmt lanes = Lanes(d.vec, ForKind::kUnrolled, [&](const PrimExpr& l) {
          return Store(dst.buffer, didx(l), Load(src.buffer, sidx(l), t));
        });
        PrimExpr all;
        auto need = [&](const PrimExpr& c) {
          if (c.defined()) all = all.defined() ? And(all, c) : c;
        };
        PrimExpr last = Int32(d.vec - 1);
        need(InBounds(src.buffer, sidx(Int32(0))));
        need(InBounds(src.buffer, sidx(last)));
        need(InBounds(dst.buffer, didx(Int32(0))));
        need(InBounds(dst.buffer, didx(last)));
        return all.defined() ? IfThenElse(all, s, lanes) : s;
      }
      if (scond.defined()) {
        // Reads outside the tensor give 0.
        s = IfThenElse(scond, s, VectorLanes(d.vec, wide, [&](const PrimExpr& l) -> Stmt {
                         return BufferStore(dst.buffer, MakeConst(t, 0), didx(l));
                       }));
      }
      return dcond.defined() ? IfThenElse(dcond, s) : s;
    });
  }

  // The regions of a tile_copy, squeezed to a common rank and checked to have one shape.
  std::pair<TileRegion, TileRegion> CopyRegions(const CallNode* call) {
    TileRegion src = Region(call, 0), dst = Region(call, 1);
    size_t rank = std::min(src.extents.size(), dst.extents.size());
    src.extents = Squeeze(call, src, rank);
    dst.extents = Squeeze(call, dst, rank);
    for (size_t d = 0; d < rank; ++d) {
      SameExtent(call, src.extents[d], dst.extents[d], "tile_copy: extent " + std::to_string(d));
    }
    return {src, dst};
  }

  Stmt Copy(const CallNode* call) override {
    auto [src, dst] = CopyRegions(call);
    std::vector<int64_t> shape = ConstShape(dst.extents, "tile_copy");
    int64_t size = Size(shape);
    const Frag* fs = FragOf(src.buffer);
    const Frag* fd = FragOf(dst.buffer);
    DataType t = dst.buffer->dtype;
    if (fs) WholeFragment(src, *fs);
    if (fd) WholeFragment(dst, *fd);
    if (fd && !fd->replicated) {
      if (!fs) return CopySpread(src, *fd, true);
      // Fragment to fragment: one shape, so one distribution.
      Dist d = DistOf(*fd);
      return Own(d, ForKind::kUnrolled, [&](const Var&, const PrimExpr& reg0, const PrimExpr& e0) {
        return Lanes(d.vec, ForKind::kUnrolled, [&](const PrimExpr& l) {
          PrimExpr v = BufferLoad(fs->local, {add(fs->replicated ? e0 : reg0, l)});
          return BufferStore(fd->local, cast(t, v), {add(reg0, l)});
        });
      });
    }
    if (fd) {  // replicated destination: every thread all elements
      if (fs && !fs->replicated) {
        FailAt("a copy from spread fragment " + std::string(fs->logical->name) +
               " to replicated fragment " + std::string(fd->logical->name) +
               " (not supported yet)");
      }
      Var k("k");
      PrimExpr v =
          fs ? BufferLoad(fs->local, {k}) : Load(src.buffer, Add(src.starts, Unflat(k, shape)), t);
      return For(k, Int32(0), Int32(size), ForKind::kSerial,
                 BufferStore(fd->local, cast(t, v), {k}));
    }
    if (fs && !fs->replicated) return CopySpread(dst, *fs, false);
    if (!fs) return CopyMemory(src, dst, shape);
    // Into memory from a replicated fragment: each thread stores its share.
    return Own(RoundRobin(shape), ForKind::kSerial,
               [&](const Var&, const PrimExpr&, const PrimExpr& e) {
                 PrimExpr v = BufferLoad(fs->local, {e});
                 return Store(dst.buffer, Add(dst.starts, Unflat(e, shape)), cast(t, v));
               });
  }

  Stmt Fill(const CallNode* call) override {
    TileRegion dst = Region(call, 0);
    PrimExpr value = cast(dst.buffer->dtype, VisitExpr(call->args[1]));
    std::vector<int64_t> shape = ConstShape(dst.extents, "tile_fill");
    const Frag* f = FragOf(dst.buffer);
    if (f) WholeFragment(dst, *f);
    if (f && f->replicated) {
      Var k("k");
      return For(k, Int32(0), Int32(f->size), ForKind::kSerial, BufferStore(f->local, value, {k}));
    }
    if (f) {
      Dist d = DistOf(*f);
      return Own(d, ForKind::kUnrolled, [&](const Var&, const PrimExpr& reg0, const PrimExpr&) {
        return VectorLanes(d.vec, f->local->dtype, [&](const PrimExpr& l) {
          return BufferStore(f->local, value, {add(reg0, l)});
        });
      });
    }
    return Own(RoundRobin(shape), ForKind::kSerial,
               [&](const Var&, const PrimExpr&, const PrimExpr& e) {
                 return Store(dst.buffer, Add(dst.starts, Unflat(e, shape)), value);
               });
  }

  // Each thread adds the elements of a spread source fragment it holds, or else an even share; in
  // a T.Parallel body (`T.atomic_add(C[i, j], C_f[i, j])`) the thread's own element.
  Stmt AtomicAdd(const CallNode* call) override {
    AtomicOperands o = AtomicAddOperands(call);
    const Buffer& dst = o.dst.buffer;
    if (IsTileScope(dst->scope)) {
      // InjectSharedBarriers sees no write in an atomic, so it would not order the adds.
      Fail(call, "tile_atomic_add into shared tile " + std::string(dst->name) +
                     " on a GPU (only into a tensor so far)");
    }
    DataType t = dst->dtype;
    if (in_parallel_) {
      return Nest(o.dst.extents, "i", [&](const std::vector<Var>& v) {
        PrimExpr value = o.src ? Load(o.src->buffer, Offset(o.src->starts, v), t) : o.value;
        return AtomicAddAt(dst, Offset(o.dst.starts, v), value);
      });
    }
    std::vector<int64_t> shape = ConstShape(o.dst.extents, "tile_atomic_add");
    const Frag* fs = o.src ? FragOf(o.src->buffer) : nullptr;
    if (fs) WholeFragment(*o.src, *fs);
    if (fs && !fs->replicated) {
      Dist d = DistOf(*fs);
      return Own(d, ForKind::kUnrolled,
                 [&](const Var& j, const PrimExpr& reg0, const PrimExpr& e0) {
                   return Lanes(d.vec, ForKind::kUnrolled, [&](const PrimExpr& l) {
                     PrimExpr v = cast(t, BufferLoad(fs->local, {add(reg0, l)}));
                     return AtomicAddAt(dst, Add(o.dst.starts, At(d, j, e0, l)), v);
                   });
                 });
    }
    return Own(RoundRobin(shape), ForKind::kSerial,
               [&](const Var&, const PrimExpr&, const PrimExpr& e) {
                 PrimExpr v = !o.src ? o.value
                              : fs   ? cast(t, BufferLoad(fs->local, {e}))
                                     : Load(o.src->buffer, Add(o.src->starts, Unflat(e, shape)), t);
                 return AtomicAddAt(dst, Add(o.dst.starts, Unflat(e, shape)), v);
               });
  }

  Stmt Gemm(const CallNode* call) override {
    TileRegion a = Region(call, 0), b = Region(call, 1), c = Region(call, 2);
    bool ta = ConstOf(call->args[3]) == 1, tb = ConstOf(call->args[4]) == 1;
    bool clear = ConstOf(call->args[5]) == 1;
    const Frag* fc = FragOf(c.buffer);
    if (!fc) Fail(call, "tile_gemm accumulates into a fragment (T.alloc_fragment) on the GPU");
    if (fc->replicated) {
      Fail(call, "tile_gemm: accumulator " + std::string(fc->logical->name) +
                     " would be replicated in every thread (a reduction writes it, or a "
                     "T.Parallel indexes it other than by its loop variables in order), but the "
                     "GPU lowering spreads gemm accumulators over the threads");
    }
    // A or B in a fragment (attention's P @ V): every thread needs all of it, so it goes
    // through a shared scratch tile first (InjectSharedBarriers orders the writes and reads).
    std::vector<Stmt> staged;
    for (TileRegion* r : {&a, &b}) {
      const Frag* f = FragOf(r->buffer);
      if (!f) continue;
      WholeFragment(*r, *f);
      Buffer scratch =
          Scratch(std::string(f->logical->name) + "_gemm", f->logical->dtype, r->extents);
      if (f->replicated) {
        staged.push_back(Own(RoundRobin(f->shape), ForKind::kSerial,
                             [&](const Var&, const PrimExpr&, const PrimExpr& e) {
                               return BufferStore(scratch, BufferLoad(f->local, {e}),
                                                  Unflat(e, f->shape));
                             }));
      } else {
        Dist d = DistOf(*f);
        staged.push_back(
            Own(d, ForKind::kUnrolled, [&](const Var& j, const PrimExpr& reg0, const PrimExpr& e0) {
              return Lanes(d.vec, ForKind::kUnrolled, [&](const PrimExpr& l) {
                return BufferStore(scratch, BufferLoad(f->local, {add(reg0, l)}), At(d, j, e0, l));
              });
            }));
      }
      Array<PrimExpr> zeros;
      for (size_t i = 0; i < r->extents.size(); ++i) zeros.push_back(Int32(0));
      *r = TileRegion{scratch, zeros, r->extents};
    }
    WholeFragment(c, *fc);
    PrimExpr k = ta ? a.extents[0] : a.extents[1];
    SameExtent(call, ta ? a.extents[1] : a.extents[0], c.extents[0], "tile_gemm: M of A and C");
    SameExtent(call, tb ? b.extents[0] : b.extents[1], c.extents[1], "tile_gemm: N of B and C");
    SameExtent(call, tb ? b.extents[1] : b.extents[0], k, "tile_gemm: K of A and B");
    DataType t = c.buffer->dtype;
    Dist d = DistOf(*fc);
    if (d.mma) {
      // Operand registers of each k-step, per gemm (MmaAccumulatorShapes checked the operands).
      std::string name = fc->logical->name;
      Buffer a_regs =
          MakeBuffer(name + "_a", DataType::UInt(32), {Int32(d.mma->Mi() * 4)}, "local");
      Buffer b_regs =
          MakeBuffer(name + "_b", DataType::UInt(32), {Int32(d.mma->Ni() * 2)}, "local");
      locals_.push_back(a_regs);
      locals_.push_back(b_regs);
      staged.push_back(
          MmaGemm(*d.mma, a, b, ta, tb, ConstOf(k), clear, fc->local, a_regs, b_regs, tx_));
      return SeqStmt::Flatten(Array<Stmt>(staged.begin(), staged.end()));
    }
    staged.push_back(
        Own(d, ForKind::kSerial, [&](const Var& jv, const PrimExpr& reg0, const PrimExpr& e0) {
          return Lanes(d.vec, ForKind::kSerial, [&](const PrimExpr& l) {
            Array<PrimExpr> at = At(d, jv, e0, l);
            PrimExpr i = at[0], j = at[1], r = add(reg0, l);
            Var kk("kk", k.dtype());
            Array<PrimExpr> ai = ta ? Array<PrimExpr>{kk, i} : Array<PrimExpr>{i, kk};
            Array<PrimExpr> bi = tb ? Array<PrimExpr>{j, kk} : Array<PrimExpr>{kk, j};
            PrimExpr acc = add(
                BufferLoad(fc->local, {r}),
                mul(Load(a.buffer, Add(a.starts, ai), t), Load(b.buffer, Add(b.starts, bi), t)));
            Stmt loop = For(kk, MakeConst(k.dtype(), 0), k, ForKind::kSerial,
                            BufferStore(fc->local, acc, {r}));
            if (!clear) return loop;
            return SeqStmt::Flatten(
                Array<Stmt>{BufferStore(fc->local, MakeConst(t, 0), {r}), loop});
          });
        }));
    return SeqStmt::Flatten(Array<Stmt>(staged.begin(), staged.end()));
  }

  // A shared scratch tile of the kernel: in static shared memory while the kernel's scratch tiles
  // fit the 48 KB CUDA allows statically, beyond that in dynamic shared memory ("shared.dyn", up
  // to the architecture's opt-in maximum), so that large tiles still build.
  Buffer Scratch(const std::string& name, DataType t, const Array<PrimExpr>& shape) {
    int64_t bytes = t.bytes() * t.lanes();
    for (const PrimExpr& e : shape) bytes *= ConstOf(e);
    bool fits = static_scratch_bytes_ + bytes <= kStaticScratchBytes;
    if (fits) static_scratch_bytes_ += bytes;
    Buffer b = MakeBuffer(name, t, shape, fits ? "shared" : "shared.dyn");
    scratch_.push_back(b);
    return b;
  }

  static PrimExpr Combine(const std::string& kind, const PrimExpr& a, const PrimExpr& b) {
    return kind == "sum" ? add(a, b) : kind == "max" ? max(a, b) : min(a, b);
  }

  Stmt Reduce(const CallNode* call) override {
    TileRegion src = Region(call, 0), dst = Region(call, 1);
    std::string kind = call->args[2].as<StringImmNode>()
                           ? std::string(call->args[2].as<StringImmNode>()->value)
                           : "";
    int64_t dim = ConstOf(call->args[3]);
    bool clear = ConstOf(call->args[4]) == 1;
    const Frag* fs = FragOf(src.buffer);
    const Frag* fd = FragOf(dst.buffer);
    if (!fs || !fd || !fd->replicated) {
      Fail(call, "tile_reduce goes from a fragment to a fragment on the GPU so far");
    }
    WholeFragment(src, *fs);
    WholeFragment(dst, *fd);
    if (dim < 0 || dim >= static_cast<int64_t>(fs->shape.size()) ||
        (kind != "sum" && kind != "max" && kind != "min")) {
      Fail(call, "tile_reduce takes a kind (sum, max, min) and a dim of the source");
    }
    std::vector<int64_t> kept;
    for (size_t d = 0; d < fs->shape.size(); ++d) {
      if (static_cast<int64_t>(d) != dim) kept.push_back(fs->shape[d]);
    }
    if (kept != fd->shape) {
      Fail(call, "tile_reduce: the destination's shape is not the source's without axis " +
                     std::to_string(dim));
    }
    if (!fs->replicated && dim + 1 == static_cast<int64_t>(fs->shape.size())) {
      if (std::optional<MmaGrid> g = DistOf(*fs).mma)
        return MmaRowReduce(*fs, *fd, *g, kind, clear);
      Stmt fast = RowReduce(*fs, *fd, kind, clear);
      if (fast.defined()) return fast;
    }
    DataType t = fd->logical->dtype;
    std::vector<Stmt> seq;
    Buffer from = fs->local;
    // Over the last axis, a vector of v elements lies in one row: each thread reduces its own
    // vectors and the scratch holds one partial result a vector, v times smaller than the tile
    // (128 x 192 float32 scores: 12 KB instead of 96 KB, over the 48 KB of static shared memory).
    int64_t v = fs->vec, reduced = fs->shape[dim];
    bool by_vector = !fs->replicated && dim + 1 == static_cast<int64_t>(fs->shape.size()) &&
                     v > 1 && reduced % v == 0;
    if (!fs->replicated) {
      // Through a shared scratch tile: every thread then sees every element (or vector). The
      // reductions of a kernel share one scratch tile of a type and size (InjectSharedBarriers
      // orders one's reads before the next one's writes): attention reduces each score tile
      // twice, and two tiles did not fit where one does.
      DataType st = by_vector ? t : fs->logical->dtype;
      int64_t items = by_vector ? fs->size / v : fs->size;
      Buffer& slot = reduce_scratch_[{st.str(), items}];
      if (!slot.defined()) {
        slot = Scratch(std::string(fs->logical->name) + "_red", st, {Int32(items)});
      }
      Buffer scratch = slot;
      Dist d = DistOf(*fs);
      seq.push_back(Own(
          d, ForKind::kUnrolled, [&](const Var&, const PrimExpr& reg0, const PrimExpr& e0) -> Stmt {
            if (by_vector) {
              PrimExpr acc = cast(t, BufferLoad(fs->local, {reg0}));
              for (int64_t l = 1; l < v; ++l) {
                acc = Combine(kind, acc, cast(t, BufferLoad(fs->local, {add(reg0, Int32(l))})));
              }
              return BufferStore(scratch, acc, {floordiv(e0, Int32(v))});
            }
            return Lanes(d.vec, ForKind::kUnrolled, [&](const PrimExpr& l) {
              return BufferStore(scratch, BufferLoad(fs->local, {add(reg0, l)}), {add(e0, l)});
            });
          }));
      from = scratch;
      if (by_vector) reduced /= v;
    }
    Var o("o"), rr("rr");
    // Row o of the kept axes, element (or vector) rr along dim: the source's flat index.
    Array<PrimExpr> kept_idx = Unflat(o, kept);
    PrimExpr flat = Int32(0);
    for (size_t d = 0, j = 0; d < fs->shape.size(); ++d) {
      bool at_dim = static_cast<int64_t>(d) == dim;
      PrimExpr idx = at_dim ? PrimExpr(rr) : kept_idx[j++];
      flat = add(mul(flat, Int32(at_dim ? reduced : fs->shape[d])), idx);
    }
    PrimExpr prev = BufferLoad(fd->local, {o});
    PrimExpr x = cast(t, BufferLoad(from, {flat}));
    Stmt step = For(rr, Int32(0), Int32(reduced), ForKind::kSerial,
                    BufferStore(fd->local, Combine(kind, prev, x), {o}));
    PrimExpr identity = kind == "sum" ? MakeConst(t, 0) : Extreme(t, kind == "min");
    Stmt row =
        clear ? SeqStmt::Flatten(Array<Stmt>{BufferStore(fd->local, identity, {o}), step}) : step;
    seq.push_back(For(o, Int32(0), Int32(fd->size), ForKind::kSerial, row));
    return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
  }

  // How a reduction over the last axis of spread fragment fs goes by warp shuffles (see the file
  // comment), with n threads and W vectors of v in a row:
  // - W % n == 0 (`all`): every thread holds W / n vectors of every row, a row's group is all n
  //   threads;
  // - n % W == 0: a row lies on W consecutive threads, vector j of thread t is one of row
  //   j * (n / W) + t / W.
  // A group of G threads spans whole warps (G % 32 == 0) or lies in one (G divides 32); n is a
  // multiple of 32, since a shuffle needs every lane of its warp. Each thread folds its elements
  // into `held` partial results first: one a row (all), else one a vector.
  struct Shuffles {
    int64_t v, rows, w, g, lanes, segments, held, per_row;
    bool all;
  };
  std::optional<Shuffles> RowShuffles(const Frag& fs) {
    Shuffles s;
    int64_t n = threads_, row_len = fs.shape.back();
    s.v = fs.vec;
    // The geometry below is the round-robin one's.
    if (fs.replicated || DistOf(fs).mma || n % 32 != 0 || row_len % s.v != 0) return std::nullopt;
    s.rows = fs.size / row_len;
    s.w = row_len / s.v;
    s.all = s.w % n == 0;
    if (!s.all && n % s.w != 0) return std::nullopt;
    s.g = s.all ? n : s.w;
    if (s.g > 32 ? s.g % 32 != 0 : 32 % s.g != 0) return std::nullopt;
    s.lanes = std::min<int64_t>(s.g, 32);
    s.segments = s.g / s.lanes;
    s.held = s.all ? s.rows : Trips(DistOf(fs));
    s.per_row = s.all ? s.w / n : 1;
    return s;
  }

  // The per-thread partial results of a shuffle reduction of fs, one a held row or vector.
  Buffer PartialsOf(const Frag& fs, const Frag& fd, const Shuffles& s) {
    Buffer part = MakeBuffer(std::string(fs.logical->name) + "_part", fd.logical->dtype,
                             {Int32(s.held)}, "local");
    locals_.push_back(part);
    return part;
  }

  // Partial result p of a shuffle reduction takes register reg of the source (reg0 + l of the
  // thread's vector j): with `all`, p is the row, j / (W / n); else the vector j.
  Stmt FoldRegister(const Frag& fs, const Buffer& part, const Shuffles& s, const std::string& kind,
                    const PrimExpr& j, const PrimExpr& reg) {
    PrimExpr p = s.all ? floordiv(j, Int32(s.per_row)) : j;
    DataType t = part->dtype;
    return BufferStore(
        part, Combine(kind, BufferLoad(part, {p}), cast(t, BufferLoad(fs.local, {reg}))), {p});
  }

  // The reduction over the last axis of spread fragment fs by warp shuffles, or an undefined Stmt
  // where it does not apply. `folded`, when defined, already holds each thread's partial results
  // (FuseParallel folded them in the T.Parallel nest that wrote fs).
  Stmt RowReduce(const Frag& fs, const Frag& fd, const std::string& kind, bool clear,
                 Buffer folded = Buffer()) {
    std::optional<Shuffles> geo = RowShuffles(fs);
    if (!geo) return Stmt();
    const Shuffles& s = *geo;
    int64_t n = threads_, v = s.v, rows = s.rows, w = s.w, g = s.g, lanes = s.lanes;
    int64_t segments = s.segments, held = s.held;
    bool all = s.all;
    DataType t = fd.logical->dtype;
    PrimExpr identity = kind == "sum" ? MakeConst(t, 0) : Extreme(t, kind == "min");
    Buffer part = folded.defined() ? folded : PartialsOf(fs, fd, s);
    auto combine_into = [&](const Buffer& buf, const PrimExpr& i, const PrimExpr& x) {
      return BufferStore(buf, Combine(kind, BufferLoad(buf, {i}), x), {i});
    };
    std::vector<Stmt> seq;
    // A fresh unrolled loop for each use: a variable is bound at one place.
    auto loop = [](const char* name, int64_t extent, const std::function<Stmt(const Var&)>& body) {
      Var i(name);
      return For(i, Int32(0), Int32(extent), ForKind::kUnrolled, body(i));
    };
    // Each thread's own elements of each row it holds, unless folded already.
    if (!folded.defined() && all) {
      int64_t per_row = s.per_row;
      seq.push_back(loop("p", rows, [&](const Var& p) {
        Stmt vecs = loop("k", per_row, [&](const Var& k) {
          return Lanes(v, ForKind::kUnrolled, [&](const PrimExpr& l) {
            PrimExpr reg = add(mul(add(mul(p, Int32(per_row)), k), Int32(v)), l);
            return combine_into(part, p, cast(t, BufferLoad(fs.local, {reg})));
          });
        });
        return SeqStmt::Flatten(Array<Stmt>{BufferStore(part, identity, {p}), vecs});
      }));
    } else if (!folded.defined()) {
      seq.push_back(loop("p", held, [&](const Var& p) {
        Stmt vec = Lanes(v, ForKind::kUnrolled, [&](const PrimExpr& l) {
          return combine_into(part, p, cast(t, BufferLoad(fs.local, {add(mul(p, Int32(v)), l)})));
        });
        PrimExpr valid = LT(add(mul(p, Int32(n)), tx_), Int32(rows * w));
        return SeqStmt::Flatten(
            Array<Stmt>{BufferStore(part, identity, {p}), IfThenElse(valid, vec)});
      }));
    }
    // The lanes of a group within a warp, by xor shuffles: every lane executes them.
    if (lanes > 1) {
      seq.push_back(loop("p", held, [&](const Var& p) {
        std::vector<Stmt> shuffles;
        for (int64_t s = lanes / 2; s >= 1; s /= 2) {
          PrimExpr other =
              Call(t, builtin::shfl_xor(), {BufferLoad(part, {p}), Int32(s), Int32(32)});
          shuffles.push_back(combine_into(part, p, other));
        }
        return SeqStmt::Flatten(Array<Stmt>(shuffles.begin(), shuffles.end()));
      }));
    }
    auto finish = [&](const std::function<PrimExpr(const PrimExpr& row, int64_t s)>& value) {
      Var o("o");
      std::vector<Stmt> fold;
      for (int64_t s = 0; s < segments; ++s) {
        fold.push_back(s == 0 && clear ? BufferStore(fd.local, value(o, s), {o})
                                       : combine_into(fd.local, o, value(o, s)));
      }
      return For(o, Int32(0), Int32(rows), ForKind::kUnrolled,
                 SeqStmt::Flatten(Array<Stmt>(fold.begin(), fold.end())));
    };
    if (all && n == 32) {  // one warp: every lane holds every row's result
      seq.push_back(finish([&](const PrimExpr& o, int64_t) { return BufferLoad(part, {o}); }));
      return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
    }
    // One slot per row and warp segment of its group, read back by every thread in one order.
    Buffer slots = Scratch(std::string(fs.logical->name) + "_slots", t, {Int32(rows * segments)});
    PrimExpr seg = floordiv(floormod(tx_, Int32(g)), Int32(lanes));
    seq.push_back(loop("p", held, [&](const Var& p) {
      PrimExpr row = all ? PrimExpr(p) : add(mul(p, Int32(n / w)), floordiv(tx_, Int32(w)));
      PrimExpr writer = EQ(floormod(tx_, Int32(lanes)), Int32(0));
      if (!all) writer = And(writer, LT(add(mul(p, Int32(n)), tx_), Int32(rows * w)));
      return IfThenElse(
          writer, BufferStore(slots, BufferLoad(part, {p}), {add(mul(row, Int32(segments)), seg)}));
    }));
    seq.push_back(finish([&](const PrimExpr& o, int64_t s) {
      return BufferLoad(slots, {add(mul(o, Int32(segments)), Int32(s))});
    }));
    return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
  }

  // The reduction over the rows of an mma accumulator fragment fs (tile_mma.h): row 16 mi + 8 h
  // + lane / 4 of a warp's block lies on the four lanes of a quad, in each of the wn warps of its
  // grid row. Each thread folds its elements of its 2 MI rows, two xor shuffles combine the quad,
  // lane 0 of the quad writes one shared slot per row and warp column, and every thread reads the
  // slots of every row back in the same order (fd is replicated).
  Stmt MmaRowReduce(const Frag& fs, const Frag& fd, const MmaGrid& g, const std::string& kind,
                    bool clear) {
    DataType t = fd.logical->dtype;
    PrimExpr identity = kind == "sum" ? MakeConst(t, 0) : Extreme(t, kind == "min");
    int64_t held = 2 * g.Mi(), ni = g.Ni();
    Buffer part = MakeBuffer(std::string(fs.logical->name) + "_part", t, {Int32(held)}, "local");
    locals_.push_back(part);
    Buffer slots = Scratch(std::string(fs.logical->name) + "_slots", t, {Int32(g.m * g.wn)});
    auto loop = [](const char* name, int64_t extent, const std::function<Stmt(const Var&)>& body) {
      Var i(name);
      return For(i, Int32(0), Int32(extent), ForKind::kUnrolled, body(i));
    };
    auto combine_into = [&](const Buffer& buf, const PrimExpr& i, const PrimExpr& x) {
      return BufferStore(buf, Combine(kind, BufferLoad(buf, {i}), x), {i});
    };
    std::vector<Stmt> seq;
    seq.push_back(loop("p", held, [&](const Var& p) { return BufferStore(part, identity, {p}); }));
    // Vector j = 2 (mi NI + ni) + h is in row p = 2 mi + h.
    seq.push_back(loop("j", g.Vectors(), [&](const Var& j) {
      PrimExpr p = add(mul(floordiv(j, Int32(2 * ni)), Int32(2)), floormod(j, Int32(2)));
      return Lanes(2, ForKind::kUnrolled, [&](const PrimExpr& l) {
        return combine_into(part, p, cast(t, BufferLoad(fs.local, {add(mul(j, Int32(2)), l)})));
      });
    }));
    seq.push_back(loop("p", held, [&](const Var& p) {
      std::vector<Stmt> shuffles;
      for (int64_t x : {1, 2}) {
        PrimExpr other = Call(t, builtin::shfl_xor(), {BufferLoad(part, {p}), Int32(x), Int32(32)});
        shuffles.push_back(combine_into(part, p, other));
      }
      return SeqStmt::Flatten(Array<Stmt>(shuffles.begin(), shuffles.end()));
    }));
    PrimExpr warp = floordiv(tx_, Int32(32)), lane = floormod(tx_, Int32(32));
    seq.push_back(loop("p", held, [&](const Var& p) {
      // Row p = 2 mi + h is that of vector 2 (mi NI) + h.
      PrimExpr first = add(mul(floordiv(p, Int32(2)), Int32(2 * ni)), floormod(p, Int32(2)));
      PrimExpr row = MmaElement(g, tx_, first, Int32(0))[0];
      PrimExpr slot = add(mul(row, Int32(g.wn)), floormod(warp, Int32(g.wn)));
      return IfThenElse(EQ(floormod(lane, Int32(4)), Int32(0)),
                        BufferStore(slots, BufferLoad(part, {p}), {slot}));
    }));
    Var o("o");
    std::vector<Stmt> fold;
    for (int64_t c = 0; c < g.wn; ++c) {
      PrimExpr v = BufferLoad(slots, {add(mul(o, Int32(g.wn)), Int32(c))});
      fold.push_back(c == 0 && clear ? BufferStore(fd.local, v, {o})
                                     : combine_into(fd.local, o, v));
    }
    seq.push_back(For(o, Int32(0), Int32(g.m), ForKind::kUnrolled,
                      SeqStmt::Flatten(Array<Stmt>(fold.begin(), fold.end()))));
    return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
  }

  // What a T.Parallel nest does for the tile operation right after it (FuseParallel): fold each
  // element of `frag` into a reduction's partial results, or store each vector of it.
  struct Fold {
    Buffer part;
    Shuffles s;
    std::string kind;
  };
  struct After {
    const Frag* frag = nullptr;
    std::optional<Fold> fold;
    std::optional<TileRegion> store;
  };

  // A T.Parallel nest that writes spread fragment f, directly followed by a tile operation that
  // reads f whole, element by element:
  // - a T.reduce over the last axis of f that goes by shuffles (softmax's `e[i, j] = T.exp2(...)`,
  //   then `T.reduce_sum(e, ...)`): each thread folds each element into its partial results right
  //   after the element's body, not in a second pass over the registers;
  // - a T.copy of f into memory the nest does not touch: each vector is stored right after its
  //   lanes are computed, not after the whole nest.
  // Each register is then read where it is written, so the registers of a fragment need not all
  // be live at once (the CUDA compiler drops those nothing else reads): rows of 32768 16-bit
  // elements at 512 threads fit 64 registers a thread, two blocks a multiprocessor. The result is
  // the same: each element of the nest writes only its own register, the fold and the store read
  // it after that, in the operation's own order. An undefined Stmt where this does not apply.
  Stmt FuseParallel(const Stmt& first, const Stmt& second) {
    const auto* par = first.as<ForNode>();
    const CallNode* call = TileCall(second);
    if (!par || !par->annotations.count("tessel.tile_parallel") || !call) return Stmt();
    std::string name = (*call->op.as<Op>())->name;
    auto whole = [&](const TileRegion& r, const Frag* f) {
      if (r.starts.size() != f->shape.size()) return false;
      for (size_t d = 0; d < r.starts.size(); ++d) {
        if (ConstOf(r.starts[d]) != 0 || ConstOf(r.extents[d]) != f->shape[d]) return false;
      }
      return true;
    };
    After after;
    const Frag* fd = nullptr;
    std::string kind;
    std::unordered_set<const VarNode*> untouched;  // what the nest must not read or write
    if (name == "tile_reduce" && call->args.size() >= 5) {
      auto src = AsTileRegion(call->args[0]), dst = AsTileRegion(call->args[1]);
      const auto* kind_imm = call->args[2].as<StringImmNode>();
      if (!src || !dst || !kind_imm) return Stmt();
      after.frag = FragOf(src->buffer);
      fd = FragOf(dst->buffer);
      kind = kind_imm->value;
      const Frag* fs = after.frag;
      if (!fs || !fd || fs->replicated || !fd->replicated || !whole(*src, fs) || !whole(*dst, fd) ||
          ConstOf(call->args[3]) + 1 != static_cast<int64_t>(fs->shape.size()) ||
          (kind != "sum" && kind != "max" && kind != "min") ||
          fd->shape != std::vector<int64_t>(fs->shape.begin(), fs->shape.end() - 1)) {
        return Stmt();
      }
    } else if (name == "tile_copy" && call->args.size() >= 2) {
      auto src = AsTileRegion(call->args[0]), dst = AsTileRegion(call->args[1]);
      if (!src || !dst || FragOf(dst->buffer)) return Stmt();
      after.frag = FragOf(src->buffer);
      if (!after.frag || after.frag->replicated) return Stmt();
      auto regions = CopyRegions(call);
      if (!whole(regions.first, after.frag)) return Stmt();
      after.store = regions.second;
      untouched.insert(dst->buffer->data.get());
    } else {
      return Stmt();
    }
    // The nest spans f's shape, writes f, and writes no replicated fragment (then it runs whole).
    std::vector<int64_t> shape;
    Stmt body = first;
    while (const auto* l = body.as<ForNode>()) {
      if (!l->annotations.count("tessel.tile_parallel")) break;
      shape.push_back(ConstOf(l->min) == 0 ? ConstOf(l->extent) : -1);
      body = l->body;
    }
    bool writes = false, runs_whole = false;
    PostOrderVisit(body, [&](const ObjectRef& n) {
      const auto* st = n.as<BufferStoreNode>();
      if (st && st->buffer->data.same_as(after.frag->logical->data)) writes = true;
      if (st && replicated_.count(st->buffer->data.get())) runs_whole = true;
    });
    if (shape != after.frag->shape || !writes || runs_whole || Touches(body, untouched)) {
      return Stmt();
    }
    Stmt init;
    if (fd) {
      std::optional<Shuffles> geo = RowShuffles(*after.frag);
      if (!geo) return Stmt();
      Buffer part = PartialsOf(*after.frag, *fd, *geo);
      DataType t = fd->logical->dtype;
      PrimExpr identity = kind == "sum" ? MakeConst(t, 0) : Extreme(t, kind == "min");
      Var p("p");
      init =
          For(p, Int32(0), Int32(geo->held), ForKind::kUnrolled, BufferStore(part, identity, {p}));
      after.fold = Fold{part, *geo, kind};
    }
    after_ = after;
    Stmt nest = VisitStmt(first);
    after_ = After();
    if (!fd) return nest;
    Stmt rest =
        WithSpan(RowReduce(*after.frag, *fd, kind, ConstOf(call->args[4]) == 1, after.fold->part),
                 second->span);
    return SeqStmt::Flatten(Array<Stmt>{init, nest, rest});
  }

  Stmt Parallel(const ForNode* op) {
    After after = after_;
    after_ = After();
    // A nest that writes a replicated fragment runs whole on every thread, over replicated
    // fragments only (ReplicatedFragments made them so).
    bool whole = false;
    PostOrderVisit(op->body, [&](const ObjectRef& n) {
      const auto* st = n.as<BufferStoreNode>();
      if (st && replicated_.count(st->buffer->data.get())) whole = true;
    });
    if (whole) {
      std::function<Stmt(const ForNode*)> serial = [&](const ForNode* f) -> Stmt {
        const auto* g = f->body.as<ForNode>();
        Stmt inner =
            g && g->annotations.count("tessel.tile_parallel") ? serial(g) : VisitStmt(f->body);
        return For(f->loop_var, f->min, f->extent, ForKind::kSerial, inner);
      };
      return WithSpan(serial(op), op->span);
    }
    std::vector<const ForNode*> loops{op};
    Stmt body = op->body;
    while (const auto* inner = body.as<ForNode>()) {
      if (!inner->annotations.count("tessel.tile_parallel")) break;
      loops.push_back(inner);
      body = inner->body;
    }
    std::vector<int64_t> shape;
    Array<PrimExpr> vars;
    for (const ForNode* l : loops) {
      if (ConstOf(l->min) != 0 || ConstOf(l->extent) < 1) {
        FailAt("T.Parallel needs constant extents from 0 on the GPU");
      }
      shape.push_back(ConstOf(l->extent));
      vars.push_back(l->loop_var);
    }
    Dist dist = DistOf(shape);
    Prefetch rows = ContiguousReads(body, vars, dist.vec);
    return Own(
        dist, ForKind::kUnrolled, [&](const Var& jv, const PrimExpr& reg0, const PrimExpr& e0) {
          std::vector<Stmt> seq;
          for (const auto& [tmp, load] : rows.order) {
            seq.push_back(VectorLanes(dist.vec, tmp->dtype, [&](const PrimExpr& l) {
              Array<PrimExpr> at = At(dist, jv, e0, l);
              VarMap sub;
              for (size_t d = 0; d < loops.size(); ++d) sub[loops[d]->loop_var.get()] = at[d];
              Array<PrimExpr> idx;
              for (const PrimExpr& i : load->indices) idx.push_back(VisitExpr(Substitute(i, sub)));
              return BufferStore(tmp, BufferLoad(load->buffer, idx), {l});
            }));
          }
          seq.push_back(Lanes(dist.vec, ForKind::kUnrolled, [&](const PrimExpr& l) {
            Stmt s =
                OwnElement(body, loops, vars, shape, add(reg0, l), At(dist, jv, e0, l), rows, l);
            if (!after.fold) return s;
            const Fold& f = *after.fold;
            return SeqStmt::Flatten(
                Array<Stmt>{s, FoldRegister(*after.frag, f.part, f.s, f.kind, jv, add(reg0, l))});
          }));
          if (after.store) {
            seq.push_back(CopyVector(*after.store, *after.frag, false, dist, jv, reg0, e0));
          }
          return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
        });
  }

  // Reads in a T.Parallel body that can be made a vector at a time before its lanes run: loads of
  // a tensor or shared tile (not a fragment) that the body does not write, whose last index is the
  // innermost loop variable itself and whose other indices do not use it (W[j], X[i, j]), in a
  // body that evaluates every expression unconditionally (no if, Select or if_then_else), so that
  // reading a whole vector reads nothing the lanes would not. Each maps to the per-thread buffer of
  // v elements that holds the vector (one per distinct buffer and indices).
  struct Prefetch {
    std::unordered_map<const BufferLoadNode*, Buffer> of;
    std::vector<std::pair<Buffer, const BufferLoadNode*>> order;  // each buffer once, in body order
  };
  Prefetch ContiguousReads(const Stmt& body, const Array<PrimExpr>& vars, int64_t v) {
    Prefetch out;
    if (v == 1) return out;
    bool conditional = false;
    std::unordered_set<const VarNode*> written;
    std::vector<const BufferLoadNode*> loads;
    PostOrderVisit(body, [&](const ObjectRef& n) {
      if (n.as<IfThenElseNode>() || n.as<SelectNode>() || n.as<WhileNode>() || n.as<AndNode>() ||
          n.as<OrNode>()) {
        conditional = true;
      }
      if (const auto* call = n.as<CallNode>()) {
        if (call->op.same_as(builtin::if_then_else())) conditional = true;
        // The operands of a tile operation in the body (T.atomic_add) are where it writes.
        auto op = call->op.as<Op>();
        if (op && IsTileOp((*op)->name)) conditional = true;
      }
      if (const auto* st = n.as<BufferStoreNode>()) written.insert(st->buffer->data.get());
      if (const auto* ld = n.as<BufferLoadNode>()) loads.push_back(ld);
    });
    if (conditional) return out;
    const PrimExpr& inner = vars[vars.size() - 1];
    std::map<std::string, Buffer> by_text;
    for (const BufferLoadNode* ld : loads) {
      const Buffer& b = ld->buffer;
      if (FragOf(b) || written.count(b->data.get()) || !b->strides.empty() || ld->indices.empty() ||
          !ld->indices[ld->indices.size() - 1].same_as(inner) || ld->dtype.lanes() != 1) {
        continue;
      }
      std::string scope = b->scope;
      if (scope == "local" || scope == "local.fragment") continue;
      bool uses_inner = false;
      for (size_t d = 0; d + 1 < ld->indices.size(); ++d) {
        PostOrderVisit(ld->indices[d], [&](const ObjectRef& n) {
          if (n.same_as(inner)) uses_inner = true;
        });
      }
      if (uses_inner) continue;
      std::string key = AsText(GetRef<PrimExpr>(ld));
      auto it = by_text.find(key);
      if (it == by_text.end()) {
        Buffer tmp = MakeBuffer(std::string(b->name) + "_vec", b->dtype, {Int32(v)}, "local");
        locals_.push_back(tmp);
        it = by_text.emplace(key, tmp).first;
        out.order.emplace_back(tmp, ld);
      }
      out.of[ld] = it->second;
    }
    return out;
  }

  // The body of a T.Parallel nest for this thread's element at `at`, register r of the spread
  // fragments of its shape, lane l of its vector (the index into the buffers of `rows`).
  Stmt OwnElement(const Stmt& body, const std::vector<const ForNode*>& loops,
                  const Array<PrimExpr>& vars, const std::vector<int64_t>& shape, const PrimExpr& r,
                  const Array<PrimExpr>& at, const Prefetch& rows, const PrimExpr& l) {
    // A spread fragment of this shape indexed by the loop variables: the thread's register r.
    class OwnRegisters : public StmtExprMutator {
     public:
      OwnRegisters(Simt* s, const Array<PrimExpr>& vars, const std::vector<int64_t>& shape,
                   PrimExpr r, const std::unordered_map<const BufferLoadNode*, Buffer>& rows,
                   PrimExpr l)
          : s_(s), vars_(vars), shape_(shape), r_(std::move(r)), rows_(rows), l_(std::move(l)) {}
      using StmtExprMutator::VisitExpr_;
      using StmtExprMutator::VisitStmt_;
      PrimExpr VisitExpr_(const BufferLoadNode* op) override {
        auto it = rows_.find(op);
        if (it != rows_.end()) return BufferLoad(it->second, {l_});
        if (const Frag* f = Mine(op->buffer, op->indices)) return BufferLoad(f->local, {r_});
        return StmtExprMutator::VisitExpr_(op);
      }
      Stmt VisitStmt_(const BufferStoreNode* op) override {
        if (const Frag* f = Mine(op->buffer, op->indices)) {
          return BufferStore(f->local, VisitExpr(op->value), {r_});
        }
        return StmtExprMutator::VisitStmt_(op);
      }

     private:
      const Frag* Mine(const Buffer& b, const Array<PrimExpr>& idx) {
        const Frag* f = s_->FragOf(b);
        if (!f || f->replicated) return nullptr;
        bool same = f->shape == shape_ && idx.size() == vars_.size();
        for (size_t d = 0; same && d < idx.size(); ++d) same = idx[d].same_as(vars_[d]);
        if (!same) {
          s_->FailAt("inside T.Parallel, spread fragment " + std::string(b->name) +
                     " must have the loops' shape and be indexed by the loop variables in order");
        }
        return f;
      }
      Simt* s_;
      Array<PrimExpr> vars_;
      std::vector<int64_t> shape_;
      PrimExpr r_;
      const std::unordered_map<const BufferLoadNode*, Buffer>& rows_;
      PrimExpr l_;
    };
    Stmt s = OwnRegisters(this, vars, shape, r, rows.of, l).VisitStmt(body);
    VarMap sub;
    for (size_t d = 0; d < loops.size(); ++d) sub[loops[d]->loop_var.get()] = at[d];
    s = Substitute(s, sub);
    bool saved = in_parallel_;
    in_parallel_ = true;
    s = VisitStmt(s);
    in_parallel_ = saved;
    return s;
  }

  Stmt Kernel(const ForNode* k) {
    if (in_kernel_) FailAt("a T.Kernel inside a T.Kernel");
    // Other lowerings of a T.Kernel (e.g. for Hopper) take it here, before the SIMT form.
    auto threads = k->annotations.Get("tessel.tile_kernel")->try_cast<int64_t>();
    if (!threads || *threads < 1) FailAt("T.Kernel without a thread count");
    threads_ = *threads;
    std::vector<const ForNode*> blocks{k};
    Stmt body = k->body;
    while (const auto* b = body.as<ForNode>()) {
      if (b->kind != ForKind::kThreadBinding ||
          std::string(b->thread_tag).rfind("blockIdx", 0) != 0)
        break;
      blocks.push_back(b);
      body = b->body;
    }
    for (const ForNode* b : blocks) analyzer_.Bind(b->loop_var, Range(b->min, b->extent), true);
    // The allocations and declarations at the top of the kernel, in order: shared ones stay
    // outside the thread loop, fragments become per-thread registers, the rest go inside it.
    std::vector<Stmt> outer, inner;
    std::vector<const DeclBufferNode*> fragments;
    std::unordered_set<const VarNode*> shared_vars, fragment_vars;
    while (true) {
      if (const auto* a = body.as<AllocateNode>()) {
        std::string scope = a->buffer_var->storage_scope;
        if (scope == "local.fragment") {
          fragment_vars.insert(a->buffer_var.get());
        } else if (scope == "shared" || scope == "shared.dyn") {
          shared_vars.insert(a->buffer_var.get());
          outer.push_back(body);
        } else {
          inner.push_back(body);
        }
        body = a->body;
      } else if (const auto* d = body.as<DeclBufferNode>()) {
        const VarNode* data = d->buffer->data.get();
        if (fragment_vars.count(data)) {
          fragments.push_back(d);
          fragment_vars.erase(data);
        } else {
          (shared_vars.count(data) ? outer : inner).push_back(body);
        }
        body = d->body;
      } else {
        break;
      }
    }
    if (!fragment_vars.empty()) {
      FailAt("fragment " + std::string((*fragment_vars.begin())->name_hint) +
             " is allocated without a buffer declaration (use T.alloc_fragment)");
    }
    std::vector<Buffer> fragment_buffers;
    for (const DeclBufferNode* d : fragments) fragment_buffers.push_back(d->buffer);
    std::unordered_set<const VarNode*> replicated = ReplicatedFragments(body, fragment_buffers);
    replicated_ = replicated;
    tx_ = Var("tx");
    analyzer_.Bind(tx_, Range(Int32(0), Int32(threads_)), true);
    // The narrowest element each spread fragment shape meets: its fragments' and those of the
    // buffers they are copied from and to.
    std::map<std::vector<int64_t>, int64_t> narrowest;
    std::unordered_map<const VarNode*, std::vector<int64_t>> spread_shape;
    for (const DeclBufferNode* d : fragments) {
      if (replicated.count(d->buffer->data.get())) continue;
      auto shape = ConstShape(d->buffer->shape, "fragment " + std::string(d->buffer->name));
      spread_shape[d->buffer->data.get()] = shape;
      auto it = narrowest.emplace(shape, d->buffer->dtype.bytes()).first;
      it->second = std::min<int64_t>(it->second, d->buffer->dtype.bytes());
    }
    PostOrderVisit(body, [&](const ObjectRef& n) {
      const auto* call = n.as<CallNode>();
      auto op = call ? call->op.as<Op>() : std::nullopt;
      if (!op || (*op)->name != "tile_copy" || call->args.size() < 2) return;
      auto a = AsTileRegion(call->args[0]), b = AsTileRegion(call->args[1]);
      if (!a || !b) return;
      for (const auto& [frag, other] : {std::pair{a, b}, std::pair{b, a}}) {
        auto it = spread_shape.find(frag->buffer->data.get());
        if (it == spread_shape.end()) continue;
        int64_t& w = narrowest[it->second];
        w = std::min<int64_t>(w, other->buffer->dtype.bytes());
      }
    });
    for (const auto& [shape, bytes] : narrowest) {
      vec_of_shape_[shape] = VectorWidth(shape, bytes, threads_);
    }
    mma_of_shape_ = MmaAccumulatorShapes(body, fragment_buffers, replicated, threads_, arch_);
    for (const auto& [shape, grid] : mma_of_shape_) vec_of_shape_[shape] = 2;
    for (const DeclBufferNode* d : fragments) {
      Frag f;
      f.logical = d->buffer;
      f.shape = ConstShape(d->buffer->shape, "fragment " + std::string(d->buffer->name));
      f.size = Size(f.shape);
      f.replicated = replicated.count(d->buffer->data.get()) != 0;
      f.vec = f.replicated ? 1 : vec_of_shape_.at(f.shape);
      int64_t regs = f.replicated ? f.size : Trips(DistOf(f)) * f.vec;
      f.local = MakeBuffer(std::string(d->buffer->name) + "_local", d->buffer->dtype, {Int32(regs)},
                           "local");
      frags_[d->buffer->data.get()] = f;
    }
    in_kernel_ = true;
    Stmt lowered = VisitStmt(body);
    in_kernel_ = false;
    std::map<const VarNode*, int64_t> swizzled =
        MmaSwizzledTiles(body, fragment_buffers, mma_of_shape_);
    std::vector<Buffer> locals = locals_;
    for (const DeclBufferNode* d : fragments)
      locals.push_back(frags_.at(d->buffer->data.get()).local);
    for (const Buffer& l : locals) {
      lowered = Allocate(l->data, l->dtype, {l->shape[0]}, MakeConst(DataType::Bool(), 1),
                         DeclBuffer(l, lowered));
    }
    for (auto it = inner.rbegin(); it != inner.rend(); ++it) lowered = WithBody(*it, lowered);
    Stmt s = For(tx_, Int32(0), Int32(threads_), ForKind::kThreadBinding, lowered, "threadIdx.x");
    for (const Buffer& b : scratch_) {
      s = Allocate(b->data, b->dtype, b->shape, MakeConst(DataType::Bool(), 1), DeclBuffer(b, s));
    }
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) {
      const auto* a = it->as<AllocateNode>();
      auto sw = a ? swizzled.find(a->buffer_var.get()) : swizzled.end();
      if (sw == swizzled.end()) {
        s = WithBody(*it, s);
        continue;
      }
      // Indexed logically until SwizzleLayoutLate, after InjectSharedBarriers and
      // SoftwarePipeline have reasoned about the logical indices (the XOR is a bijection, so
      // two accesses meet in one layout exactly when they meet in the other).
      Map<String, Any> ann = a->annotations;
      ann.Set("tessel.swizzle_bytes", sw->second);
      ann.Set(kSwizzleLateAttr, true);
      s = WithSpan(Allocate(a->buffer_var, a->dtype, a->extents, a->condition, s, ann), a->span);
    }
    for (size_t i = blocks.size(); i-- > 0;) {
      Map<String, Any> ann = blocks[i]->annotations;
      ann.erase("tessel.tile_kernel");
      s = WithSpan(For(blocks[i]->loop_var, blocks[i]->min, blocks[i]->extent, blocks[i]->kind, s,
                       blocks[i]->thread_tag, ann),
                   blocks[i]->span);
    }
    frags_.clear();
    scratch_.clear();
    reduce_scratch_.clear();
    static_scratch_bytes_ = 0;
    locals_.clear();
    vec_of_shape_.clear();
    mma_of_shape_.clear();
    return s;
  }

  bool in_kernel_ = false;
  bool in_parallel_ = false;  // lowering the body of a T.Parallel for one element
  After after_;               // set while FuseParallel lowers its T.Parallel nest
  int64_t threads_ = 1;
  Var tx_;
  std::unordered_map<const VarNode*, Frag> frags_;
  std::vector<Buffer> scratch_;  // shared scratch tiles of reductions
  std::map<std::pair<std::string, int64_t>, Buffer> reduce_scratch_;  // by type and size
  static constexpr int64_t kStaticScratchBytes = 48 * 1024;  // CUDA's static shared memory limit
  int64_t static_scratch_bytes_ = 0;
  std::unordered_set<const VarNode*> replicated_;  // the fragments of the kernel held whole
  std::vector<Buffer> locals_;                     // per-thread partial results of reductions
  std::map<std::vector<int64_t>, int64_t> vec_of_shape_;
  std::map<std::vector<int64_t>, MmaGrid> mma_of_shape_;  // shapes spread as mma accumulators
  std::string arch_;  // CUDA "sm_XX" (mma.sync from sm_80), "" otherwise
};

}  // namespace

Stmt LowerTileKernelsSIMT(const Stmt& body, const std::string& function, const std::string& arch) {
  return Simt(function, arch).VisitStmt(body);
}

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel
