// Lane-wise rewriting of integer vector index arithmetic (Ramp / Broadcast operands), the part of
// the rewrite simplifier that the scalar rule table cannot express.
#ifndef TESSEL_SRC_ARITH_REWRITE_VECTOR_REWRITE_H_
#define TESSEL_SRC_ARITH_REWRITE_VECTOR_REWRITE_H_

#include <tessel/arith/analyzer.h>

#include <optional>

namespace tessel {
namespace arith {
namespace rewrite {

// One rewriting step of the vector expression e, whose operands are already rewritten, or
// nullopt when none applies. Every step holds lane by lane under the IR's wrap-around semantics:
//   Broadcast(a) op Broadcast(b)          -> Broadcast(a op b)          (any elementwise op)
//   Ramp(b, s) +- Broadcast(x)             -> Ramp(b +- x, s), and symmetric forms
//   Ramp(b1, s1) +- Ramp(b2, s2)           -> Ramp(b1 +- b2, s1 +- s2)
//   Ramp(b, s) * Broadcast(x)              -> Ramp(b * x, s * x), and symmetric
//   Ramp(b, 0)                             -> Broadcast(b)
// and, for a constant stride s and a constant divisor c > 0, when the lanes b + i*s provably do
// not wrap (by ConstIntBound of b):
//   Ramp(b, s) // c -> Ramp(b // c, s / c), Ramp(b, s) % c -> Broadcast(b % c)   if c divides s
//   Ramp(b, s) // c -> Broadcast(b // c),   Ramp(b, s) % c -> Ramp(b % c, s)     if no lane
//     crosses a multiple of c (b % c is bounded by the modular set, also where its coefficient
//     divides c, or by the bounds of b): Ramp(x * 8, 2, 4) // 64 -> Broadcast(x * 8 // 64)
// Truncating division and remainder are treated the same where every lane is non-negative.
std::optional<ir::PrimExpr> RewriteVector(const ir::PrimExpr& e, Analyzer* analyzer);

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_REWRITE_VECTOR_REWRITE_H_
