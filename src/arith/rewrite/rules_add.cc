// Rewrite rules rooted at + (the DSL is described in tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource AddRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Identities; constants to the right; a negative constant becomes a subtraction
x + 0 -> x [wrap]
c1 + x -> x + c1 [wrap]
x + c1 -> x - (0 - c1) if c1 < 0 and 0 - c1 > 0 [wrap]
# Constants folded together
(x + c1) + c2 -> x + (c1 + c2) [wrap]
(x - c1) + c2 -> x + (c2 - c1) [wrap]
(c1 - x) + c2 -> (c1 + c2) - x [wrap]
# Cancellation
(x - y) + y -> x [wrap]
y + (x - y) -> x [wrap]
(0 - x) + y -> y - x [wrap]
x + (0 - y) -> x - y [wrap]
(x - y) + (y - z) -> x - z [wrap]
(x - y) + (z - x) -> z - y [wrap]
# Constants move outward
(x + c1) + y -> (x + y) + c1 [wrap]
x + (y + c1) -> (x + y) + c1 [wrap]
(x - c1) + y -> (x + y) - c1 [wrap]
x + (y - c1) -> (x + y) - c1 [wrap]
(c1 - x) + y -> (y - x) + c1 [wrap]
x + (c1 - y) -> (x - y) + c1 [wrap]
# Like terms
x + x -> x * 2 [wrap]
x * c1 + x -> x * (c1 + 1) [wrap]
x + x * c1 -> x * (c1 + 1) [wrap]
x * c1 + x * c2 -> x * (c1 + c2) [wrap]
x * y + x * z -> x * (y + z) [wrap]
y * x + z * x -> (y + z) * x [wrap]
# Division and remainder recombined
(x // c1) * c1 + x % c1 -> x if c1 != 0
x % c1 + (x // c1) * c1 -> x if c1 != 0
(x // c1) * c1 + (x % c1 + y) -> x + y if c1 != 0
T.truncdiv(x, c1) * c1 + T.truncmod(x, c1) -> x if c1 != 0
T.truncmod(x, c1) + T.truncdiv(x, c1) * c1 -> x if c1 != 0
# Min and max against a shift of the added term
T.min(x, y - z) + z -> T.min(x + z, y)
T.max(x, y - z) + z -> T.max(x + z, y)
T.min(x - z, y) + z -> T.min(x, y + z)
T.max(x - z, y) + z -> T.max(x, y + z)
T.min(x, y) + T.max(x, y) -> x + y [wrap]
T.max(x, y) + T.min(x, y) -> x + y [wrap]
x + T.min(y, z - x) -> T.min(x + y, z)
x + T.max(y, z - x) -> T.max(x + y, z)
T.min(y, z - x) + x -> T.min(y + x, z)
T.max(y, z - x) + x -> T.max(y + x, z)
T.Select(p, x, y) + T.Select(p, z, w) -> T.Select(p, x + z, y + w) [wrap]
# Parity, and a remainder recombined with its quotient
x % 2 + (x + 1) % 2 -> 1 [wrap]
(x + 1) % 2 + x % 2 -> 1 [wrap]
x // 2 + x % 2 -> (x + 1) // 2
x % 2 + x // 2 -> (x + 1) // 2
(x % c1 + c2) // c1 + x // c1 -> (x + c2) // c1 if c1 > 0
x // c1 + (x % c1 + c2) // c1 -> (x + c2) // c1 if c1 > 0
(x + c1) // c2 + c3 -> (x + (c1 + c3 * c2)) // c2 if c2 > 0
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
