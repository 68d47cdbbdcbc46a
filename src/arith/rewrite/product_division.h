// Division and remainder of two products that share factors (`x * x * y * 2 // (x * x * x * 4)
// -> y // (x * 2)`, `x * 32 * x % x -> 0`): the part of the rewrite simplifier that needs the
// factors of both operands as multisets, which the rule table cannot match.
#ifndef TESSEL_SRC_ARITH_REWRITE_PRODUCT_DIVISION_H_
#define TESSEL_SRC_ARITH_REWRITE_PRODUCT_DIVISION_H_

#include <tessel/arith/analyzer.h>

#include <optional>

namespace tessel {
namespace arith {
namespace rewrite {

// For a / b (floor or truncating division or remainder, scalar integers) whose operands are
// products with a common part k (equal factors, and the gcd of the constant coefficients):
//   (a' * k) // (b' * k) -> a' // b'        (a' when b' is 1)
//   (a' * k) %  (b' * k) -> (a' % b') * k   (0 when b' is 1)
// Over the integers both hold for every k != 0 (for floor and truncating division alike: the
// quotient of the rationals is the same, and the remainder scales with k); k == 0 makes the
// input divide by zero, which is undefined. Applied only where no product of the input or the
// result wraps around (ConstIntBound of the factors, or the analyzer's assume_no_overflow mode).
std::optional<ir::PrimExpr> CancelCommonFactors(const ir::PrimExprNode* e, Analyzer* analyzer);

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_REWRITE_PRODUCT_DIVISION_H_
