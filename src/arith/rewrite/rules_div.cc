// Rewrite rules rooted at floordiv and truncdiv (the DSL is described in
// tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource DivRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Identities
x // 1 -> x [wrap]
x // -1 -> 0 - x [wrap]
x // x -> 1
T.truncdiv(x, 1) -> x [wrap]
T.truncdiv(x, -1) -> 0 - x [wrap]
# Truncating division of a non-negative value by a positive one is floor division
T.truncdiv(x, y) -> x // y if x >= 0 and y > 0
# Nested divisions
(x // c1) // c2 -> x // (c1 * c2) if c1 > 0 and c2 > 0
# Products and sums with a multiple of the divisor
(x * c1) // c2 -> x * (c1 // c2) if c2 > 0 and c1 % c2 == 0
(x * c1) // c2 -> x // (c2 // c1) if c1 > 0 and c2 % c1 == 0
(x * c1 + y) // c2 -> x * (c1 // c2) + y // c2 if c2 > 0 and c1 % c2 == 0
(y + x * c1) // c2 -> y // c2 + x * (c1 // c2) if c2 > 0 and c1 % c2 == 0
(x * c1 - y) // c2 -> x * (c1 // c2) + (0 - y) // c2 if c2 > 0 and c1 % c2 == 0
(y - x * c1) // c2 -> y // c2 - x * (c1 // c2) if c2 > 0 and c1 % c2 == 0
(x + c1) // c2 -> x // c2 + c1 // c2 if c2 > 0 and c1 % c2 == 0
(x - c1) // c2 -> x // c2 - c1 // c2 if c2 > 0 and c1 % c2 == 0
(x * y) // y -> x
(y * x) // y -> x
(x * c1 + y) // c1 -> x + y // c1 if c1 != 0
# What a remainder leaves
(x - x % c1) // c1 -> x // c1 if c1 != 0
(x % c1) // c2 -> 0 if c1 > 0 and c2 >= c1
(x % c1 + y * c1) // c1 -> y if c1 > 0
T.truncdiv(x, x) -> 1
T.truncdiv(T.truncdiv(x, c1), c2) -> T.truncdiv(x, c1 * c2) if c1 > 0 and c2 > 0
T.truncdiv(x * c1, c2) -> x * (c1 // c2) if c2 > 0 and c1 % c2 == 0
T.truncdiv(x * c1, c2) -> T.truncdiv(x, c2 // c1) if c1 > 0 and c2 % c1 == 0
T.truncdiv(x * y, y) -> x
T.truncdiv(y * x, y) -> x
# Nested floor divisions and bounded low parts
(x // c1 + c2) // c3 -> (x + c1 * c2) // (c1 * c3) if c1 > 0 and c3 > 0
(x * c1 + c2) // c3 -> x // (c3 // c1) + c2 // c3 if c1 > 0 and c3 > 0 and c3 % c1 == 0 and c2 % c3 < c1
(x * c1 + y) // c2 -> x * (c1 // c2) if c2 > 0 and x * (c1 % c2) + y >= 0 and x * (c1 % c2) + y < c2
(x * c1 + y) // c2 -> x // (c2 // c1) if c1 > 0 and c2 > 0 and c2 % c1 == 0 and y >= 0 and y < c1
(x * c1 + y + z) // c2 -> x // (c2 // c1) if c1 > 0 and c2 > 0 and c2 % c1 == 0 and y + z >= 0 and y + z < c1
(x % 2 + 1) // 2 -> x % 2
# Symbolic divisors that divide a term
(x * y + z) // y -> x + z // y
(y * x + z) // y -> x + z // y
(z + x * y) // y -> z // y + x
(z + y * x) // y -> z // y + x
T.truncdiv(x * y + z, y) -> x + T.truncdiv(z, y) if x * y >= 0 and z >= 0
T.truncdiv(y * x + z, y) -> x + T.truncdiv(z, y) if x * y >= 0 and z >= 0
T.truncdiv(z + x * y, y) -> T.truncdiv(z, y) + x if x * y >= 0 and z >= 0
T.truncdiv(z + y * x, y) -> T.truncdiv(z, y) + x if x * y >= 0 and z >= 0
(x * c1 - c2) // c3 -> x // (c3 // c1) + (0 - c2) // c3 if c1 > 0 and c3 > 0 and c3 % c1 == 0 and (0 - c2) % c3 < c1
(x * y * c1 + z) // (y * c1) -> x + z // (y * c1)
(z + x * y * c1) // (y * c1) -> z // (y * c1) + x
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
