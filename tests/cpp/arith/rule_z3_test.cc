// Asks Z3 to prove every rule of the rewrite table, `condition => before == after`, with the
// holes as free variables:
// - a [wrap] rule under the IR's wrap-around semantics, for holes of every integer dtype (int and
//   uint of 8, 16, 32 and 64 bits);
// - any other rule over the mathematical integers (an analyzer in assume_no_overflow mode, for
//   int32 and int64 holes), which is what the rule engine relies on: it applies such a rule only
//   where no step of the matched expression, the result or the condition leaves its dtype.
// A counterexample fails the test and is printed with the hole values. A rule Z3 cannot decide
// within the budget (non-linear division, a division that is undefined at zero) is listed with
// its file:line, not failed: the random-value checker (rule_check_test.cc) still covers it.
#include <gtest/gtest.h>
#include <tessel/arith/rewrite_simplify.h>
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

// The claim `cond => before == after` of a rule for holes of dtype t (nullopt: a literal of the
// rule does not fit t, so the rule cannot match it either).
std::optional<PrimExpr> Claim(const RewriteRuleInfo& rule, DataType t) {
  tvm::ffi::Map<tvm::ffi::String, tvm::ffi::Any> vars = RewriteHoleVars(t);
  try {
    PrimExpr before = ParseExpr(rule.before, vars);
    PrimExpr after = ParseExpr(rule.after, vars);
    if (before.dtype() != after.dtype()) return std::nullopt;
    PrimExpr same = EQ(before, after);
    if (rule.condition.empty()) return same;
    return Or(Not(ParseExpr(rule.condition, vars)), same);
  } catch (const tvm::ffi::Error&) {
    return std::nullopt;
  }
}

// Wrap-around semantics differ at each width and signedness, so a [wrap] rule is proved at each.
// A rule without [wrap] is proved over the mathematical integers, which covers every width: the
// engine applies it only where no step leaves the dtype, and there each width computes the
// mathematical value (int32 and int64 holes differ only in which literals fit). Unsigned
// expressions get [wrap] rules only: the engine's no-overflow check refuses the others on them
// (a subtraction's bounds leave the type).
std::vector<DataType> WrapTypes() {
  return {DataType::Int(8),  DataType::Int(16),  DataType::Int(32),  DataType::Int(64),
          DataType::UInt(8), DataType::UInt(16), DataType::UInt(32), DataType::UInt(64)};
}

TEST(RuleZ3, EveryRuleIsProvedOrListed) {
  if (!Z3Prover::Available()) GTEST_SKIP() << "built without Z3";
  const std::vector<RewriteRuleInfo>& rules = RewriteRules();
  int proved = 0, unknown = 0, refuted = 0, queries = 0;
  std::vector<std::string> undecided;
  for (const RewriteRuleInfo& rule : rules) {
    std::string where = rule.file + ":" + std::to_string(rule.line);
    std::vector<DataType> types =
        rule.wrap ? WrapTypes() : std::vector<DataType>{DataType::Int(32), DataType::Int(64)};
    bool all_proved = true;
    for (DataType t : types) {
      std::optional<PrimExpr> claim = Claim(rule, t);
      if (!claim) continue;
      Analyzer analyzer;
      if (!rule.wrap) analyzer.SetAssumeNoOverflow(true);
      Z3Prover* z3 = GetZ3Prover(analyzer);
      ASSERT_NE(z3, nullptr);
      z3->set_rlimit(20000);
      ++queries;
      ProofResult r = z3->TryProve(*claim, ProofStrength::kDefault);
      if (r == ProofResult::kProved) continue;
      all_proved = false;
      if (r == ProofResult::kDisproved) {
        ++refuted;
        std::string values;
        if (auto cex = z3->Counterexample(*claim)) {
          for (const auto& [var, value] : *cex) {
            values += " " + std::string(var->name_hint) + "=" +
                      std::to_string(static_cast<long long>(value));
          }
        }
        if (std::getenv("TESSEL_RULE_Z3_DEBUG")) std::cout << z3->GetSMTLIB2(*claim) << "\n";
        ADD_FAILURE() << where << ": " << rule.before << " -> " << rule.after
                      << (rule.condition.empty() ? "" : " if " + rule.condition)
                      << (rule.wrap ? " [wrap]" : "") << " is false for " << t << ":" << values;
      } else {
        undecided.push_back(where + " (" + t.str() + "): " + rule.before + " -> " + rule.after);
      }
    }
    if (all_proved) ++proved;
  }
  unknown = static_cast<int>(undecided.size());
  std::cout << "rules: " << rules.size() << ", proved for every dtype: " << proved
            << ", Z3 queries: " << queries << ", refuted: " << refuted
            << ", undecided within rlimit 20000: " << unknown << "\n";
  for (const std::string& u : undecided) std::cout << "  undecided " << u << "\n";
  EXPECT_EQ(refuted, 0);
  // Most rules are linear or divide by constants, which Z3 decides: a collapse of that share
  // means the encoding, not the rules, changed.
  EXPECT_GE(proved * 10, static_cast<int>(rules.size()) * 7);
}

}  // namespace
}  // namespace tessel
