// Rewrite rules rooted at - (the DSL is described in tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource SubRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Identities; a negative constant becomes an addition
x - 0 -> x [wrap]
x - x -> 0 [wrap]
x - c1 -> x + (0 - c1) if c1 < 0 and 0 - c1 > 0 [wrap]
# Constants folded together
(x + c1) - c2 -> x + (c1 - c2) [wrap]
(x - c1) - c2 -> x - (c1 + c2) [wrap]
c1 - (x + c2) -> (c1 - c2) - x [wrap]
c1 - (x - c2) -> (c1 + c2) - x [wrap]
c1 - (c2 - x) -> x + (c1 - c2) [wrap]
(c1 - x) - c2 -> (c1 - c2) - x [wrap]
# Cancellation
(x + y) - x -> y [wrap]
(x + y) - y -> x [wrap]
x - (x + y) -> 0 - y [wrap]
y - (x + y) -> 0 - x [wrap]
(x - y) - x -> 0 - y [wrap]
x - (x - y) -> y [wrap]
x - (0 - y) -> x + y [wrap]
(x + y) - (x + z) -> y - z [wrap]
(x + y) - (z + x) -> y - z [wrap]
(y + x) - (x + z) -> y - z [wrap]
(y + x) - (z + x) -> y - z [wrap]
(x - y) - (x - z) -> z - y [wrap]
(x - z) - (y - z) -> x - y [wrap]
# Constants move outward
(x + c1) - (y + c2) -> (x - y) + (c1 - c2) [wrap]
(x + c1) - y -> (x - y) + c1 [wrap]
x - (y + c1) -> (x - y) - c1 [wrap]
(x - c1) - y -> (x - y) - c1 [wrap]
x - (y - c1) -> (x - y) + c1 [wrap]
# Like terms
x * c1 - x * c2 -> x * (c1 - c2) [wrap]
x * c1 - x -> x * (c1 - 1) [wrap]
x - x * c1 -> x * (1 - c1) [wrap]
x * y - x * z -> x * (y - z) [wrap]
y * x - z * x -> (y - z) * x [wrap]
# Division and remainder
x - (x // c1) * c1 -> x % c1 if c1 != 0
x - T.truncdiv(x, c1) * c1 -> T.truncmod(x, c1) if c1 != 0
x - x % c1 -> (x // c1) * c1 if c1 != 0
# Min and max
T.max(x, y) - T.min(x, y) -> T.max(x - y, y - x)
T.min(x, y) - x -> T.min(y - x, 0)
T.max(x, y) - x -> T.max(y - x, 0)
x - T.min(x, y) -> T.max(x - y, 0)
x - T.max(x, y) -> T.min(x - y, 0)
y - T.min(x, y) -> T.max(y - x, 0)
y - T.max(x, y) -> T.min(y - x, 0)
T.min(x, y) - y -> T.min(x - y, 0)
T.max(x, y) - y -> T.max(x - y, 0)
T.min(x, y) - T.min(y, x) -> 0 [wrap]
T.max(x, y) - T.max(y, x) -> 0 [wrap]
T.min(x + y, z) - x -> T.min(y, z - x)
T.min(y + x, z) - x -> T.min(y, z - x)
T.min(z, x + y) - x -> T.min(z - x, y)
T.min(z, y + x) - x -> T.min(z - x, y)
T.max(x + y, z) - x -> T.max(y, z - x)
T.max(y + x, z) - x -> T.max(y, z - x)
T.max(z, x + y) - x -> T.max(z - x, y)
T.max(z, y + x) - x -> T.max(z - x, y)
T.min(x, y + c1) - c1 -> T.min(x - c1, y)
T.max(x, y + c1) - c1 -> T.max(x - c1, y)
T.min(x + c1, y) - c1 -> T.min(x, y - c1)
T.max(x + c1, y) - c1 -> T.max(x, y - c1)
T.min(x + c1, y + c2) - c1 -> T.min(x, y + (c2 - c1))
T.max(x + c1, y + c2) - c1 -> T.max(x, y + (c2 - c1))
T.min(x + c1, y + c2) - T.min(x, y + c3) -> c1 if c2 - c1 == c3
T.max(x + c1, y + c2) - T.max(x, y + c3) -> c1 if c2 - c1 == c3
T.min(x + c1, y + c2) - T.min(x, y - c3) -> c1 if c2 - c1 == 0 - c3
T.max(x + c1, y + c2) - T.max(x, y - c3) -> c1 if c2 - c1 == 0 - c3
x - T.max(x + y, 0) -> T.min(0 - y, x)
x - T.min(x + y, 0) -> T.max(0 - y, x)
T.Select(p, x, y) - T.Select(p, z, w) -> T.Select(p, x - z, y - w) [wrap]
# Differences of quotients and remainders
(x + c1) // c2 - x // c2 -> (x % c2 + c1) // c2 if c2 > 0
x // c2 - (x + c1) // c2 -> 0 - (x % c2 + c1) // c2 if c2 > 0
(x + c1) // c2 - (x + c3) // c2 -> ((x + c3) % c2 + (c1 - c3)) // c2 if c2 > 0
(x + c1) // c2 - (x - c3) // c2 -> ((x - c3) % c2 + (c1 + c3)) // c2 if c2 > 0
x // c2 - (x - c3) // c2 -> ((x - c3) % c2 + c3) // c2 if c2 > 0
(x + c1) // c2 - x % c2 -> x // c2 if c2 > 0 and c1 == c2 - 1 and c2 == 2
T.truncdiv(x + c1, c2) - T.truncdiv(x, c2) -> T.truncdiv(T.truncmod(x, c2) + c1, c2) if c2 > 0 and x >= 0 and c1 >= 0
T.truncdiv(x + c1, c2) - T.truncdiv(x + c3, c2) -> T.truncdiv(T.truncmod(x + c3, c2) + (c1 - c3), c2) if c2 > 0 and x + c3 >= 0 and c1 >= c3
T.truncdiv(y, c1) * c1 - y -> 0 - T.truncmod(y, c1) [wrap]
y - T.truncdiv(y + z, c1) * c1 -> T.truncmod(y + z, c1) - z [wrap]
T.truncdiv(y + z, c1) * c1 - y -> z - T.truncmod(y + z, c1) [wrap]
y - T.truncdiv(y + c2, c1) * c1 -> T.truncmod(y + c2, c1) - c2 [wrap]
y - T.truncdiv(y - c2, c1) * c1 -> T.truncmod(y - c2, c1) + c2 [wrap]
y - (y + z) // c1 * c1 -> (y + z) % c1 - z [wrap]
(y + z) // c1 * c1 - y -> z - (y + z) % c1 [wrap]
y - (y + c2) // c1 * c1 -> (y + c2) % c1 - c2 [wrap]
y - (y - c2) // c1 * c1 -> (y - c2) % c1 + c2 [wrap]
(x // c1) * c1 - x -> 0 - x % c1 [wrap]
y - (y - z) // c1 * c1 -> (y - z) % c1 + z [wrap]
y - T.truncdiv(y - z, c1) * c1 -> T.truncmod(y - z, c1) + z [wrap]
(y + c2) // c1 * c1 - y -> c2 - (y + c2) % c1 [wrap]
(y - c2) // c1 * c1 - y -> (0 - c2) - (y - c2) % c1 [wrap]
# A multiple of a value minus the same multiple of its rounded-down quotient: the remainder
x * c1 - x // c2 * c3 -> x % c2 * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
x // c2 * c3 - x * c1 -> x % c2 * (0 - c1) if c2 > 0 and c3 == c1 * c2 [wrap]
x * c1 - (x + y) // c2 * c3 -> ((x + y) % c2 - y) * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
x * c1 - (x - y) // c2 * c3 -> ((x - y) % c2 + y) * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
(x + y) // c2 * c3 - x * c1 -> (y - (x + y) % c2) * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
x * c1 - T.truncdiv(x, c2) * c3 -> T.truncmod(x, c2) * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
T.truncdiv(x, c2) * c3 - x * c1 -> T.truncmod(x, c2) * (0 - c1) if c2 > 0 and c3 == c1 * c2 [wrap]
x * c1 - T.truncdiv(x + y, c2) * c3 -> (T.truncmod(x + y, c2) - y) * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
x * c1 - T.truncdiv(x - y, c2) * c3 -> (T.truncmod(x - y, c2) + y) * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
T.truncdiv(x + y, c2) * c3 - x * c1 -> (y - T.truncmod(x + y, c2)) * c1 if c2 > 0 and c3 == c1 * c2 [wrap]
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
