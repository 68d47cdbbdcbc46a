// Rewrite rules rooted at min and max (the DSL is described in tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource MinMaxRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Equal operands; constants to the right
T.min(x, x) -> x [wrap]
T.max(x, x) -> x [wrap]
T.min(c1, x) -> T.min(x, c1) [wrap]
T.max(c1, x) -> T.max(x, c1) [wrap]
# Decided by the operands' bounds
T.min(x, y) -> x if x <= y
T.min(x, y) -> y if y <= x
T.max(x, y) -> x if y <= x
T.max(x, y) -> y if x <= y
# Constants folded together; clamps that collapse
T.min(T.min(x, c1), c2) -> T.min(x, T.min(c1, c2))
T.max(T.max(x, c1), c2) -> T.max(x, T.max(c1, c2))
T.min(T.max(x, c1), c2) -> c2 if c2 <= c1
T.max(T.min(x, c1), c2) -> c2 if c1 <= c2
# Repeated and absorbed operands
T.min(T.min(x, y), x) -> T.min(x, y)
T.min(T.min(x, y), y) -> T.min(x, y)
T.min(x, T.min(x, y)) -> T.min(x, y)
T.min(y, T.min(x, y)) -> T.min(x, y)
T.max(T.max(x, y), x) -> T.max(x, y)
T.max(T.max(x, y), y) -> T.max(x, y)
T.max(x, T.max(x, y)) -> T.max(x, y)
T.max(y, T.max(x, y)) -> T.max(x, y)
T.min(x, T.max(x, y)) -> x
T.min(T.max(x, y), x) -> x
T.min(y, T.max(x, y)) -> y
T.min(T.max(x, y), y) -> y
T.max(x, T.min(x, y)) -> x
T.max(T.min(x, y), x) -> x
T.max(y, T.min(x, y)) -> y
T.max(T.min(x, y), y) -> y
# Common terms factored out
T.min(x + c1, x + c2) -> x + T.min(c1, c2)
T.max(x + c1, x + c2) -> x + T.max(c1, c2)
T.min(x + c1, x) -> x if c1 >= 0
T.min(x + c1, x) -> x + c1 if c1 <= 0
T.min(x, x + c1) -> x if c1 >= 0
T.min(x, x + c1) -> x + c1 if c1 <= 0
T.max(x + c1, x) -> x + c1 if c1 >= 0
T.max(x + c1, x) -> x if c1 <= 0
T.max(x, x + c1) -> x + c1 if c1 >= 0
T.max(x, x + c1) -> x if c1 <= 0
T.min(x - c1, x) -> x - c1 if c1 >= 0
T.min(x, x - c1) -> x - c1 if c1 >= 0
T.max(x - c1, x) -> x if c1 >= 0
T.max(x, x - c1) -> x if c1 >= 0
T.min(x + y, x + z) -> x + T.min(y, z)
T.min(y + x, z + x) -> T.min(y, z) + x
T.max(x + y, x + z) -> x + T.max(y, z)
T.max(y + x, z + x) -> T.max(y, z) + x
T.min(x - y, x - z) -> x - T.max(y, z)
T.max(x - y, x - z) -> x - T.min(y, z)
T.min(x * c1, y * c1) -> T.min(x, y) * c1 if c1 > 0
T.min(x * c1, y * c1) -> T.max(x, y) * c1 if c1 < 0
T.max(x * c1, y * c1) -> T.max(x, y) * c1 if c1 > 0
T.max(x * c1, y * c1) -> T.min(x, y) * c1 if c1 < 0
T.min(x // c1, y // c1) -> T.min(x, y) // c1 if c1 > 0
T.max(x // c1, y // c1) -> T.max(x, y) // c1 if c1 > 0
# Distribution over a shared operand, in any order
T.min(T.max(x, y), T.max(x, z)) -> T.max(T.min(y, z), x) [wrap]
T.min(T.max(x, y), T.max(z, x)) -> T.max(T.min(y, z), x) [wrap]
T.min(T.max(y, x), T.max(x, z)) -> T.max(T.min(y, z), x) [wrap]
T.min(T.max(y, x), T.max(z, x)) -> T.max(T.min(y, z), x) [wrap]
T.max(T.min(x, y), T.min(x, z)) -> T.min(T.max(y, z), x) [wrap]
T.max(T.min(x, y), T.min(z, x)) -> T.min(T.max(y, z), x) [wrap]
T.max(T.min(y, x), T.min(x, z)) -> T.min(T.max(y, z), x) [wrap]
T.max(T.min(y, x), T.min(z, x)) -> T.min(T.max(y, z), x) [wrap]
# The min and the max of the same two operands
T.min(T.max(x, y), T.min(x, y)) -> T.min(x, y) [wrap]
T.min(T.max(x, y), T.min(y, x)) -> T.min(x, y) [wrap]
T.min(T.min(x, y), T.max(x, y)) -> T.min(x, y) [wrap]
T.min(T.min(x, y), T.max(y, x)) -> T.min(x, y) [wrap]
T.max(T.min(x, y), T.max(x, y)) -> T.max(x, y) [wrap]
T.max(T.min(x, y), T.max(y, x)) -> T.max(x, y) [wrap]
T.max(T.max(x, y), T.min(x, y)) -> T.max(x, y) [wrap]
T.max(T.max(x, y), T.min(y, x)) -> T.max(x, y) [wrap]
# Common terms in other orders
T.min(y + x, x + z) -> T.min(y, z) + x
T.min(x + y, z + x) -> T.min(y, z) + x
T.max(y + x, x + z) -> T.max(y, z) + x
T.max(x + y, z + x) -> T.max(y, z) + x
T.min(y - x, z - x) -> T.min(y, z) - x
T.max(y - x, z - x) -> T.max(y, z) - x
T.min(c1 - x, c2 - x) -> T.min(c1, c2) - x
T.max(c1 - x, c2 - x) -> T.max(c1, c2) - x
T.min(T.Select(p, x, y), T.Select(p, z, w)) -> T.Select(p, T.min(x, z), T.min(y, w)) [wrap]
T.max(T.Select(p, x, y), T.Select(p, z, w)) -> T.Select(p, T.max(x, z), T.max(y, w)) [wrap]
# A scaled operand against a constant multiple of the scale
T.min(x * c1, c2) -> T.min(x, c2 // c1) * c1 if c1 > 0 and c2 % c1 == 0
T.max(x * c1, c2) -> T.max(x, c2 // c1) * c1 if c1 > 0 and c2 % c1 == 0
T.min(x * c1, c2) -> T.max(x, c2 // c1) * c1 if c1 < 0 and c2 % c1 == 0
T.max(x * c1, c2) -> T.min(x, c2 // c1) * c1 if c1 < 0 and c2 % c1 == 0
T.min(0 - x * c1, 0) -> T.max(x, 0) * (0 - c1) if c1 > 0
T.max(0 - x * c1, 0) -> T.min(x, 0) * (0 - c1) if c1 > 0
# Quotients by one divisor
T.min(x // c1, y // c1) -> T.max(x, y) // c1 if c1 < 0
T.max(x // c1, y // c1) -> T.min(x, y) // c1 if c1 < 0
T.min(T.truncdiv(x, c1), T.truncdiv(y, c1)) -> T.truncdiv(T.min(x, y), c1) if c1 > 0
T.min(T.truncdiv(x, c1), T.truncdiv(y, c1)) -> T.truncdiv(T.max(x, y), c1) if c1 < 0
T.max(T.truncdiv(x, c1), T.truncdiv(y, c1)) -> T.truncdiv(T.max(x, y), c1) if c1 > 0
T.max(T.truncdiv(x, c1), T.truncdiv(y, c1)) -> T.truncdiv(T.min(x, y), c1) if c1 < 0
# A value rounded down or up to a multiple
T.min(x // c1 * c1, x) -> x // c1 * c1 if c1 > 0
T.min(x, x // c1 * c1) -> x // c1 * c1 if c1 > 0
T.max(x // c1 * c1, x) -> x if c1 > 0
T.max(x, x // c1 * c1) -> x if c1 > 0
T.min((x + c1) // c2 * c2, x) -> x if c2 > 0 and c1 >= c2 - 1
T.min(x, (x + c1) // c2 * c2) -> x if c2 > 0 and c1 >= c2 - 1
T.max((x + c1) // c2 * c2, x) -> (x + c1) // c2 * c2 if c2 > 0 and c1 >= c2 - 1
T.max(x, (x + c1) // c2 * c2) -> (x + c1) // c2 * c2 if c2 > 0 and c1 >= c2 - 1
T.min(T.truncdiv(x + c1, c2) * c2, x) -> x if c2 > 0 and c1 >= c2 - 1
T.min(x, T.truncdiv(x + c1, c2) * c2) -> x if c2 > 0 and c1 >= c2 - 1
T.max(T.truncdiv(x + c1, c2) * c2, x) -> T.truncdiv(x + c1, c2) * c2 if c2 > 0 and c1 >= c2 - 1
T.max(x, T.truncdiv(x + c1, c2) * c2) -> T.truncdiv(x + c1, c2) * c2 if c2 > 0 and c1 >= c2 - 1
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
