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
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
