// Two rewrites of the rewrite simplifier that its rule table cannot state: casts of constants
// folded to constants, and comparisons of two offset terms (`x - 1 < y`, `x + 5 < y + 10`)
// brought to one normal form (`x <= y`, `x < y + 5`), as TVM's rewrite simplifier does.
#ifndef TESSEL_SRC_ARITH_REWRITE_COMPARE_CAST_H_
#define TESSEL_SRC_ARITH_REWRITE_COMPARE_CAST_H_

#include <tessel/arith/analyzer.h>

#include <optional>

namespace tessel {
namespace arith {
namespace rewrite {

// The constant a scalar Cast of an integer, bool or float constant has, when it is exact:
// integer to integer wraps (the IR's semantics), anything to bool is `!= 0`, integer to float and
// float to float only where the value is exactly representable in the target (no rounding
// mode is assumed), float to integer only for an integral value that fits. Otherwise nullopt.
std::optional<ir::PrimExpr> FoldConstantCast(const ir::CastNode* op);

// `a cmp b` for an integer comparison whose sides are `t + c` forms (a term plus or minus a
// constant, at least one constant non-zero, neither side constant): the equivalent comparison
// with the constants moved to one side and kept non-negative, `<`/`<=` only (`>`/`>=` swap their
// operands): `ta + d < tb` for d > 0, `ta < tb + (-d)` for d < -1, `ta <= tb` for d == -1, and
// the same for `<=` (`ta < tb` for d == 1), `==`, `!=`. Ordering comparisons need that neither
// side's exact value nor the result's leaves the dtype (ConstIntBound, or the analyzer's
// assume_no_overflow mode for signed 32/64-bit integers); `==` and `!=` hold under wrap-around
// as they are. nullopt when nothing applies or the result would be the same expression.
std::optional<ir::PrimExpr> NormalizeOffsetCompare(const ir::PrimExprNode* e, Analyzer* analyzer);

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_REWRITE_COMPARE_CAST_H_
