// The rewrite simplifier: local algebraic rules, written as data in a small pattern DSL and
// applied bottom-up to a fixed point. It is the Analyzer's kRewrite-stage extension ("rewrite"),
// present in every Analyzer.
//
// The DSL (src/arith/rewrite/rules_*.cc, one file per root operator, one rule a line):
//
//   before -> after
//   before -> after if condition
//   ... [wrap]
//
// Each side is an expression of the text format (docs/text_format.md) over the holes x, y, z, w
// (any integer expression), p, q (any bool expression) and c1, c2, c3 (integer constants).
// Matching ignores dtypes: a rule applies to every integer dtype, and its result is built in the
// matched one. The condition is decided after substitution, exactly for constants and by the
// parent Analyzer's bounds and modular sets otherwise; "unknown" never applies a rule.
//
// Soundness (integer + - * wrap modulo 2^bits, ir/expr.h): a rule holds over the mathematical
// integers unless it is tagged [wrap], which says it holds modulo 2^bits (a ring identity such
// as `(x + c1) + c2 -> x + (c1 + c2)`). An untagged rule is applied only where ConstIntBound
// shows that no integer operation of the matched expression, of the built result and of the
// condition can leave its dtype. No rule introduces a division by a divisor that may be zero, or
// drops or duplicates an expression with side effects (impure calls are never rewritten).
// tests/cpp/arith/rule_check_test.cc checks every rule on random constants for int8/32/64.
#ifndef TESSEL_ARITH_REWRITE_SIMPLIFY_H_
#define TESSEL_ARITH_REWRITE_SIMPLIFY_H_

#include <tessel/arith/analyzer.h>

#include <memory>
#include <string>
#include <vector>

namespace tessel {
namespace arith {

// One rule as written, with where it is written.
struct RewriteRuleInfo {
  std::string file;
  int line = 0;
  std::string before;
  std::string after;
  // Empty when the rule has no condition.
  std::string condition;
  // Holds modulo 2^bits: no overflow check.
  bool wrap = false;
};

// Every rule of the built-in table, in the order they are tried (per root operator). Parsed once,
// on first use (thread-safe); a malformed rule throws ValueError naming its file:line.
const std::vector<RewriteRuleInfo>& RewriteRules();

// Parses rule text: one rule a line, `#` starts a comment line. Line i of `text` (counting from
// 0) is reported as line first_line + i of `file`. Each side is parsed with RewriteHoleVars(int32)
// and checked (the root of `before` is an operator; `after` and `condition` use only holes of
// `before`); any mistake throws ValueError "file:line: message".
std::vector<RewriteRuleInfo> ParseRewriteRules(const std::string& file, int first_line,
                                               const std::string& text);

// The hole variables the DSL is parsed with: x, y, z, w, c1, c2, c3 of dtype int_type; p, q bool.
tvm::ffi::Map<tvm::ffi::String, tvm::ffi::Any> RewriteHoleVars(DataType int_type);

class RewriteSimplifier : public AnalyzerExtension {
 public:
  static constexpr const char* kName = "rewrite";
  // Rule applications per Simplify call; past it the expression is returned as far as rewritten.
  static constexpr int kDefaultMaxSteps = 4096;

  explicit RewriteSimplifier(Analyzer* parent);
  ~RewriteSimplifier() override;

  const char* name() const final { return kName; }
  Stage stage() const final { return Stage::kRewrite; }
  std::unique_ptr<AnalyzerExtension> Clone(Analyzer* parent) const final;
  // Simplifies cond; proved when it becomes true, disproved when it becomes false (both are
  // equivalences under the analyzer's bindings and facts).
  ProofResult TryProve(const PrimExpr& cond, ProofStrength strength) final;
  PrimExpr Simplify(const PrimExpr& expr) final;

  void set_max_steps(int steps) { max_steps_ = steps; }
  // Rule applications of the last Simplify call (for tests and tracing).
  int last_steps() const { return last_steps_; }

  // Buffers of one Simplify call (defined in rewrite_simplify.cc), kept between calls so that a
  // call allocates nothing for them; busy_ makes sure one call at a time uses them.
  struct Scratch;

 private:
  Analyzer* parent_;
  int max_steps_ = kDefaultMaxSteps;
  int last_steps_ = 0;
  // Set while simplifying: a TryProve reached from inside (through the parent) answers unknown
  // instead of recursing.
  bool busy_ = false;
  std::unique_ptr<Scratch> scratch_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_REWRITE_SIMPLIFY_H_
