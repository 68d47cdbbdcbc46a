// Rewrite rules rooted at and, or and not (the DSL is described in
// tessel/arith/rewrite_simplify.h).
#include "arith/rewrite/rule_table.h"

namespace tessel {
namespace arith {
namespace rewrite {

RuleSource LogicalRules() {
  // clang-format off
  return {__FILE__, __LINE__, R"rules(
# Negation pushed inward (De Morgan); integer comparisons negate exactly
not (not p) -> p
not (x < y) -> x >= y
not (x <= y) -> x > y
not (x > y) -> x <= y
not (x >= y) -> x < y
not (x == y) -> x != y
not (x != y) -> x == y
not (p and q) -> not p or not q
not (p or q) -> not p and not q
# Constants, repeats and contradictions in 'and'
p and True -> p
True and p -> p
p and False -> False
False and p -> False
p and p -> p
p and not p -> False
not p and p -> False
(p and q) and p -> p and q
(p and q) and q -> p and q
x == y and x != y -> False
x != y and x == y -> False
x < y and y < x -> False
x < y and x >= y -> False
x >= y and x < y -> False
x <= y and y < x -> False
# Ranges of one term in 'and'
x < c1 and x < c2 -> x < T.min(c1, c2)
x >= c1 and x >= c2 -> x >= T.max(c1, c2)
x < c1 and x >= c2 -> False if c1 <= c2
x >= c2 and x < c1 -> False if c1 <= c2
x < c1 and x >= c2 -> x == c2 if c1 == c2 + 1
x >= c2 and x < c1 -> x == c2 if c1 == c2 + 1
x == c1 and x == c2 -> False if c1 != c2
x == c1 and x < c2 -> False if c2 <= c1
x == c1 and x < c2 -> x == c1 if c1 < c2
x < c2 and x == c1 -> False if c2 <= c1
x < c2 and x == c1 -> x == c1 if c1 < c2
x == c1 and x >= c2 -> False if c1 < c2
x == c1 and x >= c2 -> x == c1 if c2 <= c1
x >= c2 and x == c1 -> False if c1 < c2
x >= c2 and x == c1 -> x == c1 if c2 <= c1
x == c1 and x != c2 -> x == c1 if c1 != c2
x != c2 and x == c1 -> x == c1 if c1 != c2
x != c1 and x < c2 -> x < c2 if c2 <= c1
x < c2 and x != c1 -> x < c2 if c2 <= c1
x != c1 and x >= c2 -> x >= c2 if c1 < c2
x >= c2 and x != c1 -> x >= c2 if c1 < c2
# Ranges of one term at the end of an 'and' chain
(p and x < c1) and x < c2 -> p and x < T.min(c1, c2)
(p and x >= c1) and x >= c2 -> p and x >= T.max(c1, c2)
(p and x < c1) and x >= c2 -> False if c1 <= c2
(p and x >= c2) and x < c1 -> False if c1 <= c2
(x < c1 and p) and x < c2 -> x < T.min(c1, c2) and p
(x >= c1 and p) and x >= c2 -> x >= T.max(c1, c2) and p
(x < c1 and p) and x >= c2 -> False if c1 <= c2
(x >= c2 and p) and x < c1 -> False if c1 <= c2
# Constants, repeats and tautologies in 'or'
p or False -> p
False or p -> p
p or True -> True
True or p -> True
p or p -> p
p or not p -> True
not p or p -> True
(p or q) or p -> p or q
(p or q) or q -> p or q
x == y or x != y -> True
x != y or x == y -> True
x < y or x >= y -> True
x >= y or x < y -> True
x < y or y < x -> x != y
x <= y or y < x -> True
# Ranges of one term in 'or'
x < c1 or x < c2 -> x < T.max(c1, c2)
x >= c1 or x >= c2 -> x >= T.min(c1, c2)
x < c1 or x >= c2 -> True if c2 <= c1
x >= c2 or x < c1 -> True if c2 <= c1
x < c1 or x >= c2 -> x != c1 if c2 == c1 + 1
x >= c2 or x < c1 -> x != c1 if c2 == c1 + 1
x != c1 or x != c2 -> True if c1 != c2
x == c1 or x != c2 -> x != c2 if c1 != c2
x != c2 or x == c1 -> x != c2 if c1 != c2
x != c1 or x < c2 -> True if c1 < c2
x < c2 or x != c1 -> True if c1 < c2
x != c1 or x >= c2 -> True if c2 <= c1
x >= c2 or x != c1 -> True if c2 <= c1
x == c1 or x < c2 -> x < c2 if c1 < c2
x < c2 or x == c1 -> x < c2 if c1 < c2
x == c1 or x >= c2 -> x >= c2 if c2 <= c1
x >= c2 or x == c1 -> x >= c2 if c2 <= c1
(p or x < c1) or x < c2 -> p or x < T.max(c1, c2)
(p or x >= c1) or x >= c2 -> p or x >= T.min(c1, c2)
(p or x < c1) or x >= c2 -> True if c2 <= c1
(p or x >= c2) or x < c1 -> True if c2 <= c1
# A quotient and a remainder by one divisor pin the value down
x // c1 == c2 and x % c1 == c3 -> x == c2 * c1 + c3 if c1 > 0 and c3 >= 0 and c3 < c1
x % c1 == c3 and x // c1 == c2 -> x == c2 * c1 + c3 if c1 > 0 and c3 >= 0 and c3 < c1
x // c1 == c2 and x % c1 < c3 -> x >= c2 * c1 and x < c2 * c1 + c3 if c1 > 0 and c3 > 0 and c3 <= c1
x // c1 == c2 and x % c1 >= c3 -> x >= c2 * c1 + c3 and x < c2 * c1 + c1 if c1 > 0 and c3 >= 0 and c3 < c1
# Opposite orders of two terms
x < y and y <= x -> False [wrap]
y < x and x <= y -> False [wrap]
x <= y and y < x -> False [wrap]
x < y or y <= x -> True [wrap]
y < x or x <= y -> True [wrap]
x > y or x <= y -> True [wrap]
x <= y or x > y -> True [wrap]
# A value within one period of a multiple: the quotient
x >= y * c1 and x - y * c1 < c1 -> y == x // c1 if c1 > 0
x - y * c1 < c1 and x >= y * c1 -> y == x // c1 if c1 > 0
)rules"};
  // clang-format on
}

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
