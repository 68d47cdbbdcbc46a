// arith::Analyzer: the one object a pass asks about integer expressions. It owns the
// sub-analyzers (constant bounds, modular sets, interval sets) and keeps them consistent: a
// binding or a constraint scope reaches every one of them.
//
// Every answer is sound for the IR's semantics (ir/expr.h): integer arithmetic wraps modulo
// 2^bits, and nothing is assumed about overflow. "Cannot prove" is always a safe answer.
//
// Extension point: later analyses (rewrite simplifier, canonical simplifier, transitive
// comparisons, the Z3 prover) implement AnalyzerExtension and are added with AddExtension. The
// facade consults them in Stage order, after its own cheap methods, so Z3 (kProver) runs last.
//
// Not thread-safe, even through const methods (answers are cached per analyzer): use one analyzer
// per thread.
//
// Clone(): a deep copy of every sub-analyzer's bindings, facts and settings, and a Clone() of
// each extension. A clone made inside a constraint scope keeps that scope's facts as permanent
// facts: leaving the scope in the original does not affect the clone, and scopes entered on the
// clone are independent of the original's.
#ifndef TESSEL_ARITH_ANALYZER_H_
#define TESSEL_ARITH_ANALYZER_H_

#include <tessel/arith/const_int_bound.h>
#include <tessel/arith/int_set.h>
#include <tessel/arith/modular_set.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tessel {
namespace arith {

enum class ProofStrength : int {
  kDefault = 0,
  // Allows more expensive reasoning about symbolic bounds (used by extensions).
  kSymbolicBound = 1,
};

enum class ProofResult : int { kUnknown = 0, kProved = 1, kDisproved = 2 };

class Analyzer;

// An analysis that plugs into the facade. Each hook has a neutral default, so an extension
// implements only what it can answer.
class AnalyzerExtension {
 public:
  // When an extension is consulted, relative to the others.
  enum class Stage : int { kRewrite = 0, kCanonical = 1, kTransitive = 2, kProver = 3 };

  virtual ~AnalyzerExtension() = default;
  virtual const char* name() const = 0;
  virtual Stage stage() const = 0;
  // A copy bound to `parent` (a clone of the analyzer this one belongs to).
  virtual std::unique_ptr<AnalyzerExtension> Clone(Analyzer* parent) const = 0;
  // Called after the built-in sub-analyzers have recorded a binding (range or value is defined).
  virtual void OnBind(const Var& var, const tvm::ffi::Optional<Range>& range,
                      const tvm::ffi::Optional<PrimExpr>& value) {}
  // Called when a constraint scope opens; the returned function (may be null) undoes it.
  virtual std::function<void()> EnterConstraint(const PrimExpr& constraint) { return nullptr; }
  // kProved: cond holds for every value the bindings and facts allow. kDisproved: cond is known
  // NOT to hold for every such value (the prover means a counterexample exists; others may mean
  // cond is false everywhere). Only kProved may be acted on: never turn kDisproved of cond into a
  // proof of `not cond`.
  virtual ProofResult TryProve(const PrimExpr& cond, ProofStrength strength) {
    return ProofResult::kUnknown;
  }
  // An equivalent expression (or expr itself).
  virtual PrimExpr Simplify(const PrimExpr& expr) { return expr; }
};

// Makes the extension every new Analyzer gets (the rewrite simplifier, the Z3 prover, ...).
using ExtensionFactory = std::function<std::unique_ptr<AnalyzerExtension>(Analyzer*)>;
// Registers a default extension; call from a static initializer
// (TESSEL_REGISTER_ANALYZER_EXTENSION). Not thread-safe with concurrent Analyzer construction:
// registration happens at library load.
int RegisterDefaultExtension(ExtensionFactory factory);

#define TESSEL_ARITH_CONCAT_(a, b) a##b
#define TESSEL_ARITH_CONCAT(a, b) TESSEL_ARITH_CONCAT_(a, b)
#define TESSEL_REGISTER_ANALYZER_EXTENSION(Factory)                                            \
  [[maybe_unused]] static const int TESSEL_ARITH_CONCAT(__tessel_analyzer_ext_, __COUNTER__) = \
      ::tessel::arith::RegisterDefaultExtension(Factory)

class Analyzer {
 public:
  // An analyzer with every registered default extension.
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  std::unique_ptr<Analyzer> Clone() const;

  // The overflow semantics every answer holds under (docs/arith.md, "Two overflow semantics").
  // false (the default): integer + - * wrap modulo 2^bits, exactly as the IR defines them.
  // true: + - * / % of signed integers of 32 bits and wider are the mathematical operations (no
  // wrap-around), as TVM, Halide and C treat index arithmetic; narrower and unsigned integers
  // and casts still wrap. An answer in this mode holds wherever the input does not overflow and
  // may be wrong for a program that does, so lowering never uses it (it gets the host checks as
  // facts instead). It is set before anything is bound; a clone keeps it.
  void SetAssumeNoOverflow(bool on);
  bool assume_no_overflow() const { return assume_no_overflow_; }

  // var ranges over [min, min + extent) (a range of extent 1 binds it to min).
  // Re-binding a variable to something structurally different fails (ValueError) unless
  // allow_override, which replaces the old binding. A range that is empty for certain (its
  // extent's bound is below 1) is a ValueError: it would make every fact about var vacuous.
  void Bind(const Var& var, const Range& range, bool allow_override = false);
  // Whether Bind accepts the range: its extent may be 1 or more. Passes binding the range of a
  // loop that might not run check this first (code under an empty range never runs).
  bool MayBeNonEmpty(const Range& range) const;
  // var equals value (value must not refer to var).
  void Bind(const Var& var, const PrimExpr& value, bool allow_override = false);

  arith::ConstIntBound ConstIntBound(const PrimExpr& expr) const;
  arith::ModularSet ModularSet(const PrimExpr& expr) const;
  arith::IntSet IntSet(const PrimExpr& expr, const tvm::ffi::Map<Var, arith::IntSet>& dom) const;
  arith::IntSet IntSet(const PrimExpr& expr, const tvm::ffi::Map<Var, Range>& dom) const;

  // Whether cond (a bool expression) holds for every value allowed by bindings and facts.
  bool CanProve(const PrimExpr& cond, ProofStrength strength = ProofStrength::kDefault);
  bool CanProveGreaterEqual(const PrimExpr& expr, int64_t lower_bound);
  bool CanProveLess(const PrimExpr& expr, int64_t upper_bound);
  bool CanProveEqual(const PrimExpr& a, const PrimExpr& b);

  // Folds constants and replaces every pure integer subexpression whose value is known (a
  // single-point bound or a constant modular set) by that constant; then lets the extensions
  // simplify, in stage order.
  // `steps` bounds the rounds of extension passes (each round runs every stage once).
  PrimExpr Simplify(const PrimExpr& expr, int steps = 2);
  // Only the rewrite-stage (resp. canonical-stage) extensions; the expression unchanged when none
  // is registered.
  PrimExpr RewriteSimplify(const PrimExpr& expr);
  PrimExpr CanonicalSimplify(const PrimExpr& expr);
  // The extension with this name(), or null.
  AnalyzerExtension* FindExtension(const std::string& name) const;
  // Removes the extension with this name() (e.g. "z3" where a caller wants only the cheap
  // methods); false when there is none. Fails (ValueError) while a constraint scope is open.
  bool RemoveExtension(const std::string& name);

  // Adds an extension; extensions are consulted in Stage order (then in order of addition).
  void AddExtension(std::unique_ptr<AnalyzerExtension> extension);
  // The active constraint-scope facts, outermost first (for extensions such as the prover).
  const std::vector<PrimExpr>& facts() const { return facts_; }
  // Statistics only (bench/arith/z3_bench.cc): how many CanProve calls this analyzer answered,
  // nested ones included, so a bench can tell which share of them reached the prover.
  int64_t stats_can_prove_calls() const { return stats_can_prove_calls_; }

  ConstIntBoundAnalyzer& const_int_bound_analyzer() { return const_int_bound_; }
  const ConstIntBoundAnalyzer& const_int_bound_analyzer() const { return const_int_bound_; }
  ModularSetAnalyzer& modular_set_analyzer() { return modular_set_; }
  const ModularSetAnalyzer& modular_set_analyzer() const { return modular_set_; }

 private:
  friend class ConstraintScope;
  struct NoExtensions {};
  explicit Analyzer(NoExtensions);
  // Records cond in every sub-analyzer; the returned function undoes exactly that.
  std::function<void()> EnterConstraint(const PrimExpr& cond);
  // Three-valued decision of cond from bounds, modular sets and facts (no extensions).
  ProofResult Decide(const PrimExpr& cond);
  PrimExpr SimplifyWithStage(const PrimExpr& expr, AnalyzerExtension::Stage stage);
  void CheckRebind(const Var& var, const tvm::ffi::ObjectRef& binding, bool allow_override);

  ConstIntBoundAnalyzer const_int_bound_;
  ModularSetAnalyzer modular_set_;
  IntSetAnalyzer int_set_;
  // What each variable was bound to (a Range or a PrimExpr), for the re-binding check.
  tvm::ffi::Map<Var, tvm::ffi::ObjectRef> bindings_;
  std::vector<PrimExpr> facts_;
  std::vector<std::unique_ptr<AnalyzerExtension>> extensions_;
  // Set while CanProve simplifies its condition, so nested CanProve calls skip that step.
  bool in_prove_simplify_ = false;
  bool assume_no_overflow_ = false;
  int64_t stats_can_prove_calls_ = 0;
};

// RAII constraint scope: `ConstraintScope scope(&analyzer, x < 10);` makes `x < 10` a fact until
// the scope ends, which restores exactly the previous state. Scopes nest and must end in reverse
// order of creation (automatic for stack objects).
class ConstraintScope {
 public:
  ConstraintScope(Analyzer* analyzer, const PrimExpr& constraint);
  ~ConstraintScope();
  ConstraintScope(const ConstraintScope&) = delete;
  ConstraintScope& operator=(const ConstraintScope&) = delete;

 private:
  std::function<void()> exit_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_ANALYZER_H_
