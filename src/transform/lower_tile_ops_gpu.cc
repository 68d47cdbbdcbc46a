// The first GPU lowering of tile programs (contract in include/tessel/transform/lower_tile_ops.h):
// plain SIMT code, correct on any GPU, no tensor cores yet.
//
// Inside each T.Kernel, a threadIdx.x loop of the kernel's thread count n runs the body. Shared
// tiles stay where they are, above that loop. A fragment is spread round-robin over the threads:
// element e (row-major) is register e / n of thread e % n. A fragment that a reduction writes is
// replicated instead: every thread holds all of it, so that any thread can read any row statistic.
// Then:
// - copies between memory tiles (global, shared) are cooperative: thread t moves elements t, t + n,
//   ...; a copy into or out of a spread fragment moves each thread's own elements;
//   InjectSharedBarriers (later in the pipeline) puts the barriers between a copy into shared
//   memory and its readers;
// - T.gemm computes each thread's own elements of C (a spread fragment) as dot products over shared
//   or global A and B;
// - a reduction of a spread fragment goes through a shared scratch tile: each thread writes its
//   elements, then every thread reduces every row into its replicated destination;
// - a T.Parallel nest over a spread fragment's shape runs each thread over its own elements; inside
//   it, the fragment must be indexed by the loop variables themselves (A_f[i, j]), and replicated
//   fragments may be indexed freely;
// - a T.Pipelined loop keeps its stages annotation: its cooperative copies into shared tiles are
//   what SoftwarePipeline(Async) stages later (cp.async for 4, 8 or 16 bytes).
#include <tessel/ir/substitute.h>
#include <tessel/transform/lower_tile_ops.h>
#include <tessel/transform/software_pipeline.h>

#include <unordered_map>
#include <unordered_set>

#include "transform/tile_lowering.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

namespace {

int64_t ConstOf(const PrimExpr& e) {
  auto v = AsConstInt(e);
  return v ? *v : -1;
}

class Simt : public TileLowering {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  using TileLowering::TileLowering;

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
    PrimExpr e = Int32(0);
    for (size_t d = 0; d < idx.size(); ++d) {
      e = add(mul(e, Int32(f.shape[d])), cast(DataType::Int(32), idx[d]));
    }
    return e;
  }

  // The logical indices of element e of a tile of this constant shape (row-major).
  static Array<PrimExpr> Unflat(const PrimExpr& e, const std::vector<int64_t>& shape) {
    std::vector<PrimExpr> out(shape.size());
    PrimExpr rest = e;
    for (size_t d = shape.size(); d-- > 0;) {
      out[d] = d == 0 ? rest : floormod(rest, Int32(shape[d]));
      rest = floordiv(rest, Int32(shape[d]));
    }
    return Array<PrimExpr>(out.begin(), out.end());
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

  static int64_t Size(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    return n;
  }

  // for r in [0, ceil(size / n)): e = r * n + tx; if e < size: body(r, e).
  Stmt Spread(int64_t size, const std::function<Stmt(const Var& r, const PrimExpr& e)>& body) {
    Var r("r");
    int64_t trips = (size + threads_ - 1) / threads_;
    PrimExpr e = add(mul(r, Int32(threads_)), tx_);
    analyzer_.Bind(r, Range(Int32(0), Int32(trips)), true);
    Stmt s = body(r, e);
    if (size % threads_ != 0) s = IfThenElse(LT(e, Int32(size)), s);
    return For(r, Int32(0), Int32(trips), ForKind::kSerial, s);
  }

  void WholeFragment(const TileRegion& r, const Frag& f) {
    for (size_t d = 0; d < r.starts.size(); ++d) {
      if (ConstOf(r.starts[d]) != 0 || ConstOf(r.extents[d]) != f.shape[d]) {
        FailAt("a tile operation on part of fragment " + std::string(f.logical->name) +
               " (only whole fragments on the GPU so far)");
      }
    }
  }

  static Array<PrimExpr> Add(const Array<PrimExpr>& a, const Array<PrimExpr>& b) {
    Array<PrimExpr> out;
    for (size_t d = 0; d < a.size(); ++d) out.push_back(add(a[d], cast(a[d].dtype(), b[d])));
    return out;
  }

  Stmt Copy(const CallNode* call) override {
    TileRegion src = Region(call, 0), dst = Region(call, 1);
    if (src.extents.size() != dst.extents.size()) {
      Fail(call, "tile_copy between regions of rank " + std::to_string(src.extents.size()) +
                     " and " + std::to_string(dst.extents.size()));
    }
    for (size_t d = 0; d < dst.extents.size(); ++d) {
      SameExtent(call, src.extents[d], dst.extents[d], "tile_copy: extent " + std::to_string(d));
    }
    std::vector<int64_t> shape = ConstShape(dst.extents, "tile_copy");
    int64_t size = Size(shape);
    const Frag* fs = FragOf(src.buffer);
    const Frag* fd = FragOf(dst.buffer);
    DataType t = dst.buffer->dtype;
    if (fs) WholeFragment(src, *fs);
    if (fd) WholeFragment(dst, *fd);
    if (fd && !fd->replicated) {
      // Each thread its own elements of the destination.
      return Spread(size, [&](const Var& r, const PrimExpr& e) {
        PrimExpr v = fs ? (fs->replicated ? BufferLoad(fs->local, {e}) : BufferLoad(fs->local, {r}))
                        : Load(src.buffer, Add(src.starts, Unflat(e, shape)), t);
        return BufferStore(fd->local, cast(t, v), {r});
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
    // Into memory: each thread stores its share.
    return Spread(size, [&](const Var& r, const PrimExpr& e) {
      PrimExpr v = fs ? (fs->replicated ? BufferLoad(fs->local, {e}) : BufferLoad(fs->local, {r}))
                      : Load(src.buffer, Add(src.starts, Unflat(e, shape)), t);
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
    return Spread(Size(shape), [&](const Var& r, const PrimExpr& e) -> Stmt {
      if (f) return BufferStore(f->local, value, {r});
      return Store(dst.buffer, Add(dst.starts, Unflat(e, shape)), value);
    });
  }

  Stmt Gemm(const CallNode* call) override {
    TileRegion a = Region(call, 0), b = Region(call, 1), c = Region(call, 2);
    bool ta = ConstOf(call->args[3]) == 1, tb = ConstOf(call->args[4]) == 1;
    bool clear = ConstOf(call->args[5]) == 1;
    const Frag* fc = FragOf(c.buffer);
    if (!fc || fc->replicated) {
      Fail(call, "tile_gemm accumulates into a fragment (T.alloc_fragment) on the GPU");
    }
    if (FragOf(a.buffer) || FragOf(b.buffer)) {
      Fail(call, "tile_gemm reads A and B from shared or global memory on the GPU so far");
    }
    WholeFragment(c, *fc);
    PrimExpr k = ta ? a.extents[0] : a.extents[1];
    SameExtent(call, ta ? a.extents[1] : a.extents[0], c.extents[0], "tile_gemm: M of A and C");
    SameExtent(call, tb ? b.extents[0] : b.extents[1], c.extents[1], "tile_gemm: N of B and C");
    SameExtent(call, tb ? b.extents[1] : b.extents[0], k, "tile_gemm: K of A and B");
    DataType t = c.buffer->dtype;
    int64_t n = fc->shape[1];
    return Spread(fc->size, [&](const Var& r, const PrimExpr& e) {
      PrimExpr i = floordiv(e, Int32(n)), j = floormod(e, Int32(n));
      Var kk("kk", k.dtype());
      Array<PrimExpr> ai = ta ? Array<PrimExpr>{kk, i} : Array<PrimExpr>{i, kk};
      Array<PrimExpr> bi = tb ? Array<PrimExpr>{j, kk} : Array<PrimExpr>{kk, j};
      PrimExpr acc = add(BufferLoad(fc->local, {r}), mul(Load(a.buffer, Add(a.starts, ai), t),
                                                         Load(b.buffer, Add(b.starts, bi), t)));
      Stmt loop =
          For(kk, MakeConst(k.dtype(), 0), k, ForKind::kSerial, BufferStore(fc->local, acc, {r}));
      if (!clear) return loop;
      return SeqStmt::Flatten(Array<Stmt>{BufferStore(fc->local, MakeConst(t, 0), {r}), loop});
    });
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
    DataType t = fd->logical->dtype;
    std::vector<Stmt> seq;
    Buffer from = fs->local;
    if (!fs->replicated) {
      // Through a shared scratch tile: every thread then sees every element.
      Buffer scratch = MakeBuffer(std::string(fs->logical->name) + "_red", fs->logical->dtype,
                                  {Int32(fs->size)}, "shared");
      scratch_.push_back(scratch);
      seq.push_back(Spread(fs->size, [&](const Var& r, const PrimExpr& e) {
        return BufferStore(scratch, BufferLoad(fs->local, {r}), {e});
      }));
      from = scratch;
    }
    Var o("o"), rr("rr");
    // Row o of the kept axes, element rr along dim: the source's flat index.
    Array<PrimExpr> kept_idx = Unflat(o, kept);
    PrimExpr flat = Int32(0);
    for (size_t d = 0, j = 0; d < fs->shape.size(); ++d) {
      PrimExpr idx = static_cast<int64_t>(d) == dim ? PrimExpr(rr) : kept_idx[j++];
      flat = add(mul(flat, Int32(fs->shape[d])), idx);
    }
    PrimExpr prev = BufferLoad(fd->local, {o});
    PrimExpr x = cast(t, BufferLoad(from, {flat}));
    PrimExpr next = kind == "sum" ? add(prev, x) : kind == "max" ? max(prev, x) : min(prev, x);
    Stmt step = For(rr, Int32(0), Int32(fs->shape[dim]), ForKind::kSerial,
                    BufferStore(fd->local, next, {o}));
    PrimExpr identity = kind == "sum" ? MakeConst(t, 0) : Extreme(t, kind == "min");
    Stmt row =
        clear ? SeqStmt::Flatten(Array<Stmt>{BufferStore(fd->local, identity, {o}), step}) : step;
    seq.push_back(For(o, Int32(0), Int32(fd->size), ForKind::kSerial, row));
    return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
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
    Array<PrimExpr> vars;
    for (const ForNode* l : loops) {
      if (ConstOf(l->min) != 0 || ConstOf(l->extent) < 1) {
        FailAt("T.Parallel needs constant extents from 0 on the GPU");
      }
      shape.push_back(ConstOf(l->extent));
      vars.push_back(l->loop_var);
    }
    int64_t size = Size(shape);
    return Spread(size, [&](const Var& r, const PrimExpr& e) {
      // A spread fragment of this shape indexed by the loop variables: the thread's register r.
      class Own : public StmtExprMutator {
       public:
        Own(Simt* s, const Array<PrimExpr>& vars, const std::vector<int64_t>& shape, Var r)
            : s_(s), vars_(vars), shape_(shape), r_(std::move(r)) {}
        using StmtExprMutator::VisitExpr_;
        using StmtExprMutator::VisitStmt_;
        PrimExpr VisitExpr_(const BufferLoadNode* op) override {
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
        Var r_;
      };
      Stmt s = Own(this, vars, shape, r).VisitStmt(body);
      Array<PrimExpr> at = Unflat(e, shape);
      VarMap sub;
      for (size_t d = 0; d < loops.size(); ++d) sub[loops[d]->loop_var.get()] = at[d];
      s = Substitute(s, sub);
      return VisitStmt(s);
    });
  }

  Stmt Kernel(const ForNode* k) {
    if (in_kernel_) FailAt("a T.Kernel inside a T.Kernel");
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
    std::unordered_set<const VarNode*> replicated;
    PostOrderVisit(body, [&](const ObjectRef& n) {
      const auto* call = n.as<CallNode>();
      auto op = call ? call->op.as<Op>() : std::nullopt;
      if (op && (*op)->name == "tile_reduce" && call->args.size() > 1) {
        if (auto r = AsTileRegion(call->args[1])) replicated.insert(r->buffer->data.get());
      }
    });
    tx_ = Var("tx");
    analyzer_.Bind(tx_, Range(Int32(0), Int32(threads_)), true);
    for (const DeclBufferNode* d : fragments) {
      Frag f;
      f.logical = d->buffer;
      f.shape = ConstShape(d->buffer->shape, "fragment " + std::string(d->buffer->name));
      f.size = Size(f.shape);
      f.replicated = replicated.count(d->buffer->data.get()) != 0;
      int64_t regs = f.replicated ? f.size : (f.size + threads_ - 1) / threads_;
      f.local = MakeBuffer(std::string(d->buffer->name) + "_local", d->buffer->dtype, {Int32(regs)},
                           "local");
      frags_[d->buffer->data.get()] = f;
    }
    in_kernel_ = true;
    Stmt lowered = VisitStmt(body);
    in_kernel_ = false;
    for (const DeclBufferNode* d : fragments) {
      const Buffer& l = frags_.at(d->buffer->data.get()).local;
      lowered = Allocate(l->data, l->dtype, {l->shape[0]}, MakeConst(DataType::Bool(), 1),
                         DeclBuffer(l, lowered));
    }
    for (auto it = inner.rbegin(); it != inner.rend(); ++it) lowered = Rewrap(*it, lowered);
    Stmt s = For(tx_, Int32(0), Int32(threads_), ForKind::kThreadBinding, lowered, "threadIdx.x");
    for (const Buffer& b : scratch_) {
      s = Allocate(b->data, b->dtype, b->shape, MakeConst(DataType::Bool(), 1), DeclBuffer(b, s));
    }
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) s = Rewrap(*it, s);
    for (size_t i = blocks.size(); i-- > 0;) {
      Map<String, Any> ann = blocks[i]->annotations;
      ann.erase("tessel.tile_kernel");
      s = WithSpan(For(blocks[i]->loop_var, blocks[i]->min, blocks[i]->extent, blocks[i]->kind, s,
                       blocks[i]->thread_tag, ann),
                   blocks[i]->span);
    }
    frags_.clear();
    scratch_.clear();
    return s;
  }

  // The Allocate or DeclBuffer `w` around `body` instead of its own.
  static Stmt Rewrap(const Stmt& w, Stmt body) {
    if (const auto* a = w.as<AllocateNode>()) {
      return WithSpan(
          Allocate(a->buffer_var, a->dtype, a->extents, a->condition, body, a->annotations),
          a->span);
    }
    const auto* d = w.as<DeclBufferNode>();
    return WithSpan(DeclBuffer(d->buffer, body), d->span);
  }

  bool in_kernel_ = false;
  int64_t threads_ = 1;
  Var tx_;
  std::unordered_map<const VarNode*, Frag> frags_;
  std::vector<Buffer> scratch_;
};

}  // namespace

Stmt LowerTileKernelsSIMT(const Stmt& body, const std::string& function) {
  return Simt(function).VisitStmt(body);
}

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel
