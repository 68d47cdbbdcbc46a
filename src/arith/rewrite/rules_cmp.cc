// Rewrite rules rooted at comparisons (the DSL is described in tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource CmpRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Equal operands
x == x -> True [wrap]
x != x -> False [wrap]
x < x -> False [wrap]
x <= x -> True [wrap]
x > x -> False [wrap]
x >= x -> True [wrap]
# Constants to the right
c1 < x -> x > c1 [wrap]
c1 <= x -> x >= c1 [wrap]
c1 > x -> x < c1 [wrap]
c1 >= x -> x <= c1 [wrap]
c1 == x -> x == c1 [wrap]
c1 != x -> x != c1 [wrap]
# A difference against zero is a comparison of its terms
x - y < 0 -> x < y
x - y <= 0 -> x <= y
x - y > 0 -> x > y
x - y >= 0 -> x >= y
x - y == 0 -> x == y [wrap]
x - y != 0 -> x != y [wrap]
# Constants move to the right-hand side
x + c1 < c2 -> x < c2 - c1
x + c1 <= c2 -> x <= c2 - c1
x + c1 > c2 -> x > c2 - c1
x + c1 >= c2 -> x >= c2 - c1
x + c1 == c2 -> x == c2 - c1 [wrap]
x + c1 != c2 -> x != c2 - c1 [wrap]
x - c1 < c2 -> x < c2 + c1
x - c1 <= c2 -> x <= c2 + c1
x - c1 > c2 -> x > c2 + c1
x - c1 >= c2 -> x >= c2 + c1
x - c1 == c2 -> x == c2 + c1 [wrap]
x - c1 != c2 -> x != c2 + c1 [wrap]
c1 - x < c2 -> x > c1 - c2
c1 - x <= c2 -> x >= c1 - c2
c1 - x > c2 -> x < c1 - c2
c1 - x >= c2 -> x <= c1 - c2
c1 - x == c2 -> x == c1 - c2 [wrap]
c1 - x != c2 -> x != c1 - c2 [wrap]
x * c1 < c2 -> x < (c2 - 1) // c1 + 1 if c1 > 0
x * c1 >= c2 -> x >= (c2 - 1) // c1 + 1 if c1 > 0
x * c1 == c2 -> x == c2 // c1 if c1 != 0 and c2 % c1 == 0
x * c1 == c2 -> False if c1 != 0 and c2 % c1 != 0
x * c1 != c2 -> x != c2 // c1 if c1 != 0 and c2 % c1 == 0
x * c1 != c2 -> True if c1 != 0 and c2 % c1 != 0
x // c1 < c2 -> x < c2 * c1 if c1 > 0
x // c1 >= c2 -> x >= c2 * c1 if c1 > 0
# One form per bound against a constant: x < c and x >= c
x <= c1 -> x < c1 + 1
x > c1 -> x >= c1 + 1
# Common terms cancel
x + y < x + z -> y < z
x + y <= x + z -> y <= z
x + y == x + z -> y == z [wrap]
x + y != x + z -> y != z [wrap]
y + x < z + x -> y < z
y + x <= z + x -> y <= z
y + x == z + x -> y == z [wrap]
y + x != z + x -> y != z [wrap]
x + y < x -> y < 0
x < x + y -> y > 0
x - y < x -> y > 0
x < x - y -> y < 0
x + y == x -> y == 0 [wrap]
x - y == x -> y == 0 [wrap]
x * c1 < y * c1 -> x < y if c1 > 0
x * c1 < y * c1 -> y < x if c1 < 0
x * c1 <= y * c1 -> x <= y if c1 > 0
x * c1 == y * c1 -> x == y if c1 != 0
# Min and max against a constant split into comparisons
T.min(x, y) < c1 -> x < c1 or y < c1
T.max(x, y) < c1 -> x < c1 and y < c1
T.min(x, y) >= c1 -> x >= c1 and y >= c1
T.max(x, y) >= c1 -> x >= c1 or y >= c1
# Common terms in other orders
x + y < z + x -> y < z
y + x < x + z -> y < z
x + y <= z + x -> y <= z
y + x <= x + z -> y <= z
y - x < z - x -> y < z
y - x <= z - x -> y <= z
x - y < x - z -> z < y
x - y <= x - z -> z <= y
x < y + x -> y > 0
x <= y + x -> y >= 0
# Scaled operands: the scale's sign orders them
x * c1 > y * c1 -> y < x if c1 > 0
x * c1 >= y * c1 -> y <= x if c1 > 0
x * c1 <= y * c1 -> y <= x if c1 < 0
x * c1 > y * c1 -> x < y if c1 < 0
x * c1 >= y * c1 -> x <= y if c1 < 0
x * c1 >= c2 -> x < c2 // c1 + 1 if c1 < 0
x * c1 < c2 -> x >= c2 // c1 + 1 if c1 < 0
# Truncating quotients against a constant
T.truncdiv(x, c1) < c2 -> x < c2 * c1 if c1 > 0 and c2 > 0
T.truncdiv(x, c1) < c2 -> x < (c2 - 1) * c1 + 1 if c1 > 0 and c2 <= 0
T.truncdiv(x, c1) >= c2 -> x >= c2 * c1 if c1 > 0 and c2 > 0
T.truncdiv(x, c1) >= c2 -> x >= (c2 - 1) * c1 + 1 if c1 > 0 and c2 <= 0
# A value against itself rounded to a multiple: a comparison of the remainder
x // c1 * c1 < x -> x % c1 > 0 if c1 > 0
x // c1 * c1 >= x -> x % c1 == 0 if c1 > 0
x // c1 * c1 < x + y -> x % c1 + y > 0 if c1 > 0
x // c1 * c1 < x - y -> y < x % c1 if c1 > 0
(x + c2) // c1 * c1 >= x -> (x + c2) % c1 <= c2 if c1 > 0
(x + c2) // c1 * c1 >= x + y -> (x + c2) % c1 + y <= c2 if c1 > 0
(x + c2) // c1 * c1 >= x - y -> (x + c2) % c1 <= y + c2 if c1 > 0
T.truncdiv(x, c1) * c1 < x -> T.truncmod(x, c1) > 0 if c1 > 0
T.truncdiv(x, c1) * c1 >= x -> T.truncmod(x, c1) <= 0 if c1 > 0
T.truncdiv(x, c1) * c1 < x + y -> T.truncmod(x, c1) + y > 0 if c1 > 0
T.truncdiv(x, c1) * c1 < x - y -> y < T.truncmod(x, c1) if c1 > 0
T.truncdiv(x + c2, c1) * c1 >= x -> T.truncmod(x + c2, c1) <= c2 if c1 > 0
T.truncdiv(x + c2, c1) * c1 >= x + y -> T.truncmod(x + c2, c1) + y <= c2 if c1 > 0
T.truncdiv(x + c2, c1) * c1 >= x - y -> T.truncmod(x + c2, c1) <= y + c2 if c1 > 0
# A scaled term plus a part below the scale, against a multiple of the scale
x * c1 + y < c2 -> x < c2 // c1 if c1 > 0 and c2 % c1 == 0 and y >= 0 and y < c1
y + x * c1 < c2 -> x < c2 // c1 if c1 > 0 and c2 % c1 == 0 and y >= 0 and y < c1
y - x * c1 < c2 -> x >= (0 - c2) // c1 + 1 if c1 > 0 and c2 % c1 == 0 and y >= 0 and y < c1
x * c1 + y >= c2 -> x >= c2 // c1 if c1 > 0 and c2 % c1 == 0 and y >= 0 and y < c1
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
