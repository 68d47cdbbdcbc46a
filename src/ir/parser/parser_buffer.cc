// Buffers: their declarations (T.Buffer, T.match_buffer, T.decl_buffer, T.alloc_buffer), loads'
// index lists (a slice gives a Ramp), and regions (T.reads, T.writes, T.match_buffer sources).
#include "ir/parser/parser_impl.h"

namespace tessel {
namespace ir {
namespace parser {
namespace {

bool IsSequence(const Node* n) { return n->kind == NodeKind::kTuple || n->kind == NodeKind::kList; }

// `A[()]`: the element of a zero-dimensional buffer.
bool IsScalarIndex(const Node* subscript) {
  return subscript->kids.size() == 2 && subscript->kid(1)->kind == NodeKind::kTuple &&
         subscript->kid(1)->kids.empty();
}

}  // namespace

Buffer Parser::EvalBufferDecl(const Node* call, const std::string& name, size_t first,
                              bool declare_names, const char* what) {
  CheckArgs(call, what, first, first + 2,
            {"shape", "dtype", "data", "strides", "elem_offset", "scope", "align", "offset_factor",
             "index_dtype"});
  auto arg = [&](size_t pos, const char* keyword) -> const Node* {
    const Node* kw = call->keyword(keyword);
    if (first + pos < call->num_pos) {
      if (kw) Fail(kw->loc, std::string(what) + " got '" + keyword + "' twice");
      return call->arg(first + pos);
    }
    return kw;
  };
  const Node* shape_node = arg(0, "shape");
  if (!shape_node) Fail(call->loc, std::string(what) + " needs a shape");
  DataType dtype = DataType::Float(32);
  if (const Node* d = arg(1, "dtype")) dtype = EvalDType(d);
  DataType index_dtype = DataType::Int(32);
  if (const Node* d = call->keyword("index_dtype")) {
    index_dtype = EvalDType(d);
    if (!index_dtype.is_int() || !index_dtype.is_scalar()) {
      Fail(d->loc, "index_dtype must be \"int32\" or \"int64\"");
    }
  }
  std::string scope = "global";
  if (const Node* s = call->keyword("scope")) scope = EvalString(s, "the buffer scope");

  auto eval_index = [&](const Node* n) {
    if (declare_names) declare_unknown_as_ = index_dtype;
    // TVM writes a symbolic dim as a string ("n") where the shape first uses it.
    Operand op = n->kind == NodeKind::kString ? EvalNamed(n->text, n->loc) : Eval(n);
    declare_unknown_as_.reset();
    return AdoptOrDefault(op, index_dtype);
  };
  auto eval_list = [&](const Node* n) {
    Array<PrimExpr> out;
    if (IsSequence(n)) {
      for (const NodePtr& k : n->kids) out.push_back(eval_index(k.get()));
    } else {
      out.push_back(eval_index(n));
    }
    return out;
  };
  Array<PrimExpr> shape = eval_list(shape_node);
  Array<PrimExpr> strides;
  if (const Node* s = call->keyword("strides")) strides = eval_list(s);
  PrimExpr elem_offset;
  if (const Node* e = call->keyword("elem_offset")) elem_offset = eval_index(e);
  int64_t align = kDefaultBufferAlignment;
  if (const Node* a = call->keyword("align")) align = EvalConstInt(a, "align");
  int64_t offset_factor = 1;
  if (const Node* f = call->keyword("offset_factor")) {
    offset_factor = EvalConstInt(f, "offset_factor");
  }
  Var data;
  if (const Node* d = call->keyword("data")) {
    PrimExpr v = EvalPrim(d);
    if (!v.as<VarNode>() || !v.dtype().is_handle()) {
      Fail(d->loc, "data= must be a handle variable");
    }
    data = tvm::ffi::GetRef<Var>(v.as<VarNode>());
  } else {
    data = Var::Pointer(name, dtype, scope);
  }
  return Guard(call->loc, [&] {
    return Buffer(name, data, dtype, shape, strides, elem_offset, scope, align, offset_factor);
  });
}

Buffer Parser::EvalBufferRef(const Node* n, const char* what) {
  if (n->kind != NodeKind::kName) Fail(n->loc, std::string("expected a buffer in ") + what);
  const Binding* b = Lookup(n->text);
  if (!b) Fail(n->loc, "unknown name '" + n->text + "'");
  if (!b->buffer.defined()) Fail(n->loc, "'" + n->text + "' is not a buffer");
  return b->buffer;
}

Array<PrimExpr> Parser::EvalIndices(const Buffer& buffer, const Node* subscript) {
  Array<PrimExpr> indices;
  if (IsScalarIndex(subscript)) return indices;
  for (size_t i = 1; i < subscript->kids.size(); ++i) {
    const Node* k = subscript->kid(i);
    if (k->kind != NodeKind::kSlice) {
      indices.push_back(EvalPrim(k));
      continue;
    }
    // begin:end[:step] reads the lanes begin, begin + step, ... below end: a Ramp.
    if (!k->kid(0) || !k->kid(1)) {
      Fail(k->loc, "a vector index needs both bounds, as in A[i:i + 4]");
    }
    Operand b = Eval(k->kid(0)), e = Eval(k->kid(1));
    Unify(&b, &e, k->loc, "a slice");
    PrimExpr extent = Extent(b.expr, e.expr, k->loc);
    auto len = AsConstInt(extent);
    if (!len || !extent.as<IntImmNode>()) {
      Fail(k->loc, "a slice in an index must have a constant length");
    }
    int64_t step = 1;
    if (k->kid(2)) step = EvalConstInt(k->kid(2), "the slice step");
    if (step <= 0) Fail(k->kid(2)->loc, "the slice step must be positive");
    int64_t lanes = (*len + step - 1) / step;
    PrimExpr base = b.expr;
    indices.push_back(
        Guard(k->loc, [&] { return Ramp(base, MakeConst(base.dtype(), step), lanes); }));
  }
  return indices;
}

BufferRegion Parser::EvalRegion(const Node* n) {
  if (n->kind == NodeKind::kName) {
    Buffer buf = EvalBufferRef(n, "a region");
    return Guard(n->loc, [&] { return BufferRegion::Full(buf); });
  }
  if (n->kind != NodeKind::kSubscript) {
    Fail(n->loc, "expected a buffer region such as A[i, 0:16]");
  }
  Buffer buf = EvalBufferRef(n->kid(0), "a region");
  Array<Range> region;
  if (IsScalarIndex(n)) return Guard(n->loc, [&] { return BufferRegion(buf, region); });
  for (size_t i = 1; i < n->kids.size(); ++i) {
    const Node* k = n->kid(i);
    if (k->kind != NodeKind::kSlice) {
      PrimExpr index = EvalPrim(k);
      region.push_back(Guard(k->loc, [&] { return Range(index, MakeConst(index.dtype(), 1)); }));
      continue;
    }
    if (k->kid(2)) Fail(k->kid(2)->loc, "a region cannot have a step");
    size_t dim = i - 1;
    if (dim >= buf->shape.size()) {
      Fail(k->loc, "buffer " + std::string(buf->name) + " has only " +
                       std::to_string(buf->shape.size()) + " dimensions");
    }
    PrimExpr extent_dim = buf->shape[dim];
    Operand b = k->kid(0) ? Eval(k->kid(0)) : Of(MakeConst(extent_dim.dtype(), 0), k->loc);
    Operand e = k->kid(1) ? Eval(k->kid(1)) : Of(extent_dim, k->loc);
    if (b.lit != Operand::kNone && e.lit != Operand::kNone) {
      b.expr = AdoptOrDefault(b, extent_dim.dtype());
      e.expr = AdoptOrDefault(e, extent_dim.dtype());
      b.lit = e.lit = Operand::kNone;
    }
    Unify(&b, &e, k->loc, "a region bound");
    PrimExpr extent = Extent(b.expr, e.expr, k->loc);
    PrimExpr begin = b.expr;
    region.push_back(Guard(k->loc, [&] { return Range(begin, extent); }));
  }
  return Guard(n->loc, [&] { return BufferRegion(buf, region); });
}

Array<BufferRegion> Parser::EvalRegions(const Node* call, const std::string& name) {
  CheckArgs(call, name, 0, SIZE_MAX);
  Array<BufferRegion> out;
  for (size_t i = 0; i < call->num_pos; ++i) {
    const Node* a = call->arg(i);
    if (IsSequence(a)) {
      for (const NodePtr& k : a->kids) out.push_back(EvalRegion(k.get()));
    } else {
      out.push_back(EvalRegion(a));
    }
  }
  return out;
}

}  // namespace parser
}  // namespace ir
}  // namespace tessel
