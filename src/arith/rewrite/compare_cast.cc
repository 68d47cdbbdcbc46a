// Constant casts and offset comparisons of the rewrite simplifier (see compare_cast.h).
#include "arith/rewrite/compare_cast.h"

#include <tessel/arith/int_interval.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>

#include <cmath>
#include <limits>

#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// Integers of at most this magnitude are exact in a float type (its significand's precision).
double ExactIntegerLimit(DataType t) {
  if (t.is_bfloat()) return 256.0;
  switch (t.bits()) {
    case 16:
      return 2048.0;
    case 32:
      return 16777216.0;
    case 64:
      return 9007199254740992.0;
    default:
      return 0.0;
  }
}

// Whether the float value v is exactly a value of the float type t.
bool ExactInFloat(double v, DataType t) {
  if (std::isnan(v) || std::isinf(v)) return t.bits() >= 16;
  if (t.bits() == 64) return true;
  if (t.bits() == 32 && !t.is_bfloat()) return static_cast<double>(static_cast<float>(v)) == v;
  // float16 and bfloat16: integral values up to the significand's limit (other values would
  // need the format's rounding modelled here).
  return v == std::floor(v) && std::fabs(v) <= ExactIntegerLimit(t);
}

// e as term + constant (one level: `t + c`, `c + t`, `t - c`); a plain e is (e, 0).
struct Offset {
  const PrimExprNode* term;
  i128 c;
};
Offset SplitOffset(const PrimExprNode* e) {
  if (e->IsInstance<AddNode>()) {
    const auto* op = static_cast<const AddNode*>(e);
    if (const auto* imm = op->b.as<IntImmNode>()) return {op->a.get(), ConstValue(imm)};
    if (const auto* imm = op->a.as<IntImmNode>()) return {op->b.get(), ConstValue(imm)};
  } else if (e->IsInstance<SubNode>()) {
    const auto* op = static_cast<const SubNode*>(e);
    if (const auto* imm = op->b.as<IntImmNode>()) return {op->a.get(), -ConstValue(imm)};
  }
  return {e, 0};
}

}  // namespace

std::optional<PrimExpr> FoldConstantCast(const CastNode* op) {
  DataType to = op->dtype;
  if (!to.is_scalar() || !op->value.dtype().is_scalar()) return std::nullopt;
  if (const auto* i = op->value.as<IntImmNode>()) {
    i128 v = ConstValue(i);
    if (to.is_bool()) return IntImm(to, v != 0);
    if (to.is_int_or_uint()) return cast(to, op->value);  // wraps, as the IR defines
    if (to.is_floating()) {
      double d = static_cast<double>(v);
      if (std::fabs(d) > ExactIntegerLimit(to)) return std::nullopt;
      return FloatImm(to, d);
    }
    return std::nullopt;
  }
  if (const auto* f = op->value.as<FloatImmNode>()) {
    double v = f->value;
    if (to.is_bool()) return IntImm(to, v != 0.0 || std::isnan(v));
    if (to.is_floating()) {
      if (!ExactInFloat(v, to)) return std::nullopt;
      return FloatImm(to, v);
    }
    if (to.is_int_or_uint()) {
      if (std::isnan(v) || v != std::floor(v) || std::fabs(v) > 9007199254740992.0) {
        return std::nullopt;
      }
      i128 iv = static_cast<i128>(v);
      if (!FitsInDType(to, iv)) return std::nullopt;
      return IntImm(to, static_cast<int64_t>(iv));
    }
  }
  return std::nullopt;
}

std::optional<PrimExpr> NormalizeOffsetCompare(const PrimExprNode* e, Analyzer* analyzer) {
  ExprKind k = KindOf(e);
  if (k < ExprKind::kEQ || k > ExprKind::kGE) return std::nullopt;
  const PrimExprNode* kids[3];
  KidsOf(e, k, kids);
  const PrimExprNode *a = kids[0], *b = kids[1];
  DataType t = a->dtype;
  if (!t.is_scalar() || !t.is_int_or_uint() || b->dtype != t) return std::nullopt;
  if (k == ExprKind::kGT || k == ExprKind::kGE) {
    std::swap(a, b);
    k = k == ExprKind::kGT ? ExprKind::kLT : ExprKind::kLE;
  }
  Offset oa = SplitOffset(a), ob = SplitOffset(b);
  if (oa.c == 0 && ob.c == 0) return std::nullopt;
  if (oa.term->IsInstance<IntImmNode>() || ob.term->IsInstance<IntImmNode>()) return std::nullopt;
  if (oa.term->dtype != t || ob.term->dtype != t) return std::nullopt;
  i128 d = oa.c - ob.c;
  bool ordering = k == ExprKind::kLT || k == ExprKind::kLE;
  // `<=` with d == 1 and `<` with d == -1 change the operator instead of keeping a constant.
  if (k == ExprKind::kLT && d == -1) {
    k = ExprKind::kLE;
    d = 0;
  } else if (k == ExprKind::kLE && d == 1) {
    k = ExprKind::kLT;
    d = 0;
  }
  i128 shift = d;
  if (!FitsInDType(t, shift) || !FitsInDType(t, -shift)) return std::nullopt;
  if (ordering) {
    // The sides' exact values and the new side's must all fit: then the comparison of the
    // values is the comparison of the mathematical integers, which moving constants keeps.
    bool assume = analyzer->assume_no_overflow();
    const ConstIntBoundAnalyzer& bounds = analyzer->const_int_bound_analyzer();
    IntInterval ta = bounds.Eval(oa.term), tb = bounds.Eval(ob.term);
    if (ta.is_empty() || tb.is_empty()) return std::nullopt;
    auto fits = [&](const IntInterval& x, i128 c) {
      return FitsOrAssumed(IntInterval{x.lo + c, x.hi + c}, t, assume);
    };
    if (!fits(ta, oa.c) || !fits(tb, ob.c)) return std::nullopt;
    if (shift > 0 && !fits(ta, shift)) return std::nullopt;
    if (shift < 0 && !fits(tb, -shift)) return std::nullopt;
  }
  PrimExpr lhs = GetRef<PrimExpr>(oa.term), rhs = GetRef<PrimExpr>(ob.term);
  if (shift > 0) lhs = Add(lhs, IntImm(t, static_cast<int64_t>(shift)));
  if (shift < 0) rhs = Add(rhs, IntImm(t, static_cast<int64_t>(-shift)));
  PrimExpr out;
  switch (k) {
    case ExprKind::kLT:
      out = LT(lhs, rhs);
      break;
    case ExprKind::kLE:
      out = LE(lhs, rhs);
      break;
    case ExprKind::kEQ:
      out = EQ(lhs, rhs);
      break;
    default:
      out = NE(lhs, rhs);
      break;
  }
  if (SameExpr(out.get(), e)) return std::nullopt;
  return out;
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
