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
x // x -> 1 if x != 0
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
(x * y) // y -> x if y != 0
(y * x) // y -> x if y != 0
(x * c1 + y) // c1 -> x + y // c1 if c1 != 0
# What a remainder leaves
(x - x % c1) // c1 -> x // c1 if c1 != 0
(x % c1) // c2 -> 0 if c1 > 0 and c2 >= c1
(x % c1 + y * c1) // c1 -> y if c1 > 0
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
