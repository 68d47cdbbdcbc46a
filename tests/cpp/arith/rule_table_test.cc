// The rewrite rule table's candidate index: for every root kind and every pair of operand kinds,
// the candidates are exactly the rules of that root whose operand kinds can match, in table
// order (a rule left out would silently never fire).
#include "arith/rewrite/rule_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace tessel {
namespace arith {
namespace rewrite {
namespace {

using ir::ExprKind;

TEST(RuleTable, CandidatesAreTheRulesWhoseOperandKindsCanMatch) {
  const RuleTable& t = GetRuleTable();
  size_t nonempty = 0;
  for (int root = 0; root < kNumExprKinds; ++root) {
    for (int k0 = 0; k0 < kNumExprKinds; ++k0) {
      for (int k1 = 0; k1 < kNumExprKinds; ++k1) {
        std::vector<const CompiledRule*> want;
        for (const CompiledRule* r : t.by_kind[root]) {
          auto ok = [](ExprKind w, int k) {
            return w == ExprKind::kUnknown || static_cast<int>(w) == k;
          };
          if (ok(r->kid_kind[0], k0) && ok(r->kid_kind[1], k1)) want.push_back(r);
        }
        RuleTable::Span got = t.Candidates(static_cast<ExprKind>(root), static_cast<ExprKind>(k0),
                                           static_cast<ExprKind>(k1));
        ASSERT_EQ(std::vector<const CompiledRule*>(got.begin, got.end), want)
            << "root " << root << " operands " << k0 << ", " << k1;
        nonempty += !want.empty();
      }
    }
  }
  EXPECT_GT(nonempty, 0u);
}

}  // namespace
}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
