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
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
