// The walk of the iterator-map rewriter over + - * // % (iter_map_rewriter.h): each input
// iterator becomes a split of its mark, sums merge like splits, a constant product scales them,
// and floordiv/floormod of a (fused) split become new splits, padding the mark where the divisor
// does not divide it and padding is allowed.
#include <numeric>

#include "iter_map_rewriter.h"

namespace tessel {
namespace arith {
namespace iter_map {

using ir::DataType;

IterMapRewriter::IterMapRewriter(Analyzer* analyzer, const Map<Var, Range>& input_iters,
                                 IterMapLevel level, bool simplify_trivial_iterators,
                                 Array<tvm::ffi::String>* errors)
    : analyzer_(analyzer), level_(level), errors_(*errors), padding_predicate_(ir::Bool(false)) {
  bound_analyzer_ = analyzer->Clone();
  for (const auto& kv : input_iters) {
    const Var& var = kv.first;
    const Range& r = kv.second;
    iter_vars_.insert(var.get());
    if (bound_analyzer_->MayBeNonEmpty(r)) bound_analyzer_->Bind(var, r, /*allow_override=*/true);
    if (simplify_trivial_iterators && IsOne(r->extent)) {
      var_map_[var.get()] = Value{PrimExpr(), IterSumExpr({}, r->min)};
    } else if (IsZero(r->min)) {
      IterMark mark(var, r->extent);
      var_map_[var.get()] = Value{PrimExpr(), ToSum(IterSplitExpr(mark))};
      input_marks_.push_back(mark);
    } else {
      IterMark mark(var - r->min, r->extent);
      var_map_[var.get()] = Value{PrimExpr(), IterSumExpr({IterSplitExpr(mark)}, r->min)};
      input_marks_.push_back(mark);
    }
  }
}

IterSumExpr IterMapRewriter::Rewrite(const PrimExpr& expr) {
  if (!FitsDType(expr)) {
    Error("the index " + ir::AsText(expr) + " may overflow its dtype over the iterators' ranges");
  }
  return NormalizeToIterWithOffset(Visit(expr).AsSum());
}

IterSumExpr IterMapRewriter::RewriteAndUpdatePadding(const PrimExpr& expr) {
  update_iterator_padding_ = true;
  IterSumExpr res = Rewrite(expr);
  update_iterator_padding_ = false;
  return res;
}

IterSumExpr IterMapRewriter::RewriteIterConstraint(const PrimExpr& expr,
                                                   const Optional<PrimExpr>& min,
                                                   const Optional<PrimExpr>& max) {
  return NormalizeToIterOnBoundExpr(Visit(expr).AsSum(), min, max);
}

bool IterMapRewriter::FitsDType(const PrimExpr& e) {
  if (analyzer_->assume_no_overflow()) return true;
  DataType t = e.dtype();
  if (!t.is_int() && !t.is_uint()) return false;
  ConstIntBound b = bound_analyzer_->ConstIntBound(e);
  IntInterval whole = DTypeRange(t);
  IntInterval got = ToInterval(b, t);
  // Under wrap-around a bound is the whole dtype wherever the exact value may leave it, so a
  // narrower bound is exact. (A bound of the whole dtype that is exact is refused as well.)
  return got.lo > whole.lo || got.hi < whole.hi;
}

Value IterMapRewriter::Visit(const PrimExpr& e) {
  if (const auto* v = e.as<ir::VarNode>()) {
    auto it = var_map_.find(v);
    if (it != var_map_.end()) return it->second;
    return Value{e, IterSumExpr()};
  }
  DataType t = e.dtype();
  bool index_type = (t.is_int() || t.is_uint()) && t.lanes() == 1;
  if (index_type) {
    if (const auto* op = e.as<ir::AddNode>()) return VisitAdd(e, op->a, op->b, 1);
    if (const auto* op = e.as<ir::SubNode>()) return VisitAdd(e, op->a, op->b, -1);
    if (const auto* op = e.as<ir::MulNode>()) return VisitMul(e, op->a, op->b);
    if (const auto* op = e.as<ir::FloorDivNode>()) return VisitDivMod(e, op->a, op->b, true);
    if (const auto* op = e.as<ir::FloorModNode>()) return VisitDivMod(e, op->a, op->b, false);
  }
  if (UsesAnyVar(e, iter_vars_)) {
    Error("cannot represent as an iterator map: an input iterator occurs under " +
          std::string(e->GetTypeKey()) + " in " + ir::AsText(e));
  }
  return Value{e, IterSumExpr()};
}

namespace {

// lhs += sign * rhs, merging a split of the same mark, lower factor and extent; a split whose
// scale becomes 0 is dropped.
void AddSplit(IterSumExprNode* lhs, IterSplitExpr rhs, int sign) {
  for (size_t i = 0; i < lhs->args.size(); ++i) {
    const IterSplitExpr& l = lhs->args[i];
    if (l->source.same_as(rhs->source) && ExprEqual(l->lower_factor, rhs->lower_factor) &&
        ExprEqual(l->extent, rhs->extent)) {
      PrimExpr scale = sign > 0 ? l->scale + rhs->scale : l->scale - rhs->scale;
      if (IsZero(scale)) {
        lhs->args.erase(lhs->args.begin() + i);
        return;
      }
      rhs.CopyOnWrite()->scale = scale;
      lhs->args.Set(i, rhs);
      return;
    }
  }
  if (sign < 0) rhs.CopyOnWrite()->scale = ir::MakeConst(rhs->scale.dtype(), 0) - rhs->scale;
  lhs->args.push_back(rhs);
}

PrimExpr CeilDiv(const PrimExpr& a, const PrimExpr& b) { return ir::floordiv(a + b - 1, b); }

}  // namespace

Value IterMapRewriter::VisitAdd(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b, int sign) {
  Value va = Visit(a), vb = Visit(b);
  if (!va.is_iter() && !vb.is_iter()) {
    if (va.expr.same_as(a) && vb.expr.same_as(b)) return Value{e, IterSumExpr()};
    return Value{sign > 0 ? va.expr + vb.expr : va.expr - vb.expr, IterSumExpr()};
  }
  IterSumExpr ret = va.AsSum();
  IterSumExprNode* n = ret.CopyOnWrite();
  if (!vb.is_iter()) {
    n->base = sign > 0 ? n->base + vb.expr : n->base - vb.expr;
    return Value{PrimExpr(), ret};
  }
  for (const IterSplitExpr& s : vb.sum->args) AddSplit(n, s, sign);
  n->base = sign > 0 ? n->base + vb.sum->base : n->base - vb.sum->base;
  return Value{PrimExpr(), ret};
}

Value IterMapRewriter::VisitMul(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b) {
  Value va = Visit(a), vb = Visit(b);
  if (!va.is_iter() && !vb.is_iter()) {
    if (va.expr.same_as(a) && vb.expr.same_as(b)) return Value{e, IterSumExpr()};
    return Value{va.expr * vb.expr, IterSumExpr()};
  }
  if (va.is_iter() && vb.is_iter()) {
    Error("a product of two iterators cannot be represented as an iterator map: " + ir::AsText(e));
    return Value{e, IterSumExpr()};
  }
  if (!va.is_iter()) std::swap(va, vb);
  IterSumExpr ret = va.sum;
  IterSumExprNode* n = ret.CopyOnWrite();
  Array<IterSplitExpr> args;
  if (!IsZero(vb.expr)) {
    for (IterSplitExpr s : n->args) {
      s.CopyOnWrite()->scale = s->scale * vb.expr;
      args.push_back(s);
    }
  }
  n->args = args;
  n->base = n->base * vb.expr;
  return Value{PrimExpr(), ret};
}

IterSumExpr IterMapRewriter::PreprocessDividend(const IterSumExpr& dividend,
                                                const PrimExpr& original) {
  if (dividend->args.empty()) return IterSumExpr();
  if (dividend->args.size() == 1) return dividend;
  std::optional<IterSumExpr> fused = TryFuseIters(dividend, level_, true);
  if (!fused || (*fused)->args.size() != 1) {
    Error("the dividend " + ir::AsText(original) + " cannot be written as a single fused iterator");
    return IterSumExpr();
  }
  return *fused;
}

Value IterMapRewriter::VisitDivMod(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b,
                                   bool is_div) {
  Value va = Visit(a), vb = Visit(b);
  if (!va.is_iter() && !vb.is_iter()) {
    if ((va.expr.same_as(a) && vb.expr.same_as(b)) || IsZero(vb.expr)) {
      return Value{e, IterSumExpr()};
    }
    return Value{is_div ? ir::floordiv(va.expr, vb.expr) : ir::floormod(va.expr, vb.expr),
                 IterSumExpr()};
  }
  const char* what = is_div ? "floordiv" : "floormod";
  if (vb.is_iter()) {
    Error(std::string("cannot represent as an iterator map: the divisor of ") + what +
          " is an iterator in " + ir::AsText(e));
    return Value{e, IterSumExpr()};
  }
  if (!analyzer_->CanProve(ir::gt(vb.expr, ir::MakeConst(vb.expr.dtype(), 0)))) {
    Error(std::string("cannot represent as an iterator map: the divisor of ") + what +
          " is not provably positive in " + ir::AsText(e));
    return Value{e, IterSumExpr()};
  }
  IterSumExpr pre = PreprocessDividend(va.sum, a);
  if (!pre.defined()) {
    // A sum of trivial (extent-1) iterators only: the expression stays as it is, part of a base.
    if (va.sum->args.empty()) return Value{e, IterSumExpr()};
    return Value{e, IterSumExpr()};
  }
  if (!FitsDType(a)) {
    Error("the dividend " + ir::AsText(a) + " may overflow its dtype over the iterators' ranges");
    return Value{e, IterSumExpr()};
  }
  std::optional<Value> r = is_div ? SplitFloorDiv(pre->args[0], pre->base, vb.expr)
                                  : SplitFloorMod(pre->args[0], pre->base, vb.expr);
  if (!r) return Value{e, IterSumExpr()};
  return *r;
}

bool IterMapRewriter::CanProveDivisible(const PrimExpr& lhs, const PrimExpr& rhs) {
  auto cl = ir::AsConstInt(lhs), cr = ir::AsConstInt(rhs);
  if (cr && *cr == 0) return false;
  if (cl && cr) return *cl % *cr == 0;
  if (analyzer_->CanProveEqual(lhs, rhs)) return true;
  if (rhs.dtype() != lhs.dtype()) return false;
  return analyzer_->CanProve(ir::eq(ir::floormod(lhs, rhs), ir::MakeConst(lhs.dtype(), 0)));
}

std::optional<Value> IterMapRewriter::SplitFloorDiv(IterSplitExpr lhs, PrimExpr base,
                                                    PrimExpr rhs) {
  DataType t = lhs->dtype;
  if (!analyzer_->CanProveGreaterEqual(lhs->scale, 1)) {
    Error("cannot represent as an iterator map: a negative scale " + ir::AsText(lhs->scale) +
          " under a division");
    return std::nullopt;
  }
  if (IsOne(rhs)) return Value{PrimExpr(), IterSumExpr({lhs}, base)};
  if (!IsOne(lhs->scale)) {
    if (CanProveDivisible(lhs->scale, rhs) && CanProveDivisible(base, rhs)) {
      // (x * c1 * c2 + y * c2) // c2 = x * c1 + y
      lhs.CopyOnWrite()->scale = analyzer_->Simplify(ir::floordiv(lhs->scale, rhs));
      return Value{PrimExpr(), IterSumExpr({lhs}, analyzer_->Simplify(ir::floordiv(base, rhs)))};
    } else if (CanProveDivisible(rhs, lhs->scale) && CanProveDivisible(base, lhs->scale)) {
      // (x * c1 + y * c1) // (c1 * c2) = (x + y) // c2
      base = analyzer_->Simplify(ir::floordiv(base, lhs->scale));
      rhs = analyzer_->Simplify(ir::floordiv(rhs, lhs->scale));
      lhs.CopyOnWrite()->scale = ir::MakeConst(t, 1);
    } else {
      Error("cannot represent as an iterator map: the scale " + ir::AsText(lhs->scale) +
            " of the dividend and the divisor " + ir::AsText(rhs) + " do not divide each other");
      return std::nullopt;
    }
  }
  auto [padded, shift] = PadDividendToDivisor(lhs, base, rhs);
  if (!padded.defined()) return std::nullopt;
  PrimExpr rest = analyzer_->Simplify(base - shift);
  if (!CanProveDivisible(rest, rhs) && !IsZero(rest)) {
    Error("cannot represent as an iterator map: the offset " + ir::AsText(rest) +
          " is not a multiple of the divisor " + ir::AsText(rhs));
    return std::nullopt;
  }
  // floormod(floordiv(m, lf), c1 * c2) // c1 = floormod(floordiv(m, lf * c1), c2)
  IterSplitExpr split;
  if (CanProveDivisible(padded->extent, rhs)) {
    split = IterSplitExpr(padded->source, padded->lower_factor * rhs,
                          analyzer_->Simplify(ir::floordiv(padded->extent, rhs)), padded->scale);
  } else if (IsOne(padded->lower_factor) &&
             analyzer_->CanProveEqual(padded->extent, padded->source->extent)) {
    // The whole mark: floordiv(m, c) has ceildiv(extent, c) values.
    split = IterSplitExpr(padded->source, rhs, analyzer_->Simplify(CeilDiv(padded->extent, rhs)),
                          padded->scale);
  } else {
    // A part of the mark that c does not divide: the part becomes a mark of its own.
    split = IterSplitExpr(IterMark(ToSum(padded), padded->extent), rhs,
                          analyzer_->Simplify(CeilDiv(padded->extent, rhs)), ir::MakeConst(t, 1));
  }
  PrimExpr new_base = analyzer_->Simplify(ir::floordiv(rest, rhs));
  return Value{PrimExpr(), IterSumExpr({split}, new_base)};
}

std::optional<Value> IterMapRewriter::SplitFloorMod(IterSplitExpr lhs, PrimExpr base,
                                                    PrimExpr rhs) {
  DataType t = lhs->dtype;
  if (!analyzer_->CanProveGreaterEqual(lhs->scale, 1)) {
    Error("cannot represent as an iterator map: a negative scale " + ir::AsText(lhs->scale) +
          " under a division");
    return std::nullopt;
  }
  if (IsOne(rhs)) return Value{ir::MakeConst(t, 0), IterSumExpr()};
  if (!IsOne(lhs->scale)) {
    if (CanProveDivisible(lhs->scale, rhs) && CanProveDivisible(base, rhs)) {
      return Value{ir::MakeConst(t, 0), IterSumExpr()};
    } else if (CanProveDivisible(rhs, lhs->scale) && CanProveDivisible(base, lhs->scale)) {
      // (x * c1 + y * c1) % (c1 * c2) = ((x + y) % c2) * c1
      base = analyzer_->Simplify(ir::floordiv(base, lhs->scale));
      rhs = analyzer_->Simplify(ir::floordiv(rhs, lhs->scale));
    } else {
      Error("cannot represent as an iterator map: the scale " + ir::AsText(lhs->scale) +
            " of the dividend and the divisor " + ir::AsText(rhs) + " do not divide each other");
      return std::nullopt;
    }
  }
  IterSplitExpr unscaled = lhs;
  unscaled.CopyOnWrite()->scale = ir::MakeConst(t, 1);
  auto [padded, shift] = PadDividendToDivisor(unscaled, base, rhs);
  if (!padded.defined()) return std::nullopt;
  PrimExpr rest = analyzer_->Simplify(base - shift);
  if (!CanProveDivisible(rest, rhs) && !IsZero(rest)) {
    Error("cannot represent as an iterator map: the offset " + ir::AsText(rest) +
          " is not a multiple of the divisor " + ir::AsText(rhs));
    return std::nullopt;
  }
  if (!CanProveDivisible(padded->extent, rhs)) {
    Error("cannot represent as an iterator map: the divisor " + ir::AsText(rhs) +
          " does not divide the extent " + ir::AsText(padded->extent) + " of " +
          ir::AsText(NormalizeIterMapToExpr(padded, analyzer_)));
    return std::nullopt;
  }
  // floormod(floormod(floordiv(m, lf), c1 * c2), c1) = floormod(floordiv(m, lf), c1)
  return Value{PrimExpr(),
               ToSum(IterSplitExpr(padded->source, padded->lower_factor, rhs, lhs->scale))};
}

IterMapRewriter::PaddingInfo& IterMapRewriter::PaddingOf(const IterMark& mark) {
  for (auto& kv : padded_iter_map_) {
    if (kv.first.same_as(mark)) return kv.second;
  }
  DataType t = mark->extent.dtype();
  padded_iter_map_.push_back(
      {mark, PaddingInfo{ir::MakeConst(t, 1), ir::MakeConst(t, 0), ir::MakeConst(t, 0), {}}});
  return padded_iter_map_.back().second;
}

const IterMark* IterMapRewriter::PaddedOrigin(const IterMark& padded) const {
  for (const auto& kv : padded_origin_map_) {
    if (kv.first.same_as(padded)) return &kv.second;
  }
  return nullptr;
}

namespace {
PrimExpr ApproxLcm(const PrimExpr& a, const PrimExpr& b, Analyzer* analyzer) {
  auto ca = ir::AsConstInt(a), cb = ir::AsConstInt(b);
  if (ca && cb && *ca > 0 && *cb > 0) return ir::MakeConst(a.dtype(), std::lcm(*ca, *cb));
  if (analyzer->CanProveEqual(a, b)) return a;
  auto zero = ir::MakeConst(a.dtype(), 0);
  if (analyzer->CanProve(ir::eq(ir::floormod(a, b), zero))) return a;
  if (analyzer->CanProve(ir::eq(ir::floormod(b, a), zero))) return b;
  return analyzer->Simplify(a * b);
}
}  // namespace

std::pair<IterSplitExpr, PrimExpr> IterMapRewriter::PadDividendToDivisor(IterSplitExpr split,
                                                                         PrimExpr base,
                                                                         PrimExpr divisor) {
  DataType t = split->dtype;
  PrimExpr zero = ir::MakeConst(t, 0);
  // Padding below makes (left_pad + split) start at a multiple of divisor; padding above makes
  // it end at one.
  PrimExpr left_pad = analyzer_->Simplify(ir::floormod(base, divisor));
  PrimExpr right_edge = left_pad + split->extent;
  PrimExpr right_pad = CanProveDivisible(right_edge, divisor)
                           ? zero
                           : analyzer_->Simplify(ir::floormod(zero - right_edge, divisor));
  const IterMark& mark = split->source;
  if (update_iterator_padding_) {
    // First pass: collect the divisors and left paddings every split of the mark asks for.
    PaddingInfo& info = PaddingOf(mark);
    info.padding_factor = ApproxLcm(info.padding_factor, divisor * split->lower_factor, analyzer_);
    if (IsZero(left_pad) && IsZero(right_pad)) return {split, zero};
    requires_padding_ = true;
    info.left_pad = analyzer_->Simplify(ir::max(info.left_pad, left_pad * split->lower_factor));
    // Only the extents matter in this pass's result.
    split.CopyOnWrite()->extent = analyzer_->Simplify(left_pad + split->extent + right_pad);
    return {split, left_pad};
  }
  PaddingInfo* info = nullptr;
  for (auto& kv : padded_iter_map_) {
    if (kv.first.same_as(mark)) info = &kv.second;
  }
  if (!info || (IsZero(info->left_pad) && CanProveDivisible(mark->extent, info->padding_factor))) {
    return {split, zero};  // no padding: the caller checks that base is a multiple of divisor
  }
  if (!analyzer_->CanProve(ir::ge(split->lower_factor * split->extent, mark->extent))) {
    Error("cannot pad " + ir::AsText(NormalizeIterMapToExpr(split, analyzer_)) +
          ": it is not the outermost split of its iterator");
    return {IterSplitExpr(), PrimExpr()};
  }
  if (!CanProveDivisible(info->padding_factor, split->lower_factor) ||
      !CanProveDivisible(info->padding_factor, divisor)) {
    Error("incompatible padding of " + ir::AsText(NormalizeIterMapToExpr(split, analyzer_)));
    return {IterSplitExpr(), PrimExpr()};
  }
  PrimExpr mark_left_pad = info->left_pad;
  if (!CanProveDivisible(mark_left_pad, split->lower_factor) && !IsZero(mark_left_pad)) {
    Error("incompatible left padding on " + ir::AsText(NormalizeIterMapToExpr(split, analyzer_)) +
          ": the iterator is left padded by " + ir::AsText(mark_left_pad));
    return {IterSplitExpr(), PrimExpr()};
  }
  if (!info->padded.defined()) {
    PrimExpr edge = analyzer_->Simplify(mark->extent + mark_left_pad);
    PrimExpr mark_right_pad =
        CanProveDivisible(edge, info->padding_factor)
            ? zero
            : analyzer_->Simplify(ir::floormod(zero - edge, info->padding_factor));
    info->right_pad = mark_right_pad;
    info->padded = IterMark(IterSumExpr({IterSplitExpr(mark)}, mark_left_pad),
                            analyzer_->Simplify(edge + mark_right_pad));
    padded_origin_map_.push_back({info->padded, mark});
    // The padded points, in terms of the padded iterator p = source + left pad: p below the left
    // pad, or p at or past the original edge.
    PrimExpr p = NormalizeIterMapToExpr(info->padded, analyzer_);
    PrimExpr pf = info->padding_factor;
    PrimExpr pred = ir::Bool(false);
    if (!IsZero(mark_left_pad)) {
      pred = ir::logical_or(pred, ir::logical_and(ir::eq(ir::floordiv(p, pf), zero),
                                                  ir::lt(ir::floormod(p, pf), mark_left_pad)));
    }
    if (!IsZero(mark_right_pad)) {
      pred = ir::logical_or(pred,
                            ir::logical_and(ir::eq(ir::floordiv(p, pf), ir::floordiv(edge, pf)),
                                            ir::ge(ir::floormod(p, pf), ir::floormod(edge, pf))));
    }
    padding_predicate_ = analyzer_->Simplify(ir::logical_or(padding_predicate_, pred));
  }
  PrimExpr shift = analyzer_->Simplify(ir::floordiv(mark_left_pad, split->lower_factor));
  split.CopyOnWrite()->source = info->padded;
  split.CopyOnWrite()->extent =
      analyzer_->Simplify(ir::floordiv(info->padded->extent, split->lower_factor));
  return {split, shift};
}

}  // namespace iter_map
}  // namespace arith
}  // namespace tessel
