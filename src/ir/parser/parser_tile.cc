// The tile-level front end (issue 16), spelled as TileLang spells it:
//
//   with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
//       A_s = T.alloc_shared((128, 32), "float16")
//       C_f = T.alloc_fragment((128, 128), "float32")
//       T.clear(C_f)
//       for ko in T.Pipelined(T.ceildiv(K, 32), num_stages=3):
//           T.copy(A[by * 128, ko * 32], A_s)
//           T.gemm(A_s, B_s, C_f)
//       T.copy(C_f, C[by * 128, bx * 128])
//
// - T.Kernel(gx[, gy[, gz]], threads=n) binds blockIdx.x/y/z loops (`as bx` or `as (bx, by)`), the
//   outermost annotated {"tessel.tile_kernel": n};
// - T.alloc_shared / T.alloc_fragment / T.alloc_local declare a buffer of scope "shared.dyn",
//   "local.fragment" or "local" (an Allocate and a DeclBuffer);
// - T.copy / T.gemm / T.fill / T.clear / T.reduce_{sum,max,min} become tile_copy / tile_gemm /
//   tile_fill / tile_reduce calls on
//   tile_region operands (include/tessel/ir/builtin_tile.h). An operand is a buffer (all of it), a
//   sliced region (A[0:64, k:k + 32]), or a subscript with plain indices (A[by * 128, k * 32]): a
//   start, whose extents are the other operand's;
// - T.atomic_add(dst, src) becomes tile_atomic_add(dst, src): src a tile_region of dst's extents
//   or a value (EvalAtomicAdd);
// - T.Pipelined(n, num_stages=s) is a serial loop annotated {"tessel.pipeline_stages": s}, and
//   T.Parallel(e0, e1, ...) nested serial loops annotated {"tessel.tile_parallel": True}
//   (parser_stmt.cc, with the other loop kinds).
#include <tessel/ir/builtin_tile.h>
#include <tessel/ir/op.h>

#include "ir/parser/parser_impl.h"

namespace tessel {
namespace ir {
namespace parser {

namespace {

bool HasSlice(const Node* subscript) {
  for (size_t i = 1; i < subscript->kids.size(); ++i) {
    if (subscript->kid(i)->kind == NodeKind::kSlice) return true;
  }
  return false;
}

}  // namespace

Parser::TileOperand Parser::EvalTileOperand(const Node* n, const std::string& what) {
  TileOperand out;
  out.loc = n->loc;
  if (n->kind == NodeKind::kName) {
    out.buffer = EvalBufferRef(n, what.c_str());
    for (const PrimExpr& e : out.buffer->shape) {
      out.starts.push_back(MakeConst(e.dtype(), 0));
      out.extents.push_back(e);
    }
    return out;
  }
  if (n->kind != NodeKind::kSubscript) {
    Fail(n->loc, what + " must be a buffer, a region (A[0:64, k:k + 32]) or a start (A[i, k])");
  }
  if (HasSlice(n)) {
    BufferRegion r = EvalRegion(n);
    out.buffer = r->buffer;
    for (const Range& rg : r->region) {
      out.starts.push_back(rg->min);
      out.extents.push_back(rg->extent);
    }
    return out;
  }
  out.buffer = EvalBufferRef(n->kid(0), what.c_str());
  out.starts = EvalIndices(out.buffer, n);
  if (out.starts.size() != out.buffer->shape.size()) {
    Fail(n->loc, what + ": " + std::to_string(out.starts.size()) + " indices for buffer " +
                     std::string(out.buffer->name) + " of rank " +
                     std::to_string(out.buffer->shape.size()));
  }
  out.start_only = true;
  return out;
}

PrimExpr Parser::TileRegionOf(const TileOperand& o) {
  return Guard(o.loc, [&] { return MakeTileRegion(o.buffer, o.starts, o.extents); });
}

// TileLang's three forms: a tile into a tile (`T.atomic_add(C[by * 64, bx * 64], C_f)`, a start
// taking the other operand's extents), a value into one element (`T.atomic_add(C[i, j], v)`,
// also two subscripts with plain indices, as in a T.Parallel body), and a value into every
// element of a buffer or region.
Operand Parser::EvalAtomicAdd(const Node* n) {
  CheckArgs(n, "T.atomic_add", 2, 2);
  TileOperand dst = EvalTileOperand(n->arg(0), "the destination of T.atomic_add");
  if (dst.buffer->scope == "local.fragment" || dst.buffer->scope == "local") {
    Fail(dst.loc, "T.atomic_add: the destination " + std::string(dst.buffer->name) +
                      " is a register tile (scope " + std::string(dst.buffer->scope) +
                      "), which no other thread can add to; give a tensor or a shared tile");
  }
  const Node* s = n->arg(1);
  auto is_buffer = [&](const Node* k) {
    const Binding* b = k->kind == NodeKind::kName ? Lookup(k->text) : nullptr;
    return b && b->buffer.defined();
  };
  bool tile = is_buffer(s) || (s->kind == NodeKind::kSubscript && is_buffer(s->kid(0)) &&
                               (HasSlice(s) || !dst.start_only));
  auto call = [&](const PrimExpr& src) {
    PrimExpr region = TileRegionOf(dst);
    Op op = Op::Get("tile_atomic_add");
    return Of(Guard(n->loc, [&] { return Call(DataType::Int(32), op, {region, src}); }), n->loc);
  };
  if (!tile) {
    if (dst.start_only) {
      for (const PrimExpr& st : dst.starts) dst.extents.push_back(MakeConst(st.dtype(), 1));
    }
    return call(EvalPrimAs(s, dst.buffer->dtype));
  }
  TileOperand src = EvalTileOperand(s, "the source of T.atomic_add");
  TileOperand& partial = src.start_only ? src : dst;
  const TileOperand& whole = src.start_only ? dst : src;
  if (partial.start_only) {
    if (partial.starts.size() != whole.extents.size()) {
      Fail(partial.loc, "T.atomic_add: a start of rank " + std::to_string(partial.starts.size()) +
                            " for a tile of rank " + std::to_string(whole.extents.size()));
    }
    partial.extents = whole.extents;
  }
  if (src.extents.size() != dst.extents.size()) {
    Fail(n->loc, "T.atomic_add: the destination " + std::string(dst.buffer->name) + " has rank " +
                     std::to_string(dst.extents.size()) + ", the source " +
                     std::string(src.buffer->name) + " rank " + std::to_string(src.extents.size()));
  }
  for (size_t d = 0; d < dst.extents.size(); ++d) {
    auto a = AsConstInt(dst.extents[d]), b = AsConstInt(src.extents[d]);
    if (a && b && *a != *b) {
      Fail(n->loc, "T.atomic_add: extent " + std::to_string(d) + " of the destination " +
                       std::string(dst.buffer->name) + " is " + std::to_string(*a) +
                       ", of the source " + std::string(src.buffer->name) + " " +
                       std::to_string(*b));
    }
  }
  return call(TileRegionOf(src));
}

Operand Parser::EvalTileOp(const Node* n, const std::string& name) {
  std::string dotted = "T." + name;
  Loc loc = n->loc;
  auto call = [&](const char* op, Array<PrimExpr> args) {
    return Of(Guard(loc, [&] { return Call(DataType::Int(32), Op::Get(op), args); }), loc);
  };
  if (name == "copy") {
    CheckArgs(n, dotted, 2, 2);
    TileOperand src = EvalTileOperand(n->arg(0), "the source of T.copy");
    TileOperand dst = EvalTileOperand(n->arg(1), "the destination of T.copy");
    if (src.start_only && dst.start_only) {
      Fail(loc,
           "T.copy: both operands are starts; give one of them extents (a buffer or a "
           "region such as A[0:64, 0:32])");
    }
    TileOperand& partial = src.start_only ? src : dst;
    const TileOperand& whole = src.start_only ? dst : src;
    if (partial.start_only) {
      if (partial.starts.size() < whole.extents.size()) {
        Fail(partial.loc, "T.copy: a start of rank " + std::to_string(partial.starts.size()) +
                              " for a tile of rank " + std::to_string(whole.extents.size()));
      }
      // A start of higher rank (Q[b, h, i, 0] for a 2-D tile) takes extent 1 in its leading
      // dimensions: the copy squeezes them.
      partial.extents.clear();
      for (size_t d = whole.extents.size(); d < partial.starts.size(); ++d) {
        partial.extents.push_back(MakeConst(partial.starts[d - whole.extents.size()].dtype(), 1));
      }
      for (const PrimExpr& e : whole.extents) partial.extents.push_back(e);
    }
    return call("tile_copy", {TileRegionOf(src), TileRegionOf(dst)});
  }
  if (name == "atomic_add") return EvalAtomicAdd(n);
  if (name == "fill" || name == "clear") {
    CheckArgs(n, dotted, name == "fill" ? 2 : 1, name == "fill" ? 2 : 1);
    TileOperand dst = EvalTileOperand(n->arg(0), "the operand of " + dotted);
    if (dst.start_only) Fail(dst.loc, dotted + " needs a buffer or a region, not a start");
    PrimExpr value =
        name == "fill" ? EvalPrimAs(n->arg(1), dst.buffer->dtype) : MakeConst(dst.buffer->dtype, 0);
    return call("tile_fill", {TileRegionOf(dst), value});
  }
  if (name == "reduce_max" || name == "reduce_sum" || name == "reduce_min") {
    CheckArgs(n, dotted, 2, 4, {"dim", "clear"});
    TileOperand src = EvalTileOperand(n->arg(0), "the source of " + dotted);
    TileOperand dst = EvalTileOperand(n->arg(1), "the destination of " + dotted);
    for (const TileOperand* o : {&src, &dst}) {
      if (o->start_only) Fail(o->loc, dotted + " needs buffers or regions, not starts");
    }
    const Node* dim_node = n->num_pos > 2 ? n->arg(2) : n->keyword("dim");
    int64_t dim = dim_node ? EvalConstInt(dim_node, "dim") : 0;
    if (dim < 0 || dim >= static_cast<int64_t>(src.extents.size())) {
      Fail(dim_node ? dim_node->loc : loc, dotted + ": dim " + std::to_string(dim) +
                                               " for a source of rank " +
                                               std::to_string(src.extents.size()));
    }
    const Node* clear_node = n->num_pos > 3 ? n->arg(3) : n->keyword("clear");
    bool clear = clear_node ? EvalBoolConst(clear_node, "clear") : true;
    return call("tile_reduce",
                {TileRegionOf(src), TileRegionOf(dst), StringImm(name.substr(7)),
                 MakeConst(DataType::Int(32), dim), MakeConst(DataType::Int(32), clear ? 1 : 0)});
  }
  // gemm
  CheckArgs(n, dotted, 3, 3, {"transpose_A", "transpose_B", "clear_accum"});
  TileOperand a = EvalTileOperand(n->arg(0), "A of T.gemm");
  TileOperand b = EvalTileOperand(n->arg(1), "B of T.gemm");
  TileOperand c = EvalTileOperand(n->arg(2), "C of T.gemm");
  for (const TileOperand* o : {&a, &b, &c}) {
    if (o->start_only) Fail(o->loc, "T.gemm needs buffers or regions, not starts");
    if (o->extents.size() != 2) {
      Fail(o->loc, "T.gemm: " + std::string(o->buffer->name) + " is not two-dimensional");
    }
  }
  auto flag = [&](const char* key) {
    const Node* k = n->keyword(key);
    return MakeConst(DataType::Int(32), k && EvalBoolConst(k, key) ? 1 : 0);
  };
  return call("tile_gemm", {TileRegionOf(a), TileRegionOf(b), TileRegionOf(c), flag("transpose_A"),
                            flag("transpose_B"), flag("clear_accum")});
}

bool Parser::ParseTileAlloc(Loc first, const std::string& name, const Node* value,
                            const std::string& fn, std::vector<Item>* items) {
  std::string scope;
  if (fn == "T.alloc_shared") scope = "shared.dyn";
  if (fn == "T.alloc_fragment") scope = "local.fragment";
  if (fn == "T.alloc_local") scope = "local";
  if (scope.empty()) return false;
  CheckArgs(value, fn, 2, 3, {"scope"});
  const Node* shape_node = value->arg(0);
  Array<PrimExpr> shape;
  if (shape_node->kind == NodeKind::kList || shape_node->kind == NodeKind::kTuple) {
    for (const NodePtr& k : shape_node->kids) shape.push_back(EvalPrim(k.get()));
  } else {
    shape.push_back(EvalPrim(shape_node));
  }
  DataType dtype = EvalDType(value->arg(1));
  if (value->num_pos > 2) scope = EvalString(value->arg(2), "the storage scope");
  if (const Node* s = value->keyword("scope")) scope = EvalString(s, "the storage scope");
  Loc loc = value->loc;
  Buffer buf = Guard(loc, [&] { return MakeBuffer(name, dtype, shape, scope); });
  BindBuffer(name, buf);
  items->push_back(Item{Stmt(), [this, buf, shape, loc, first](Stmt body) {
                          return At(first, Guard(loc, [&] {
                                      return Allocate(buf->data, buf->dtype, shape,
                                                      MakeConst(DataType::Bool(), 1),
                                                      DeclBuffer(buf, body));
                                    }));
                        }});
  return true;
}

void Parser::ParseTileKernel(Loc loc, const Node* call, std::vector<Item>* items) {
  CheckArgs(call, "T.Kernel", 1, 3, {"threads"});
  // `as bx` or `as (bx, by[, bz])`: one name per grid dimension.
  ExpectKeyword("as", "after T.Kernel(...): name the block indices, as in `as (bx, by)`");
  std::vector<Token> names;
  if (Accept("(")) {
    do {
      names.push_back(ExpectName("as a block index"));
    } while (Accept(","));
    Expect(")", "after the block indices");
  } else {
    names.push_back(ExpectName("as a block index"));
  }
  if (names.size() != call->num_pos) {
    Fail(names[0].loc, "T.Kernel has " + std::to_string(call->num_pos) + " grid dimensions and " +
                           std::to_string(names.size()) + " block indices");
  }
  Expect(":", "after the with-statement");
  ExpectNewline("after ':'");
  int64_t threads = 128;
  if (const Node* t = call->keyword("threads")) threads = EvalConstInt(t, "threads");
  if (threads < 1 || threads > 1024) {
    Fail(call->keyword("threads")->loc,
         "T.Kernel: threads = " + std::to_string(threads) + " (1 .. 1024)");
  }
  std::vector<Var> vars;
  std::vector<PrimExpr> extents;
  for (size_t d = 0; d < names.size(); ++d) {
    PrimExpr e = EvalPrim(call->arg(d));
    if (!e.dtype().is_int_or_uint()) {
      Fail(call->arg(d)->loc, "a grid dimension must be an integer, got " + e.dtype().str());
    }
    vars.push_back(Var(names[d].text, e.dtype()));
    extents.push_back(e);
  }
  PushScope();
  for (size_t d = 0; d < names.size(); ++d) BindVar(names[d].text, vars[d]);
  Stmt body = ParseSuite(SuiteContext{});
  PopScope();
  static const char* const kTags[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z"};
  for (size_t d = names.size(); d-- > 0;) {
    Map<String, Any> ann;
    if (d == 0) ann.Set("tessel.tile_kernel", threads);
    body = At(loc, Guard(loc, [&] {
                return For(vars[d], MakeConst(extents[d].dtype(), 0), extents[d],
                           ForKind::kThreadBinding, body, kTags[d], ann);
              }));
  }
  items->push_back(Item{body, nullptr});
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
