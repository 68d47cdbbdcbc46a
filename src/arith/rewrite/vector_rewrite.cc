// Lane-wise rewriting of Ramp / Broadcast arithmetic (contract in vector_rewrite.h).
#include "arith/rewrite/vector_rewrite.h"

#include <tessel/arith/int_interval.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>

namespace tessel {
namespace arith {
namespace rewrite {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

// The value of a non-negative-safe integer constant (uint64 above INT64_MAX is not used).
std::optional<i128> ConstOf(const PrimExpr& e) {
  const auto* imm = e.as<IntImmNode>();
  if (!imm || !imm->dtype.is_int_or_uint()) return std::nullopt;
  if (imm->dtype.is_uint() && imm->value < 0) return std::nullopt;
  return imm->value;
}

PrimExpr MakeRamp(PrimExpr base, PrimExpr stride, int64_t lanes) {
  if (auto s = ConstOf(stride); s && *s == 0) return Broadcast(base, lanes);
  return Ramp(base, stride, lanes);
}

std::optional<PrimExpr> Elementwise(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  switch (k) {
#define TESSEL_X(Name)    \
  case ExprKind::k##Name: \
    return Name(a, b);
    TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
    TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
    TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
    default:
      return std::nullopt;
  }
}

// Ramp(b, s, n) divided by the constant c > 0 (floor semantics; `trunc` asks for truncating
// division, allowed only where every lane is non-negative); `mod` asks for the remainder.
std::optional<PrimExpr> DivideRamp(const RampNode* r, i128 c, bool mod, bool trunc,
                                   Analyzer* analyzer) {
  auto s = ConstOf(r->stride);
  if (!s || c <= 0) return std::nullopt;
  DataType t = r->base.dtype();
  IntInterval b = analyzer->const_int_bound_analyzer().Eval(r->base);
  if (b.is_empty()) return std::nullopt;
  i128 span = *s * (r->lanes - 1);
  // The exact lanes b + i*s: none may wrap, or the reasoning below is about other values.
  IntInterval lanes{b.lo + (span < 0 ? span : 0), b.hi + (span > 0 ? span : 0)};
  if (!FitsOrAssumed(lanes, t, analyzer->assume_no_overflow())) return std::nullopt;
  if (trunc && lanes.lo < 0) return std::nullopt;
  PrimExpr cexpr = IntImm(t, static_cast<int64_t>(c));
  auto quot = [&]() { return trunc ? truncdiv(r->base, cexpr) : floordiv(r->base, cexpr); };
  auto rem = [&]() { return trunc ? truncmod(r->base, cexpr) : floormod(r->base, cexpr); };
  if (*s % c == 0) {
    if (mod) return Broadcast(rem(), r->lanes);
    return MakeRamp(quot(), IntImm(t, static_cast<int64_t>(*s / c)), r->lanes);
  }
  // The range of b mod c: fixed by the modular set, else from the bounds when they stay in one
  // block of c.
  IntInterval low{0, c - 1};
  ModularSet m = analyzer->ModularSet(r->base);
  i128 coeff = m->coeff;
  if (coeff % c == 0) {
    i128 v = FloorModI128(m->base, c);
    low = {v, v};
  } else if (FloorDivI128(b.lo, c) == FloorDivI128(b.hi, c)) {
    low = {FloorModI128(b.lo, c), FloorModI128(b.hi, c)};
  } else if (coeff > 1 && c % coeff == 0) {
    // b = coeff * k + base with coeff dividing c: b mod c is base mod coeff plus a multiple of
    // coeff below c (x * 8 mod 64 is one of 0, 8, ..., 56).
    i128 v = FloorModI128(m->base, coeff);
    low = {v, c - coeff + v};
  }
  if (low.lo + (span < 0 ? span : 0) < 0 || low.hi + (span > 0 ? span : 0) >= c) {
    return std::nullopt;
  }
  if (mod) return MakeRamp(rem(), r->stride, r->lanes);
  return Broadcast(quot(), r->lanes);
}

}  // namespace

std::optional<PrimExpr> RewriteVector(const PrimExpr& e, Analyzer* analyzer) {
  ExprKind k = KindOf(e.get());
  if (const auto* r = e.as<RampNode>()) {
    if (auto s = ConstOf(r->stride); s && *s == 0) return Broadcast(r->base, r->lanes);
    return std::nullopt;
  }
  PrimExpr a, b;
  switch (k) {
#define TESSEL_X(Name)                                        \
  case ExprKind::k##Name: {                                   \
    const auto* op = static_cast<const Name##Node*>(e.get()); \
    a = op->a;                                                \
    b = op->b;                                                \
    break;                                                    \
  }
    TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
    TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
    TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
    default:
      return std::nullopt;
  }
  DataType ot = a.dtype();
  // Integer (or bool, for logical ops) lanes only: float lanes do not follow integer algebra.
  if (!(ot.is_int_or_uint() || ot.is_bool()) || ot.is_scalar()) return std::nullopt;
  const auto* ba = a.as<BroadcastNode>();
  const auto* bb = b.as<BroadcastNode>();
  if (ba && bb) {
    auto r = Elementwise(k, ba->value, bb->value);
    if (!r) return std::nullopt;
    return Broadcast(*r, ba->lanes);
  }
  if (!ot.is_int_or_uint()) return std::nullopt;
  const auto* ra = a.as<RampNode>();
  const auto* rb = b.as<RampNode>();
  switch (k) {
    case ExprKind::kAdd:
      if (ra && bb) return MakeRamp(Add(ra->base, bb->value), ra->stride, ra->lanes);
      if (ba && rb) return MakeRamp(Add(ba->value, rb->base), rb->stride, rb->lanes);
      if (ra && rb)
        return MakeRamp(Add(ra->base, rb->base), Add(ra->stride, rb->stride), ra->lanes);
      return std::nullopt;
    case ExprKind::kSub:
      if (ra && bb) return MakeRamp(Sub(ra->base, bb->value), ra->stride, ra->lanes);
      if (ba && rb) {
        PrimExpr zero = IntImm(rb->stride.dtype(), 0);
        return MakeRamp(Sub(ba->value, rb->base), Sub(zero, rb->stride), rb->lanes);
      }
      if (ra && rb)
        return MakeRamp(Sub(ra->base, rb->base), Sub(ra->stride, rb->stride), ra->lanes);
      return std::nullopt;
    case ExprKind::kMul:
      if (ra && bb) {
        return MakeRamp(Mul(ra->base, bb->value), Mul(ra->stride, bb->value), ra->lanes);
      }
      if (ba && rb) {
        return MakeRamp(Mul(ba->value, rb->base), Mul(ba->value, rb->stride), rb->lanes);
      }
      return std::nullopt;
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
    case ExprKind::kDiv:
    case ExprKind::kMod: {
      if (!ra || !bb) return std::nullopt;
      auto c = ConstOf(bb->value);
      if (!c) return std::nullopt;
      bool mod = k == ExprKind::kFloorMod || k == ExprKind::kMod;
      bool trunc = k == ExprKind::kDiv || k == ExprKind::kMod;
      return DivideRamp(ra, *c, mod, trunc, analyzer);
    }
    default:
      return std::nullopt;
  }
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
