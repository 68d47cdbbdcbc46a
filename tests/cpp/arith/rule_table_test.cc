// The rewrite rule table's candidate index: for every root kind and every pair of operands (each
// kind, and constants 0, 1, -1 and another value), the candidates are exactly the rules of that
// root whose operands can match, in table order (a rule left out would silently never fire).
#include "arith/rewrite/rule_table.h"

#include <gtest/gtest.h>
#include <tessel/ir/expr.h>

#include <vector>

namespace tessel {
namespace arith {
namespace rewrite {
namespace {

using ir::ExprKind;

struct Operand {
  ExprKind kind;
  ir::PrimExpr node;  // for constants
};

// Whether operand j of r's pattern can be op: the kind it asks for, or for a literal its value
// (the index tells 0, 1 and -1 apart, and any other value from those three).
bool MayMatch(const CompiledRule& r, int j, const Operand& op) {
  ExprKind want = r.kid_kind[j];
  if (want == ExprKind::kUnknown) return true;
  if (want != op.kind) return false;
  const PatNode& kid = r.before[r.before[r.before.root].kid[j]];
  if (want != ExprKind::kIntImm || kid.kind != ExprKind::kIntImm) return true;
  return RuleTable::ImmSlot(kid.value) == RuleTable::ImmSlot(op.node.as<ir::IntImmNode>()->value);
}

TEST(RuleTable, CandidatesAreTheRulesWhoseOperandsCanMatch) {
  const RuleTable& t = GetRuleTable();
  std::vector<Operand> operands;
  for (int k = 0; k < kNumExprKinds; ++k) {
    if (static_cast<ExprKind>(k) != ExprKind::kIntImm)
      operands.push_back({static_cast<ExprKind>(k)});
  }
  for (int64_t v : {0, 1, -1, 7, 64}) {
    operands.push_back({ExprKind::kIntImm, ir::IntImm(ir::DataType::Int(32), v)});
  }
  size_t nonempty = 0, pruned_by_value = 0;
  for (int root = 0; root < kNumExprKinds; ++root) {
    for (const Operand& a : operands) {
      for (const Operand& b : operands) {
        std::vector<const CompiledRule*> want;
        size_t by_kind = 0;
        for (const CompiledRule* r : t.by_kind[root]) {
          bool kinds = (r->kid_kind[0] == ExprKind::kUnknown || r->kid_kind[0] == a.kind) &&
                       (r->kid_kind[1] == ExprKind::kUnknown || r->kid_kind[1] == b.kind);
          by_kind += kinds;
          if (MayMatch(*r, 0, a) && MayMatch(*r, 1, b)) want.push_back(r);
        }
        RuleTable::Span got =
            t.Candidates(static_cast<ExprKind>(root), a.kind, a.node.get(), b.kind, b.node.get());
        ASSERT_EQ(std::vector<const CompiledRule*>(got.begin, got.end), want)
            << "root " << root << " operands " << static_cast<int>(a.kind) << ", "
            << static_cast<int>(b.kind);
        nonempty += !want.empty();
        pruned_by_value += want.size() < by_kind;
      }
    }
  }
  EXPECT_GT(nonempty, 0u);
  // Literal operands (x * 1, x % -1, ...) prune by value somewhere.
  EXPECT_GT(pruned_by_value, 0u);
}

}  // namespace
}  // namespace rewrite
}  // namespace arith
}  // namespace tessel
