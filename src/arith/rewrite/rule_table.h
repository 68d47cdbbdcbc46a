// The compiled rule table of the rewrite simplifier: each rule's sides as flat pattern trees,
// indexed by the root operator, built once from the DSL text of the rules_*.cc files.
#ifndef TESSEL_SRC_ARITH_REWRITE_RULE_TABLE_H_
#define TESSEL_SRC_ARITH_REWRITE_RULE_TABLE_H_

#include <tessel/arith/int_interval.h>
#include <tessel/arith/rewrite_simplify.h>
#include <tessel/ir/functor.h>

#include <cstdint>
#include <vector>

namespace tessel {
namespace arith {
namespace rewrite {

// Holes, in the order of their slots in a match.
enum Hole : int8_t { kX = 0, kY, kZ, kW, kP, kQ, kC1, kC2, kC3, kNumHoles };
inline bool IsConstHole(int hole) { return hole >= kC1; }

struct PatNode {
  // kVar for a hole, kIntImm for a literal, else the operator.
  ir::ExprKind kind = ir::ExprKind::kUnknown;
  int8_t hole = -1;
  // A literal True/False (a bool constant), else an integer literal.
  bool bool_literal = false;
  // The subtree holds no expression hole: it is a constant once c1..c3 are known.
  bool constant = false;
  // The first constant hole in the subtree (its dtype types the constant), -1 if none.
  int8_t const_hole = -1;
  int64_t value = 0;
  int32_t kid[3] = {-1, -1, -1};
  int num_kids = 0;
};

struct Pattern {
  std::vector<PatNode> nodes;
  int32_t root = -1;
  bool defined() const { return root >= 0; }
  const PatNode& operator[](int32_t i) const { return nodes[i]; }
};

struct CompiledRule {
  const RewriteRuleInfo* info;
  Pattern before, after, cond;
  // The node kind each operand of the pattern's root must have (kUnknown: any), so that a rule
  // that cannot match is skipped without walking its pattern.
  ir::ExprKind kid_kind[3] = {ir::ExprKind::kUnknown, ir::ExprKind::kUnknown,
                              ir::ExprKind::kUnknown};
};

constexpr int kNumExprKinds = static_cast<int>(ir::ExprKind::kUnknown) + 1;

struct RuleTable {
  std::vector<RewriteRuleInfo> infos;
  std::vector<CompiledRule> rules;
  // Rules whose `before` has this root kind, in table order.
  std::vector<const CompiledRule*> by_kind[kNumExprKinds];

  // The rules that can match a node of kind root whose first two operands are n0 and n1, of kinds
  // k0 and k1 (a subset of by_kind[root], in table order; the third operand is not indexed): an
  // operand kind a rule needs, or for a constant operand its value when a rule names one
  // (`x * 1`, `x % -1`, `x + 0`). Most nodes have a handful of candidates out of dozens.
  struct Span {
    const CompiledRule* const* begin;
    const CompiledRule* const* end;
  };
  Span Candidates(ir::ExprKind root, ir::ExprKind k0, const ir::PrimExprNode* n0, ir::ExprKind k1,
                  const ir::PrimExprNode* n1) const {
    size_t i = (static_cast<size_t>(root) * num_classes + KidClass(k0, n0)) * num_classes +
               KidClass(k1, n1);
    return {candidates.data() + candidate_begin[i], candidates.data() + candidate_begin[i + 1]};
  }
  // An operand's class: by kind (0 for kinds no rule asks for), and for a constant by value.
  int KidClass(ir::ExprKind k, const ir::PrimExprNode* n) const {
    if (k != ir::ExprKind::kIntImm) return kid_class[static_cast<int>(k)];
    const auto* imm = static_cast<const ir::IntImmNode*>(n);
    // A uint64 constant stored as a negative representative is a large value: "other".
    bool large = imm->dtype.is_uint() && imm->value < 0;
    return imm_class[large ? 3 : ImmSlot(imm->value)];
  }
  // 0, 1, -1 and any other value.
  static int ImmSlot(int64_t v) { return v == 0 ? 0 : v == 1 ? 1 : v == -1 ? 2 : 3; }

  uint8_t kid_class[kNumExprKinds] = {};
  uint8_t imm_class[4] = {};
  int num_classes = 1;
  std::vector<uint32_t> candidate_begin;
  std::vector<const CompiledRule*> candidates;
};

// The exact value of an integer constant (a uint64 above INT64_MAX is stored as its bit pattern).
i128 ConstValue(const ir::IntImmNode* n);
// The operands of e (of kind k) for the node kinds rule patterns use: binary operators,
// comparisons, logic and select; returns how many (0 for any other kind).
int KidsOf(const ir::PrimExprNode* e, ir::ExprKind k, const ir::PrimExprNode* out[3]);

// Structural equality of two expressions, fast for the integer arithmetic nodes (falls back on
// tvm-ffi's StructuralEqual for others); variables are equal only when they are the same object.
bool SameExpr(const ir::PrimExprNode* a, const ir::PrimExprNode* b);

// Built on first use (thread-safe static initialization).
const RuleTable& GetRuleTable();

// Where a rules_*.cc file keeps its text: line is the line of the opening R"( delimiter, so that
// line i of text (from 0) is line + i of the file.
struct RuleSource {
  const char* file;
  int line;
  const char* text;
};

RuleSource AddRules();
RuleSource SubRules();
RuleSource MulRules();
RuleSource DivRules();
RuleSource ModRules();
RuleSource MinMaxRules();
RuleSource CmpRules();
RuleSource LogicalRules();
RuleSource SelectRules();

}  // namespace rewrite
}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_REWRITE_RULE_TABLE_H_
