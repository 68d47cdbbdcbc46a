// AnyNode: a read-only walk over an expression's scalar arithmetic that asks a question of each
// node by pointer (no reference counts), for the cheap "is there anything here for this stage?"
// checks that let a stage skip a full mutator traversal.
#ifndef TESSEL_SRC_ARITH_EXPR_WALK_H_
#define TESSEL_SRC_ARITH_EXPR_WALK_H_

#include <tessel/ir/functor.h>

#include <optional>

namespace tessel {
namespace arith {

// Whether `at` answers yes at some node of e. at(node) returns true or false to decide at that
// node, or nullopt to look at its operands instead; operands are known for + - * / % min max,
// comparisons, and/or, not, cast and select. A node of any other kind that `at` leaves open
// counts as yes (the conservative answer).
template <typename F>
bool AnyNode(const ir::PrimExprNode* e, const F& at) {
  using ir::ExprKind;
  if (std::optional<bool> here = at(e)) return *here;
  switch (ir::KindOf(e)) {
#define TESSEL_X(Name)                                           \
  case ExprKind::k##Name: {                                      \
    const auto* op = static_cast<const ir::Name##Node*>(e);      \
    return AnyNode(op->a.get(), at) || AnyNode(op->b.get(), at); \
  }
    TESSEL_FOR_EACH_BINARY_NODE(TESSEL_X)
    TESSEL_FOR_EACH_CMP_NODE(TESSEL_X)
    TESSEL_FOR_EACH_LOGICAL_NODE(TESSEL_X)
#undef TESSEL_X
    case ExprKind::kNot:
      return AnyNode(static_cast<const ir::NotNode*>(e)->a.get(), at);
    case ExprKind::kCast:
      return AnyNode(static_cast<const ir::CastNode*>(e)->value.get(), at);
    case ExprKind::kSelect: {
      const auto* op = static_cast<const ir::SelectNode*>(e);
      return AnyNode(op->condition.get(), at) || AnyNode(op->true_value.get(), at) ||
             AnyNode(op->false_value.get(), at);
    }
    default:
      return true;
  }
}

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_EXPR_WALK_H_
