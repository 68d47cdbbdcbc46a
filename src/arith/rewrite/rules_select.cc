// Rewrite rules rooted at Select (the DSL is described in tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource SelectRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Equal arms; negated and repeated conditions
T.Select(p, x, x) -> x
T.Select(not p, x, y) -> T.Select(p, y, x)
T.Select(p, T.Select(p, x, y), z) -> T.Select(p, x, z)
T.Select(p, x, T.Select(p, y, z)) -> T.Select(p, x, z)
# Bool arms
T.Select(p, True, False) -> p
T.Select(p, False, True) -> not p
# Min and max written as selects
T.Select(x < y, x, y) -> T.min(x, y)
T.Select(x < y, y, x) -> T.max(x, y)
T.Select(x <= y, x, y) -> T.min(x, y)
T.Select(x <= y, y, x) -> T.max(x, y)
T.Select(x > y, x, y) -> T.max(x, y)
T.Select(x > y, y, x) -> T.min(x, y)
T.Select(x >= y, x, y) -> T.max(x, y)
T.Select(x >= y, y, x) -> T.min(x, y)
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
