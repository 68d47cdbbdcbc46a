// T.gemm as mma.sync m16n8k16 (the design is in src/transform/tile_mma.h). The fragment layouts
// are PTX's (ISA 8.x, "Matrix Fragments for mma.m16n8k16 with floating point type"); ldmatrix
// x4 gives each lane of matrix q, row r = lane / 4, the pair at columns 2 (lane % 4): with the
// row addresses below, its four matrices are the four 8 x 8 quarters of a 16 x 16 A tile in the
// register order mma wants, or two 16 x 8 B tiles (x2: one).
#include "transform/tile_mma.h"

#include <tessel/arith/analyzer.h>
#include <tessel/arith/int_eval.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/reflection/registry.h>

#include <cstdlib>
#include <functional>
#include <unordered_map>

#include "transform/tile_lowering.h"

namespace tessel {
namespace transform {
namespace tile_lowering {

std::string MmaGrid::Text() const {
  return "mma.sync m16n8k16 accumulator, " + std::to_string(wm) + " x " + std::to_string(wn) +
         " warps of " + std::to_string(WarpRows()) + " x " + std::to_string(WarpCols());
}

bool HasMmaSync(const std::string& arch) {
  return arch.rfind("sm_", 0) == 0 && std::atoi(arch.c_str() + 3) >= 80;
}

std::optional<MmaGrid> ChooseMmaGrid(int64_t m, int64_t n, int64_t threads) {
  if (threads < 32 || threads % 32 != 0 || m < 16 || n < 8) return std::nullopt;
  int64_t warps = threads / 32;
  std::optional<MmaGrid> best;
  for (int64_t wm = 1; wm <= warps; ++wm) {
    int64_t wn = warps / wm;
    if (warps % wm != 0 || m % (16 * wm) != 0 || n % (8 * wn) != 0) continue;
    MmaGrid g{m, n, wm, wn};
    if (!best || g.WarpRows() + g.WarpCols() < best->WarpRows() + best->WarpCols()) best = g;
  }
  return best;
}

namespace {

const Buffer* Among(const std::vector<Buffer>& fragments, const Buffer& b) {
  for (const Buffer& f : fragments) {
    if (f->data.same_as(b->data)) return &f;
  }
  return nullptr;
}

// The last two extents of a region (leading ones are squeezed, extent 1).
std::pair<int64_t, int64_t> Extents2(const TileRegion& r) {
  size_t n = r.extents.size();
  if (n < 2) return {-1, -1};
  return {ConstOf(r.extents[n - 2]), ConstOf(r.extents[n - 1])};
}

// Why a 16-bit operand region cannot be read by ldmatrix ("" when it can): a fragment is staged
// into a shared scratch tile of its own shape first; a shared tile needs rows of whole 16-byte
// chunks and a first column on one.
std::string OperandWhyNot(const TileRegion& r, const char* which,
                          const std::vector<Buffer>& fragments) {
  const Buffer& b = r.buffer;
  std::string name = std::string(which) + " (" + std::string(b->name) + ")";
  if (Among(fragments, b)) return "";
  std::string scope = b->scope;
  if (scope != "shared" && scope != "shared.dyn") {
    return name + " is not in shared memory (ldmatrix reads shared tiles; T.copy it into one)";
  }
  if (!b->strides.empty() || b->shape.size() < 2) {
    return name + " is not a row-major tile of rank 2 or more";
  }
  int64_t row = ConstOf(b->shape[b->shape.size() - 1]);
  if (row < 0 || row % 8 != 0) {
    return name + ": its rows are not whole 16-byte chunks (ldmatrix reads 16-byte rows)";
  }
  const PrimExpr& start = r.starts[r.starts.size() - 1];
  arith::Analyzer an;
  if (!an.CanProve(EQ(floormod(start, MakeConst(start.dtype(), 8)), MakeConst(start.dtype(), 0)))) {
    return name + ": its first column " + AsText(start) + " is not proved a multiple of 8";
  }
  return "";
}

}  // namespace

std::string MmaGemmWhyNot(const CallNode* call, const std::vector<Buffer>& fragments,
                          const std::unordered_set<const VarNode*>& replicated, int64_t threads,
                          MmaGrid* grid) {
  auto a = AsTileRegion(call->args[0]), b = AsTileRegion(call->args[1]),
       c = AsTileRegion(call->args[2]);
  if (!a || !b || !c) return "its operands are not tile regions";
  const Buffer* fc = Among(fragments, c->buffer);
  if (!fc) return "C is not a fragment";
  if (replicated.count((*fc)->data.get())) return "C is replicated in every thread";
  if ((*fc)->dtype != DataType::Float(32)) {
    return "C is " + (*fc)->dtype.str() + " (mma.sync accumulates float32 here)";
  }
  DataType ta = a->buffer->dtype, tb = b->buffer->dtype;
  bool f16 = ta == DataType::Float(16) && tb == DataType::Float(16);
  bool bf16 = ta == DataType::BFloat(16) && tb == DataType::BFloat(16);
  if (!f16 && !bf16) {
    return "A and B are " + ta.str() + " and " + tb.str() + " (both float16 or both bfloat16)";
  }
  if (c->extents.size() != 2 || (*fc)->shape.size() != 2) return "C is not two-dimensional";
  int64_t m = ConstOf((*fc)->shape[0]), n = ConstOf((*fc)->shape[1]);
  for (size_t d = 0; d < 2; ++d) {
    if (ConstOf(c->starts[d]) != 0 || ConstOf(c->extents[d]) != ConstOf((*fc)->shape[d])) {
      return "C is part of a fragment";
    }
  }
  for (auto [r, which] : {std::pair{&*a, "A"}, std::pair{&*b, "B"}}) {
    std::string why = OperandWhyNot(*r, which, fragments);
    if (!why.empty()) return why;
  }
  bool trans_a = ConstOf(call->args[3]) == 1;
  auto [a0, a1] = Extents2(*a);
  int64_t k = trans_a ? a0 : a1;
  if (k < 16 || k % 16 != 0) return "K is " + std::to_string(k) + ", not a multiple of 16";
  std::optional<MmaGrid> g = ChooseMmaGrid(m, n, threads);
  if (!g) {
    return "no grid of " + std::to_string(threads / 32) + " warps divides C (" + std::to_string(m) +
           " x " + std::to_string(n) + ") into 16 x 8 tiles";
  }
  *grid = *g;
  return "";
}

namespace {

// fn(call, shape of C) for each tile_gemm of `body` whose C is one of `fragments`.
void ForEachFragmentGemm(
    const Stmt& body, const std::vector<Buffer>& fragments,
    const std::function<void(const CallNode*, const std::vector<int64_t>&)>& fn) {
  PostOrderVisit(body, [&](const ObjectRef& node) {
    const auto* call = node.as<CallNode>();
    auto op = call ? call->op.as<Op>() : std::nullopt;
    if (!op || (*op)->name != "tile_gemm" || call->args.size() < 6) return;
    auto c = AsTileRegion(call->args[2]);
    const Buffer* fc = c ? Among(fragments, c->buffer) : nullptr;
    if (!fc) return;
    std::vector<int64_t> shape;
    for (const PrimExpr& e : (*fc)->shape) shape.push_back(ConstOf(e));
    fn(call, shape);
  });
}

}  // namespace

std::map<std::vector<int64_t>, MmaGrid> MmaAccumulatorShapes(
    const Stmt& body, const std::vector<Buffer>& fragments,
    const std::unordered_set<const VarNode*>& replicated, int64_t threads, const std::string& arch,
    std::map<std::vector<int64_t>, std::string>* why_not) {
  std::map<std::vector<int64_t>, MmaGrid> ok;
  if (!HasMmaSync(arch)) return ok;
  std::map<std::vector<int64_t>, std::string> bad;
  ForEachFragmentGemm(body, fragments,
                      [&](const CallNode* call, const std::vector<int64_t>& shape) {
                        MmaGrid g;
                        std::string why = MmaGemmWhyNot(call, fragments, replicated, threads, &g);
                        if (why.empty()) {
                          ok[shape] = g;
                        } else {
                          bad.emplace(shape, why);
                        }
                      });
  for (const auto& [shape, why] : bad) ok.erase(shape);
  if (why_not) *why_not = bad;
  return ok;
}

std::map<const VarNode*, int64_t> MmaSwizzledTiles(
    const Stmt& body, const std::vector<Buffer>& fragments,
    const std::map<std::vector<int64_t>, MmaGrid>& mma) {
  std::map<const VarNode*, int64_t> out;
  ForEachFragmentGemm(
      body, fragments, [&](const CallNode* call, const std::vector<int64_t>& shape) {
        if (!mma.count(shape)) return;
        for (size_t i : {0, 1}) {
          auto r = AsTileRegion(call->args[i]);
          if (!r || Among(fragments, r->buffer) || r->buffer->shape.size() != 2) continue;
          DataType t = r->buffer->dtype;
          int64_t rows = ConstOf(r->buffer->shape[0]), row_bytes = ConstOf(r->buffer->shape[1]) * 2;
          if (t.bytes() != 2 || t.lanes() != 1 || rows < 1 || row_bytes < 32) continue;
          if (row_bytes != 32 && row_bytes != 64 && row_bytes % 128 != 0) continue;
          int64_t swizzle = std::min<int64_t>(row_bytes, 128);
          if (rows * row_bytes % (8 * swizzle) != 0) continue;
          out[r->buffer->data.get()] = swizzle;
        }
      });
  return out;
}

Array<PrimExpr> MmaElement(const MmaGrid& g, const PrimExpr& tx, const PrimExpr& j,
                           const PrimExpr& l) {
  PrimExpr warp = floordiv(tx, Int32(32)), lane = floormod(tx, Int32(32));
  PrimExpr h = floormod(j, Int32(2)), p = floordiv(j, Int32(2));
  PrimExpr mi = floordiv(p, Int32(g.Ni())), ni = floormod(p, Int32(g.Ni()));
  PrimExpr row = add(add(mul(floordiv(warp, Int32(g.wn)), Int32(g.WarpRows())),
                         add(mul(mi, Int32(16)), mul(h, Int32(8)))),
                     floordiv(lane, Int32(4)));
  PrimExpr col = add(add(mul(floormod(warp, Int32(g.wn)), Int32(g.WarpCols())), mul(ni, Int32(8))),
                     add(mul(floormod(lane, Int32(4)), Int32(2)), l));
  return {row, col};
}

namespace {

// T.address_of the element of region r at (i0, i1) of its last two dimensions.
PrimExpr ElementAddress(const TileRegion& r, const PrimExpr& i0, const PrimExpr& i1) {
  Array<PrimExpr> idx;
  size_t n = r.starts.size();
  for (size_t d = 0; d < n; ++d) {
    PrimExpr s = r.starts[d];
    if (d + 2 == n) s = add(s, cast(s.dtype(), i0));
    if (d + 1 == n) s = add(s, cast(s.dtype(), i1));
    idx.push_back(s);
  }
  return Call(DataType::Handle(), builtin::address_of(), {BufferLoad(r.buffer, idx)});
}

Stmt LdMatrix(bool trans, int64_t num, const Buffer& regs, const PrimExpr& reg,
              const PrimExpr& addr) {
  // The local offset counts 16-bit elements (TVM's convention): two per register.
  return Evaluate(
      Call(DataType::Int(32), Op::Get("ptx_ldmatrix"),
           {StringImm("float16"), MakeConst(DataType::Bool(), trans ? 1 : 0), Int32(num),
            StringImm(".b16"), regs->data, mul(reg, Int32(2)), addr, Int32(0)}));
}

Stmt Unrolled(const char* name, int64_t extent, const std::function<Stmt(const Var&)>& body) {
  Var v(name);
  return For(v, Int32(0), Int32(extent), ForKind::kUnrolled, body(v));
}

}  // namespace

Stmt MmaGemm(const MmaGrid& g, const TileRegion& a, const TileRegion& b, bool trans_a, bool trans_b,
             int64_t k, bool clear, const Buffer& acc, const Buffer& a_regs, const Buffer& b_regs,
             const PrimExpr& tx) {
  PrimExpr warp = floordiv(tx, Int32(32)), lane = floormod(tx, Int32(32));
  PrimExpr row0 = mul(floordiv(warp, Int32(g.wn)), Int32(g.WarpRows()));
  PrimExpr col0 = mul(floormod(warp, Int32(g.wn)), Int32(g.WarpCols()));
  // Lane l addresses row l % 8 of matrix q = l / 8.
  PrimExpr q = floordiv(lane, Int32(8)), r = floormod(lane, Int32(8));
  int64_t mi_n = g.Mi(), ni_n = g.Ni();
  std::string t = a.buffer->dtype == DataType::Float(16) ? "fp16" : "bf16";
  std::vector<Stmt> seq;
  if (clear) {
    seq.push_back(Unrolled("r", 2 * g.Vectors(), [&](const Var& i) {
      return BufferStore(acc, MakeConst(acc->dtype, 0), {i});
    }));
  }
  seq.push_back(Unrolled("kk", k / 16, [&](const Var& kk) {
    PrimExpr k0 = mul(kk, Int32(16));
    std::vector<Stmt> step;
    // A: matrix q is rows 8 (q % 2), columns (k) 8 (q / 2) of the 16 x 16 tile.
    step.push_back(Unrolled("mi", mi_n, [&](const Var& mi) {
      PrimExpr m = add(add(row0, mul(mi, Int32(16))), mul(floormod(q, Int32(2)), Int32(8)));
      PrimExpr kq = add(k0, mul(floordiv(q, Int32(2)), Int32(8)));
      PrimExpr addr = trans_a ? ElementAddress(a, add(kq, r), m) : ElementAddress(a, add(m, r), kq);
      return LdMatrix(trans_a, 4, a_regs, mul(mi, Int32(4)), addr);
    }));
    // B: matrix q is columns (n) 8 (q / 2) on, rows (k) 8 (q % 2) of a pair of 16 x 8 tiles; with
    // an odd count one tile at a time (x2: lanes 0..15 address it).
    bool pairs = ni_n % 2 == 0;
    step.push_back(Unrolled("nb", pairs ? ni_n / 2 : ni_n, [&](const Var& nb) {
      PrimExpr tile = pairs ? add(mul(nb, Int32(2)), floordiv(q, Int32(2))) : PrimExpr(nb);
      PrimExpr n = add(col0, mul(tile, Int32(8)));
      PrimExpr kq = add(k0, mul(floormod(q, Int32(2)), Int32(8)));
      PrimExpr addr = trans_b ? ElementAddress(b, add(n, r), kq) : ElementAddress(b, add(kq, r), n);
      return LdMatrix(!trans_b, pairs ? 4 : 2, b_regs, mul(nb, Int32(pairs ? 4 : 2)), addr);
    }));
    step.push_back(Unrolled("mi", mi_n, [&](const Var& mi) {
      return Unrolled("ni", ni_n, [&](const Var& ni) {
        PrimExpr c_off = mul(add(mul(mi, Int32(ni_n)), ni), Int32(4));
        return Evaluate(
            Call(DataType::Float(32), Op::Get("ptx_mma"),
                 {StringImm("m16n8k16"), StringImm("row"), StringImm("col"), StringImm(t),
                  StringImm(t), StringImm("fp32"), a_regs->data, mul(mi, Int32(4)), b_regs->data,
                  mul(ni, Int32(2)), acc->data, c_off, MakeConst(DataType::Bool(), 0)}));
      });
    }));
    return SeqStmt::Flatten(Array<Stmt>(step.begin(), step.end()));
  }));
  return SeqStmt::Flatten(Array<Stmt>(seq.begin(), seq.end()));
}

// For tests: the grid ChooseMmaGrid picks ([wm, wn], or [] when none fits), and the element of
// register `reg` of thread `tx` in the accumulator of that grid.
TVM_FFI_STATIC_INIT_BLOCK() {
  tvm::ffi::reflection::GlobalDef()
      .def("tessel.tile.ChooseMmaGrid",
           [](int64_t m, int64_t n, int64_t threads) {
             std::optional<MmaGrid> g = ChooseMmaGrid(m, n, threads);
             return g ? Array<int64_t>{g->wm, g->wn} : Array<int64_t>{};
           })
      .def("tessel.tile.MmaElement",
           [](int64_t m, int64_t n, int64_t threads, int64_t tx, int64_t reg) {
             std::optional<MmaGrid> g = ChooseMmaGrid(m, n, threads);
             if (!g) TVM_FFI_THROW(ValueError) << "no mma grid for " << m << " x " << n;
             Var t("t"), j("j"), l("l");
             Array<PrimExpr> at = MmaElement(*g, t, j, l);
             std::unordered_map<const VarNode*, int64_t> env{
                 {t.get(), tx}, {j.get(), reg / 2}, {l.get(), reg % 2}};
             return Array<int64_t>{*arith::EvalInt(at[0], env), *arith::EvalInt(at[1], env)};
           });
}

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel
