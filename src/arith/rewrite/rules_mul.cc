// Rewrite rules rooted at * (the DSL is described in tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource MulRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Identities; constants to the right
x * 0 -> 0 [wrap]
x * 1 -> x [wrap]
x * -1 -> 0 - x [wrap]
c1 * x -> x * c1 [wrap]
# Constants folded and distributed
(x * c1) * c2 -> x * (c1 * c2) [wrap]
(x + c1) * c2 -> x * c2 + c1 * c2 [wrap]
(x - c1) * c2 -> x * c2 - c1 * c2 [wrap]
(c1 - x) * c2 -> c1 * c2 - x * c2 [wrap]
# Constants move outward
(x * c1) * y -> (x * y) * c1 [wrap]
x * (y * c1) -> (x * y) * c1 [wrap]
# Negations
(0 - x) * (0 - y) -> x * y [wrap]
T.min(x, y) * T.max(x, y) -> x * y [wrap]
T.max(x, y) * T.min(x, y) -> x * y [wrap]
(x - y) * c1 -> (y - x) * (0 - c1) if c1 < 0
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
