// The iterator-map objects (iter_map.h), their conversion back to ordinary expressions, and the
// tvm-ffi face of the detector.
#include <tessel/arith/iter_map.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iter_map_rewriter.h"

namespace tessel {
namespace arith {

namespace {
DataType DTypeOf(const tvm::ffi::ObjectRef& source) {
  if (const auto* e = source.as<ir::PrimExprNode>()) return e->dtype;
  if (const auto* s = source.as<IterSumExprNode>()) return s->dtype;
  TVM_FFI_THROW(TypeError) << "IterMark: the source must be a PrimExpr or an IterSumExpr, got "
                           << source.GetTypeKey();
}
}  // namespace

IterMark::IterMark(tvm::ffi::ObjectRef source, PrimExpr extent) {
  auto n = tvm::ffi::make_object<IterMarkNode>();
  DTypeOf(source);
  n->source = std::move(source);
  n->extent = std::move(extent);
  data_ = std::move(n);
}

IterSplitExpr::IterSplitExpr(IterMark source)
    : IterSplitExpr(source, ir::MakeConst(DTypeOf(source->source), 1)) {}

IterSplitExpr::IterSplitExpr(IterMark source, PrimExpr scale) {
  DataType t = DTypeOf(source->source);
  PrimExpr extent = source->extent;
  *this =
      IterSplitExpr(std::move(source), ir::MakeConst(t, 1), std::move(extent), std::move(scale));
}

IterSplitExpr::IterSplitExpr(IterMark source, PrimExpr lower_factor, PrimExpr extent,
                             PrimExpr scale) {
  auto n = tvm::ffi::make_object<IterSplitExprNode>();
  n->dtype = DTypeOf(source->source);
  n->source = std::move(source);
  n->lower_factor = std::move(lower_factor);
  n->extent = std::move(extent);
  n->scale = std::move(scale);
  data_ = std::move(n);
}

IterSplitExprNode* IterSplitExpr::CopyOnWrite() {
  if (!data_.unique()) data_ = tvm::ffi::make_object<IterSplitExprNode>(*get());
  return static_cast<IterSplitExprNode*>(data_.get());
}

IterSumExpr::IterSumExpr(tvm::ffi::Array<IterSplitExpr> args, PrimExpr base) {
  auto n = tvm::ffi::make_object<IterSumExprNode>();
  n->dtype = base.dtype();
  n->args = std::move(args);
  n->base = std::move(base);
  data_ = std::move(n);
}

IterSumExprNode* IterSumExpr::CopyOnWrite() {
  if (!data_.unique()) data_ = tvm::ffi::make_object<IterSumExprNode>(*get());
  return static_cast<IterSumExprNode*>(data_.get());
}

namespace iter_map {

bool ExprEqual(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return true;
  return tvm::ffi::StructuralEqual::Equal(a, b);
}

bool UsesAnyVar(const PrimExpr& e, const std::unordered_set<const ir::VarNode*>& vars) {
  bool found = false;
  ir::PostOrderVisit(e, [&](const tvm::ffi::ObjectRef& n) {
    if (const auto* v = n.as<ir::VarNode>()) found = found || vars.count(v) != 0;
  });
  return found;
}

bool SplitEqual(const IterSplitExpr& a, const IterSplitExpr& b, bool check_scale) {
  return a->source.same_as(b->source) && ExprEqual(a->lower_factor, b->lower_factor) &&
         ExprEqual(a->extent, b->extent) && (!check_scale || ExprEqual(a->scale, b->scale));
}

bool SumEqual(const IterSumExpr& a, const IterSumExpr& b) {
  if (a->args.size() != b->args.size() || !ExprEqual(a->base, b->base)) return false;
  for (size_t i = 0; i < a->args.size(); ++i) {
    if (!SplitEqual(a->args[i], b->args[i])) return false;
  }
  return true;
}

IterSumExpr ToSum(const IterSplitExpr& split) {
  return IterSumExpr({split}, ir::MakeConst(split->dtype, 0));
}

}  // namespace iter_map

namespace {

// An iterator expression written back as floordiv/floormod/mul/add.
class Normalizer {
 public:
  explicit Normalizer(Analyzer* analyzer) : analyzer_(analyzer) {}

  PrimExpr Sum(const IterSumExpr& expr) {
    PrimExpr res = ir::MakeConst(expr->dtype, 0);
    for (const IterSplitExpr& arg : expr->args) res = res + Split(arg);
    return res + expr->base;
  }

  PrimExpr Split(const IterSplitExpr& expr) {
    if (auto digits = Digits(expr)) return *digits;
    PrimExpr source = Source(expr->source);
    const PrimExpr& mark_extent = expr->source->extent;
    if (iter_map::IsOne(expr->lower_factor) &&
        analyzer_->CanProve(ir::eq(expr->extent, mark_extent))) {
      return source * expr->scale;
    }
    if (analyzer_->CanProve(ir::eq(mark_extent, expr->lower_factor * expr->extent))) {
      // Always 0 (an extent-1 split of a longer mark); a trivial mark keeps its iterator.
      if (iter_map::IsOne(expr->extent) && !iter_map::IsOne(mark_extent)) {
        return ir::MakeConst(expr->dtype, 0);
      }
      return ir::floordiv(source, expr->lower_factor) * expr->scale;
    }
    PrimExpr full = analyzer_->CanonicalSimplify(expr->extent * expr->lower_factor);
    return ir::floordiv(ir::floormod(source, full), expr->lower_factor) * expr->scale;
  }

  // A split of a fused mark that takes whole parts of it: the mark's source is a mixed-radix sum
  // (scales 1, e0, e0 * e1, ... of parts with extents e0, e1, ...), and the split's lower factor
  // and upper end fall on part boundaries. Then the split is the sum of those parts, rescaled:
  // (i0 * 32 + i1) // 32 is i0.
  std::optional<PrimExpr> Digits(const IterSplitExpr& expr) {
    auto sum = expr->source->source.as<IterSumExpr>();
    if (!sum || !iter_map::IsZero((*sum)->base) || (*sum)->args.size() < 2) return std::nullopt;
    std::vector<IterSplitExpr> parts((*sum)->args.begin(), (*sum)->args.end());
    std::vector<int64_t> scales;
    for (const IterSplitExpr& p : parts) {
      auto c = ir::AsConstInt(p->scale);
      if (!c || *c <= 0) return std::nullopt;
      scales.push_back(*c);
    }
    std::vector<size_t> order(parts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return scales[a] < scales[b]; });
    auto lf = ir::AsConstInt(expr->lower_factor), ext = ir::AsConstInt(expr->extent);
    if (!lf || !ext) return std::nullopt;
    int64_t expected = 1;
    PrimExpr out;
    bool started = false, ended = false;
    for (size_t k : order) {
      if (scales[k] != expected) return std::nullopt;
      auto e = ir::AsConstInt(parts[k]->extent);
      if (!e || *e <= 0) return std::nullopt;
      if (expected == *lf) started = true;
      if (expected == *lf * *ext) ended = true;
      if (started && !ended) {
        IterSplitExpr part = parts[k];
        part.CopyOnWrite()->scale = ir::MakeConst(expr->dtype, expected / *lf);
        PrimExpr term = Split(part);
        out = out.defined() ? term + out : term;
      }
      expected *= *e;
    }
    if (expected == *lf * *ext) ended = true;
    if (!started || !ended || !out.defined()) return std::nullopt;
    return out * expr->scale;
  }

  PrimExpr Source(const IterMark& mark) {
    if (auto sum = mark->source.as<IterSumExpr>()) return Sum(*sum);
    return *mark->source.as<PrimExpr>();
  }

 private:
  Analyzer* analyzer_;
};

}  // namespace

PrimExpr NormalizeIterMapToExpr(const tvm::ffi::ObjectRef& iter_expr, Analyzer* analyzer) {
  std::unique_ptr<Analyzer> own;
  if (!analyzer) {
    own = std::make_unique<Analyzer>();
    analyzer = own.get();
  }
  Normalizer n(analyzer);
  if (auto sum = iter_expr.as<IterSumExpr>()) return n.Sum(*sum);
  if (auto split = iter_expr.as<IterSplitExpr>()) return n.Split(*split);
  if (auto mark = iter_expr.as<IterMark>()) return n.Source(*mark);
  if (auto e = iter_expr.as<PrimExpr>()) return *e;
  TVM_FFI_THROW(TypeError) << "NormalizeIterMapToExpr: expected an iterator expression, got "
                           << iter_expr.GetTypeKey();
}

namespace {

IterMapLevel ParseLevel(const tvm::ffi::Any& level) {
  if (auto s = level.try_cast<tvm::ffi::String>()) {
    std::string v(*s);
    if (v == "bijective") return IterMapLevel::kBijective;
    if (v == "surjective") return IterMapLevel::kSurjective;
    if (v == "no_check") return IterMapLevel::kNoCheck;
  } else if (auto i = level.try_cast<int64_t>()) {
    if (*i == 0 || *i == 1 || *i == 3) return static_cast<IterMapLevel>(*i);
  }
  TVM_FFI_THROW(ValueError) << "check_level must be \"bijective\", \"surjective\" or "
                               "\"no_check\"";
}

class IterMapResultObj : public tvm::ffi::Object {
 public:
  tvm::ffi::Array<IterSumExpr> indices;
  tvm::ffi::Array<tvm::ffi::String> errors;
  PrimExpr padding_predicate;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.IterMapResult", IterMapResultObj,
                                    tvm::ffi::Object);
};

}  // namespace

// Defined in ffi_api.cc next to the Analyzer handle it unwraps.
Analyzer* AnalyzerFromHandle(const tvm::ffi::ObjectRef& handle);

namespace {
// The analyzer behind a Python tessel.arith.Analyzer handle, or null.
Analyzer* AnalyzerOf(const tvm::ffi::Optional<tvm::ffi::ObjectRef>& handle) {
  return handle.has_value() ? AnalyzerFromHandle(*handle) : nullptr;
}
}  // namespace

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<IterMarkNode>(refl::init(false))
      .def_ro("source", &IterMarkNode::source)
      .def_ro("extent", &IterMarkNode::extent);
  refl::ObjectDef<IterSplitExprNode>(refl::init(false))
      .def_ro("source", &IterSplitExprNode::source)
      .def_ro("lower_factor", &IterSplitExprNode::lower_factor)
      .def_ro("extent", &IterSplitExprNode::extent)
      .def_ro("scale", &IterSplitExprNode::scale)
      .def_ro("dtype", &IterSplitExprNode::dtype);
  refl::ObjectDef<IterSumExprNode>(refl::init(false))
      .def_ro("args", &IterSumExprNode::args)
      .def_ro("base", &IterSumExprNode::base)
      .def_ro("dtype", &IterSumExprNode::dtype);
  refl::ObjectDef<IterMapResultObj>(refl::init(false))
      .def_ro("indices", &IterMapResultObj::indices)
      .def_ro("errors", &IterMapResultObj::errors)
      .def_ro("padding_predicate", &IterMapResultObj::padding_predicate);
  refl::GlobalDef()
      .def("tessel.arith.IterMark",
           [](tvm::ffi::ObjectRef source, PrimExpr extent) { return IterMark(source, extent); })
      .def("tessel.arith.IterSplitExpr",
           [](IterMark source, PrimExpr lower_factor, PrimExpr extent, PrimExpr scale) {
             return IterSplitExpr(source, lower_factor, extent, scale);
           })
      .def("tessel.arith.IterSumExpr", [](tvm::ffi::Array<IterSplitExpr> args,
                                          PrimExpr base) { return IterSumExpr(args, base); })
      .def("tessel.arith.DetectIterMap",
           [](tvm::ffi::Array<PrimExpr> indices, tvm::ffi::Map<Var, Range> input_iters,
              PrimExpr predicate, tvm::ffi::Any level, bool simplify_trivial_iterators,
              tvm::ffi::Optional<tvm::ffi::ObjectRef> analyzer) {
             IterMapResult r = DetectIterMap(indices, input_iters, predicate, ParseLevel(level),
                                             AnalyzerOf(analyzer), simplify_trivial_iterators);
             auto obj = tvm::ffi::make_object<IterMapResultObj>();
             obj->indices = r.indices;
             obj->errors = r.errors;
             obj->padding_predicate = r.padding_predicate;
             return tvm::ffi::ObjectRef(obj);
           })
      .def("tessel.arith.IterMapSimplify",
           [](tvm::ffi::Array<PrimExpr> indices, tvm::ffi::Map<Var, Range> input_iters,
              PrimExpr predicate, tvm::ffi::Any level, bool simplify_trivial_iterators,
              tvm::ffi::Optional<tvm::ffi::ObjectRef> analyzer) {
             return IterMapSimplify(indices, input_iters, predicate, ParseLevel(level),
                                    AnalyzerOf(analyzer), simplify_trivial_iterators);
           })
      .def("tessel.arith.NormalizeIterMapToExpr",
           [](tvm::ffi::ObjectRef e) { return NormalizeIterMapToExpr(e); });
}

}  // namespace arith
}  // namespace tessel
