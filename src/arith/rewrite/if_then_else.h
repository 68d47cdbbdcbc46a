// Nested if_then_else calls with the same else value, merged (TVM's rewrite simplifier does the
// same): the rule table matches operator nodes, not calls.
#ifndef TESSEL_SRC_ARITH_REWRITE_IF_THEN_ELSE_H_
#define TESSEL_SRC_ARITH_REWRITE_IF_THEN_ELSE_H_

#include <tessel/arith/analyzer.h>

#include <optional>

namespace tessel {
namespace arith {
namespace rewrite {

// if_then_else(c1, if_then_else(c2, a, b), b):
//   -> if_then_else(c1, a, b)           when c1 implies c2 (both compare one term with constants)
//   -> if_then_else(c1 and c2, a, b)    when c2 is safe to evaluate where c1 is false (pure
//                                       integer arithmetic and comparisons: no load, call or
//                                       division that the guard c1 might be protecting)
// nullopt otherwise (or when e is not such a call).
std::optional<ir::PrimExpr> MergeNestedIfThenElse(const ir::PrimExprNode* e);

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_REWRITE_IF_THEN_ELSE_H_
