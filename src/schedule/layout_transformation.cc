// transform_layout: a buffer's layout changes by an index map f (old indices -> new indices):
// every access buf[idx] in the function becomes buf'[f(idx)], and buf' has the shape of f's image
// over the old shape.
//
// f must be one-to-one over the old shape, proved either by the iterator-map detector (a
// bijective quasi-affine map: transposes, splits and fusions of dimensions) or, for a constant
// shape of at most kMaxEnumerated points, by evaluating f at every point. Where the image does not
// fill the new shape (a split that does not divide), pad_value is required: the padding is then
// filled with it, by a block "<buf>_pad" that writes pad_value to the whole new buffer before
// anything else in the block that allocates it (the writes through f then overwrite the image).
//
// Parameter buffers may be transformed as TVM allows: the function's signature changes (the
// caller passes the new layout). Only without padding: the elements of a parameter's padding
// belong to the caller.
#include <tessel/arith/int_eval.h>
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/error.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "schedule/buffer_access.h"

namespace tessel {
namespace schedule {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

constexpr int64_t kMaxEnumerated = int64_t{1} << 22;

std::string Tuple(const Array<PrimExpr>& xs) {
  std::string s = "(";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + AsText(xs[i]);
  return s + (xs.size() == 1 ? ",)" : ")");
}

// Accesses of `from` become accesses of `to` at f(indices); declared regions follow (a point
// region maps to a point, any other to the whole new buffer).
class LayoutRewriter : public StmtExprMutator {
 public:
  LayoutRewriter(Buffer from, Buffer to, Array<Var> vars, Array<PrimExpr> map)
      : from_(std::move(from)), to_(std::move(to)), vars_(std::move(vars)), map_(std::move(map)) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Array<PrimExpr> Map(const Array<PrimExpr>& idx) {
    std::unordered_map<const VarNode*, PrimExpr> vmap;
    for (size_t k = 0; k < vars_.size(); ++k) vmap[vars_[k].get()] = idx[k];
    Array<PrimExpr> out;
    for (const PrimExpr& m : map_)
      out.push_back(analyzer_.Simplify(VarSubstituter(vmap).VisitExpr(m)));
    return out;
  }
  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    if (!op->buffer.same_as(from_)) return StmtExprMutator::VisitExpr_(op);
    return BufferLoad(to_, Map(VisitArray(op->indices)));
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    if (!op->buffer.same_as(from_)) return StmtExprMutator::VisitStmt_(op);
    return WithSpan(BufferStore(to_, VisitExpr(op->value), Map(VisitArray(op->indices))), op->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* b = visited.as<BlockNode>();
    auto regions = [&](const Array<BufferRegion>& rs) {
      Array<BufferRegion> out;
      for (const BufferRegion& r : rs) {
        if (!r->buffer.same_as(from_)) {
          out.push_back(r);
          continue;
        }
        bool point = true;
        Array<PrimExpr> mins;
        for (const Range& x : r->region) {
          point = point && AsConstInt(x->extent) == std::optional<int64_t>(1);
          mins.push_back(x->min);
        }
        Array<Range> region;
        if (point) {
          for (const PrimExpr& i : Map(mins)) region.push_back(Range(i, MakeConst(i.dtype(), 1)));
        } else {
          for (const PrimExpr& s : to_->shape) region.push_back(Range(MakeConst(s.dtype(), 0), s));
        }
        out.push_back(BufferRegion(to_, region));
      }
      return out;
    };
    Array<Buffer> allocs;
    for (const Buffer& a : b->alloc_buffers) allocs.push_back(a.same_as(from_) ? to_ : a);
    Block out(b->iter_vars, regions(b->reads), regions(b->writes), b->name_hint, b->body, b->init,
              allocs, b->match_buffers, b->annotations);
    out.CopyOnWrite()->span = op->span;
    return out;
  }

 private:
  Buffer from_, to_;
  Array<Var> vars_;
  Array<PrimExpr> map_;
  arith::Analyzer analyzer_;
};

// Splits `s` at the commas outside parentheses and brackets.
std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

std::pair<Array<Var>, Array<PrimExpr>> ParseIndexMap(const std::string& text) {
  auto bad = [&](const std::string& why) {
    TVM_FFI_THROW(ValueError) << "index map \"" << text << "\": " << why
                              << " (expected \"lambda i, j: (new_index, ...)\")";
  };
  std::string t = Trim(text);
  if (t.rfind("lambda", 0) != 0) bad("does not start with lambda");
  size_t colon = t.find(':');
  if (colon == std::string::npos) bad("has no ':'");
  Array<Var> vars;
  Map<String, Any> table;
  for (const std::string& p : SplitTopLevel(t.substr(6, colon - 6))) {
    std::string name = Trim(p);
    if (name.empty()) bad("has an empty parameter");
    if (table.count(name)) bad("names the parameter " + name + " twice");
    Var v(name, DataType::Int(32));
    vars.push_back(v);
    table.Set(name, v);
  }
  std::string body = Trim(t.substr(colon + 1));
  // A parenthesized body is a tuple when its outer parentheses match each other.
  if (!body.empty() && body.front() == '(' && body.back() == ')') {
    int depth = 0;
    bool outer = true;
    for (size_t i = 0; i < body.size(); ++i) {
      depth += body[i] == '(' ? 1 : body[i] == ')' ? -1 : 0;
      if (depth == 0 && i + 1 < body.size()) outer = false;
    }
    if (outer) body = body.substr(1, body.size() - 2);
  }
  Array<PrimExpr> exprs;
  for (const std::string& piece : SplitTopLevel(body)) {
    std::string e = Trim(piece);
    if (e.empty()) continue;  // a trailing comma: "(i,)"
    exprs.push_back(ParseExpr(e, table));
  }
  if (exprs.empty()) bad("maps to no index");
  return {vars, exprs};
}

Array<Any> BufferIndexOf(ScheduleNode* sch, const std::string& primitive, const RV& block,
                         const std::string& name) {
  Impl impl(sch, primitive);
  BlockSite site = impl.FindBlock(block);
  const BlockNode* b = site.realize->block.get();
  for (bool write : {false, true}) {
    std::vector<Buffer> buffers = transform::BlockBuffers(b, write);
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (buffers[i]->name == name) {
        return Array<Any>{String(write ? "write" : "read"), static_cast<int64_t>(i)};
      }
    }
  }
  impl.Fail("block \"" + std::string(b->name_hint) + "\" accesses no buffer named " + name,
            sch->FuncOf(block), BlockMark(b->name_hint));
}

std::string IndexMapText(const Array<Var>& vars, const Array<PrimExpr>& exprs) {
  std::string s = "lambda ";
  for (size_t i = 0; i < vars.size(); ++i) s += (i ? ", " : "") + std::string(vars[i]->name_hint);
  return s + ": " + Tuple(exprs);
}

void ScheduleNode::TransformLayout(const RV& block, const String& buffer_type, int64_t buffer_index,
                                   const Array<Var>& index_vars, const Array<PrimExpr>& new_indices,
                                   const std::optional<PrimExpr>& pad_value) {
  Impl impl(this, "transform_layout");
  BlockSite site = impl.FindBlock(block);
  const Entry e = rvs_[block->id];
  PrimFunc f = impl.Func(e);
  std::string mark = BlockMark(site.realize->block->name_hint);
  bool write = ParseBufferType(&impl, buffer_type);
  Buffer buf = AccessedBuffer(&impl, f, site, write, buffer_index);
  std::string bname = buf->name;
  std::string map_text = IndexMapText(index_vars, new_indices);
  if (index_vars.size() != buf->shape.size()) {
    impl.Fail("the index map " + map_text + " takes " + std::to_string(index_vars.size()) +
                  " indices; " + bname + " has " + std::to_string(buf->shape.size()) +
                  " dimensions",
              f, mark);
  }
  if (new_indices.empty()) impl.Fail("the index map maps to no index", f, mark);
  std::unordered_set<std::string> names;
  for (const Var& v : index_vars) {
    if (!names.insert(v->name_hint).second) {
      impl.Fail("the index map names " + std::string(v->name_hint) + " twice", f, mark);
    }
  }
  for (const PrimExpr& x : new_indices) {
    PostOrderVisit(x, [&](const ObjectRef& n) {
      const auto* v = n.as<VarNode>();
      bool known = v == nullptr;
      for (const Var& iv : index_vars) known = known || iv.get() == v;
      if (!known || n.as<BufferLoadNode>()) {
        impl.Fail(
            "the index map's result " + AsText(x) + " uses something other than its parameters", f,
            mark);
      }
    });
  }
  if (!buf->strides.empty() || AsConstInt(buf->elem_offset) != std::optional<int64_t>(0)) {
    impl.Fail(bname + " has strides or an offset; only a compact buffer can be relaid", f, mark);
  }
  // The new shape: each new index's interval over the old shape.
  arith::Analyzer analyzer;
  Map<Var, Range> dom;
  for (size_t k = 0; k < index_vars.size(); ++k) {
    Range r(MakeConst(buf->shape[k].dtype(), 0), buf->shape[k]);
    analyzer.Bind(index_vars[k], r, true);
    dom.Set(index_vars[k], r);
  }
  Array<PrimExpr> shape;
  int64_t new_points = 1;
  for (size_t j = 0; j < new_indices.size(); ++j) {
    arith::ConstIntBound bound = analyzer.ConstIntBound(new_indices[j]);
    if (bound->min_value == arith::ConstIntBound::kNegInf ||
        bound->max_value == arith::ConstIntBound::kPosInf) {
      impl.Fail("new index " + std::to_string(j) + " (" + AsText(new_indices[j]) +
                    ") could not be bounded over " + bname + "'s shape",
                f, mark);
    }
    if (bound->min_value != 0) {
      impl.Fail("new index " + std::to_string(j) + " (" + AsText(new_indices[j]) + ") starts at " +
                    std::to_string(bound->min_value) + " over " + bname +
                    "'s shape; a layout's indices start at 0",
                f, mark);
    }
    shape.push_back(MakeConst(DataType::Int(32), bound->max_value + 1));
    new_points *= bound->max_value + 1;
  }
  // One-to-one, and whether the image fills the new shape.
  bool injective = false, dense = false;
  arith::IterMapResult detected = arith::DetectIterMap(new_indices, dom, Bool(true),
                                                       arith::IterMapLevel::kBijective, &analyzer);
  if (detected.ok()) {
    injective = true;
    dense = true;
    for (size_t j = 0; j < new_indices.size(); ++j) {
      const arith::IterSumExpr& s = detected.indices[j];
      bool zero_base = analyzer.CanProveEqual(s->base, MakeConst(s->dtype, 0));
      if (s->args.empty()) {
        dense =
            dense && zero_base && analyzer.CanProveEqual(shape[j], MakeConst(DataType::Int(32), 1));
      } else {
        dense = dense && zero_base && s->args.size() == 1 &&
                analyzer.CanProveEqual(s->args[0]->scale, MakeConst(s->dtype, 1)) &&
                analyzer.CanProveEqual(s->args[0]->extent, shape[j]);
      }
    }
  }
  if (!dense) {
    // Evaluate f at every point of a constant old shape.
    int64_t old_points = 1;
    std::vector<int64_t> extents;
    bool constant = true;
    for (const PrimExpr& s : buf->shape) {
      auto c = AsConstInt(s);
      constant = constant && c && *c > 0;
      if (!constant) break;
      extents.push_back(*c);
      old_points *= *c;
      if (old_points > kMaxEnumerated) break;
    }
    if (constant && old_points <= kMaxEnumerated && new_points <= 8 * kMaxEnumerated) {
      std::vector<bool> hit(new_points, false);
      std::unordered_map<const VarNode*, int64_t> env;
      std::vector<int64_t> at(extents.size(), 0);
      bool ok = true;
      int64_t distinct = 0;
      for (int64_t p = 0; ok && p < old_points; ++p) {
        for (size_t k = 0; k < extents.size(); ++k) env[index_vars[k].get()] = at[k];
        int64_t flat = 0;
        for (size_t j = 0; ok && j < new_indices.size(); ++j) {
          auto v = arith::EvalInt(new_indices[j], env);
          int64_t ext = *AsConstInt(shape[j]);
          ok = v && *v >= 0 && *v < ext;
          if (ok) flat = flat * ext + *v;
        }
        if (!ok) break;
        if (hit[flat]) {
          impl.Fail("the index map " + map_text + " is not one-to-one over " + bname +
                        "'s shape: two elements land on the same new index",
                    f, mark);
        }
        hit[flat] = true;
        ++distinct;
        for (size_t k = extents.size(); k-- > 0;) {
          if (++at[k] < extents[k]) break;
          at[k] = 0;
        }
      }
      if (ok) {
        injective = true;
        dense = distinct == new_points;
      }
    }
  }
  if (!injective) {
    impl.Fail(
        "the index map " + map_text + " could not be proved one-to-one over " + bname + "'s shape" +
            (detected.errors.empty() ? std::string() : ": " + std::string(detected.errors[0])),
        f, mark);
  }
  const BlockNode* alloc = AllocatingBlock(f, buf);
  std::optional<PrimExpr> pad;
  if (!dense) {
    if (!pad_value) {
      impl.Fail("the image of " + bname + "'s shape under " + map_text +
                    " does not fill the new shape " + Tuple(shape) +
                    "; give pad_value for the padding",
                f, mark);
    }
    if (alloc == nullptr) {
      impl.Fail(bname +
                    " is a parameter: its padding would be the caller's; only an allocated "
                    "buffer can be padded",
                f, mark);
    }
    pad = *pad_value;
    if (pad->dtype() != buf->dtype) {
      if (!pad->as<IntImmNode>() && !pad->as<FloatImmNode>()) {
        impl.Fail("pad_value " + AsText(*pad) + " is " + pad->dtype().str() + ", " + bname +
                      " holds " + buf->dtype.str(),
                  f, mark);
      }
      pad = cast(buf->dtype, *pad);
    }
  }
  bool matched = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (const auto* blk = n.as<BlockNode>()) {
      for (const MatchBufferRegion& m : blk->match_buffers)
        matched |= m->source->buffer.same_as(buf);
    }
    if (const auto* d = n.as<DeclBufferNode>()) matched |= d->buffer->data.same_as(buf->data);
  });
  if (matched) {
    impl.Fail(bname +
                  " is viewed by a match_buffer or a DeclBuffer, which would keep the old "
                  "layout",
              f, mark);
  }

  Buffer nbuf(buf->name, buf->data, buf->dtype, shape, {}, buf->elem_offset, buf->scope,
              buf->data_alignment, buf->offset_factor);
  LayoutRewriter rw(buf, nbuf, index_vars, new_indices);
  Stmt body = rw.VisitStmt(f->body);
  if (pad) {
    // Fill the whole new buffer first, in the block that allocates it.
    Array<IterVar> ivs;
    Array<PrimExpr> vals, idx;
    std::vector<Var> loops;
    for (size_t j = 0; j < shape.size(); ++j) {
      Var v("v" + std::to_string(j)), ax("ax" + std::to_string(j));
      ivs.push_back(
          IterVar(v, Range(MakeConst(DataType::Int(32), 0), shape[j]), IterVarType::kDataPar));
      vals.push_back(ax);
      idx.push_back(v);
      loops.push_back(ax);
    }
    Array<Range> region;
    for (const PrimExpr& i : idx) region.push_back(Range(i, MakeConst(DataType::Int(32), 1)));
    std::string pname = bname + "_pad";
    Stmt fill = BlockRealize(
        vals, Bool(true),
        Block(ivs, {}, {BufferRegion(nbuf, region)}, pname, BufferStore(nbuf, *pad, idx)));
    for (size_t j = shape.size(); j-- > 0;) {
      fill = For(loops[j], MakeConst(DataType::Int(32), 0), shape[j], ForKind::kSerial, fill);
    }
    // The allocating block after the rewrite: the one whose alloc_buffers hold nbuf.
    class Prepend : public StmtExprMutator {
     public:
      Buffer buf;
      Stmt fill;
      using StmtExprMutator::VisitStmt_;
      Stmt VisitStmt_(const BlockNode* op) override {
        Stmt visited = StmtExprMutator::VisitStmt_(op);
        for (const Buffer& a : op->alloc_buffers) {
          if (!a.same_as(buf)) continue;
          const auto* b = visited.as<BlockNode>();
          Block out(b->iter_vars, b->reads, b->writes, b->name_hint,
                    SeqStmt::Flatten(Array<Stmt>{fill, b->body}), b->init, b->alloc_buffers,
                    b->match_buffers, b->annotations);
          out.CopyOnWrite()->span = op->span;
          return out;
        }
        return visited;
      }
    } prepend;
    prepend.buf = nbuf;
    prepend.fill = fill;
    body = prepend.VisitStmt(body);
  }
  PrimFunc g = f;
  g.CopyOnWrite()->body = body;
  Map<Var, Buffer> bmap;
  for (const auto& kv : f->buffer_map)
    bmap.Set(kv.first, kv.second.same_as(buf) ? nbuf : kv.second);
  g.CopyOnWrite()->buffer_map = bmap;
  mod_.CopyOnWrite()->functions.Set(e.func, g);
  impl.Record({block, Array<Any>{buffer_type, buffer_index}, String(map_text),
               pad_value ? Any(*pad_value) : Any(nullptr)},
              {});
}

}  // namespace schedule
}  // namespace tessel
