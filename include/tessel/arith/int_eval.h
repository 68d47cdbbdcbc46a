// Evaluating an integer expression at one point: what enumeration-based checks (a layout that is a
// bijection over a constant shape, an index map that is one-to-one) need from an expression.
#ifndef TESSEL_ARITH_INT_EVAL_H_
#define TESSEL_ARITH_INT_EVAL_H_

#include <tessel/ir/prim_expr.h>

#include <cstdint>
#include <optional>
#include <unordered_map>

namespace tessel {
namespace arith {

// The value of `e` with each variable taken from `env`, in exact integer arithmetic: constants,
// + - *, floordiv / floormod, min / max, the comparisons and logical operators (as 0 / 1), Select,
// integer casts, and the bitwise builtins (and, or, xor, not, shifts). nullopt for anything else,
// an unbound variable, a division by zero, an int64 overflow or a shift out of [0, 63].
std::optional<int64_t> EvalInt(const ir::PrimExpr& e,
                               const std::unordered_map<const ir::VarNode*, int64_t>& env);

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_INT_EVAL_H_
