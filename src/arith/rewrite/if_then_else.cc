// Nested if_then_else merged (see if_then_else.h).
#include "arith/rewrite/if_then_else.h"

#include <tessel/arith/int_interval.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/op.h>

#include "arith/expr_walk.h"
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

using namespace ir;  // NOLINT(build/namespaces)

namespace {

const CallNode* AsIfThenElse(const PrimExprNode* e) {
  if (!e->IsInstance<CallNode>()) return nullptr;
  const auto* call = static_cast<const CallNode*>(e);
  if (!call->op.same_as(builtin::if_then_else()) || call->args.size() != 3) return nullptr;
  return call;
}

// Pure integer and boolean arithmetic without division: evaluating it where the guard is false
// cannot fault or read anything the guard protects.
bool SafeToEvaluate(const PrimExprNode* c) {
  return !AnyNode(c, [](const PrimExprNode* n) -> std::optional<bool> {
    switch (KindOf(n)) {
      case ExprKind::kVar:
      case ExprKind::kSizeVar:
      case ExprKind::kIntImm:
        return false;
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
        return true;
      default:
        return std::nullopt;  // operators: look at the operands; anything else is unsafe
    }
  });
}

// c as "term in [lo, hi]" for a comparison of an integer term with a constant.
bool AsRange(const PrimExprNode* c, const PrimExprNode** term, IntInterval* r) {
  ExprKind k = KindOf(c);
  if (k != ExprKind::kLT && k != ExprKind::kLE && k != ExprKind::kGT && k != ExprKind::kGE &&
      k != ExprKind::kEQ) {
    return false;
  }
  const PrimExprNode* kids[3];
  KidsOf(c, k, kids);
  const PrimExprNode *a = kids[0], *b = kids[1];
  bool flipped = false;
  if (a->IsInstance<IntImmNode>() && !b->IsInstance<IntImmNode>()) {
    std::swap(a, b);
    flipped = true;
  }
  if (!b->IsInstance<IntImmNode>() || !a->dtype.is_scalar() || !a->dtype.is_int_or_uint()) {
    return false;
  }
  i128 v = ConstValue(static_cast<const IntImmNode*>(b));
  if (flipped) {  // c < t is t > c, and so on
    if (k == ExprKind::kLT)
      k = ExprKind::kGT;
    else if (k == ExprKind::kLE)
      k = ExprKind::kGE;
    else if (k == ExprKind::kGT)
      k = ExprKind::kLT;
    else if (k == ExprKind::kGE)
      k = ExprKind::kLE;
  }
  IntInterval full{-kIntervalInf, kIntervalInf};
  switch (k) {
    case ExprKind::kLT:
      *r = {full.lo, v - 1};
      break;
    case ExprKind::kLE:
      *r = {full.lo, v};
      break;
    case ExprKind::kGT:
      *r = {v + 1, full.hi};
      break;
    case ExprKind::kGE:
      *r = {v, full.hi};
      break;
    default:
      *r = {v, v};
      break;
  }
  *term = a;
  return true;
}

// Whether c1 implies c2: both constrain one term to a range, c1's inside c2's.
bool Implies(const PrimExprNode* c1, const PrimExprNode* c2) {
  const PrimExprNode *t1, *t2;
  IntInterval r1, r2;
  if (!AsRange(c1, &t1, &r1) || !AsRange(c2, &t2, &r2) || !SameExpr(t1, t2)) return false;
  return r1.lo >= r2.lo && r1.hi <= r2.hi;
}

}  // namespace

std::optional<PrimExpr> MergeNestedIfThenElse(const PrimExprNode* e) {
  const CallNode* outer = AsIfThenElse(e);
  if (!outer) return std::nullopt;
  const CallNode* inner = AsIfThenElse(outer->args[1].get());
  if (!inner || !SameExpr(inner->args[2].get(), outer->args[2].get())) return std::nullopt;
  const PrimExpr& c1 = outer->args[0];
  const PrimExpr& c2 = inner->args[0];
  PrimExpr cond;
  if (Implies(c1.get(), c2.get())) {
    cond = c1;
  } else if (SafeToEvaluate(c2.get())) {
    cond = And(c1, c2);
  } else {
    return std::nullopt;
  }
  return Call(e->dtype, builtin::if_then_else(), {cond, inner->args[1], outer->args[2]});
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
