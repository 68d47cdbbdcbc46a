// Rewrite rules rooted at floormod and truncmod (the DSL is described in
// tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource ModRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Identities
x % 1 -> 0 [wrap]
x % -1 -> 0 [wrap]
x % x -> 0
T.truncmod(x, 1) -> 0 [wrap]
T.truncmod(x, -1) -> 0 [wrap]
# A remainder of a value already below the divisor
x % y -> x if x >= 0 and x < y
T.truncmod(x, y) -> x if x >= 0 and x < y
# Truncating remainder of a non-negative value by a positive one is the floor remainder
T.truncmod(x, y) -> x % y if x >= 0 and y > 0
# Multiples of the divisor vanish
(x * c1) % c2 -> 0 if c2 != 0 and c1 % c2 == 0
(x * y) % y -> 0
(y * x) % y -> 0
(x * c1 + y) % c2 -> y % c2 if c2 != 0 and c1 % c2 == 0
(y + x * c1) % c2 -> y % c2 if c2 != 0 and c1 % c2 == 0
(y - x * c1) % c2 -> y % c2 if c2 != 0 and c1 % c2 == 0
(x + c1) % c2 -> x % c2 if c2 != 0 and c1 % c2 == 0
(x - c1) % c2 -> x % c2 if c2 != 0 and c1 % c2 == 0
(x + c1) % c2 -> (x + c1 % c2) % c2 if c2 > 0 and (c1 < 0 or c1 >= c2)
T.truncmod(x * c1, c2) -> 0 if c2 != 0 and c1 % c2 == 0
# Nested remainders
(x % c1) % c2 -> x % c2 if c2 > 0 and c1 % c2 == 0
(x % c1) % c1 -> x % c1 if c1 != 0
T.truncmod(x, c1) -> T.truncmod(x, 0 - c1) if c1 < 0
(x - c1) % c2 -> (x + (0 - c1) % c2) % c2 if c2 > 0 and (0 - c1) % c2 != 0
# A value minus its own remainder is a multiple
(x - x % y) % y -> 0
(x + (0 - x) % y) % y -> 0
(x - x % (0 - y)) % y -> 0
(x + x * c1 % c2) % c2 -> 0 if c2 > 0 and (c1 + 1) % c2 == 0
(x * y + z) % y -> z % y
(y * x + z) % y -> z % y
(x * y * c1 + z) % (y * c1) -> z % (y * c1)
(z + x * y * c1) % (y * c1) -> z % (y * c1)
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
