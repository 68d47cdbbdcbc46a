// Product bounds: relational facts that keep index arithmetic over symbolic shapes from
// overflowing, and the reasoning that uses them.
//
// A *product bound* is the fact `s_1 * s_2 * ... * s_k <= C` over the mathematical integers, for
// integer variables s_j >= 0 (the symbolic sizes of a buffer whose element count the host wrapper
// checked against C). As IR it is written exactly, without a product that could wrap:
//
//     s_2 == 0 or ... or s_k == 0 or s_1 <= C // s_2 // ... // s_k       (k >= 2)
//     s_1 <= C                                                          (k == 1)
//
// (for s_j >= 1, floor(floor(C / a) / b) == floor(C / (a * b)), and s_1 <= floor(C / P) is
// s_1 * P <= C). MakeProductBound writes that form and ParseProductBound reads it back; any
// condition of this form, wherever it comes from, means the same.
//
// ProductBoundAnalyzer is a default analyzer extension (name "product_bounds", stage
// kTransitive). While at least one product bound is a fact (a constraint scope), it answers for
// an integer expression e, by symbolic interval arithmetic over polynomials:
//
// - whether e's value is its exact mathematical value (no `+ - *` in it wraps) and within which
//   interval; it gives ConstIntBound that interval for the `+ - *` nodes whose plain bound would
//   wrap (ConstIntBoundAnalyzer::SetRefiner), so the rewrite rules' and the modular sets'
//   overflow checks, and every bound question, see it;
// - comparisons `a < b` (<=, >, >=) of two such exact expressions (TryProve).
//
// The method: e is a polynomial over atoms (variables; any other subexpression is an opaque atom
// with its interval). A variable bound to a range [min, min + extent) is replaced by its symbolic
// ends (monotonically: a product of non-negative atoms by the product of their ends), a variable
// bound to a value by the value, recursively, so that `i * m + j` for i in [0, n), j in [0, m)
// reaches `n * m - 1`, whose maximum over the product bound `n * m <= C` is C - 1. A monomial's
// maximum is the product bound's C divided by the lower bounds of the bound's other factors
// (which must be >= 1) times the maxima of its remaining atoms. Comparison facts `a < b` of the
// open scopes whose sides are exact are used as `a - b + 1 <= 0`: a multiple of that polynomial
// that cancels terms of e may be subtracted (`i * 128 + t < m` bounds `b * m + i * 128 + t`).
// Every step is checked: a node whose exact value cannot be shown to fit its dtype makes the
// whole expression unknown, so every answer holds under the IR's wrap-around semantics.
//
// Limits: polynomials of at most 48 terms and degree 6, range expansion 16 levels deep, 32
// comparison facts. Without a product bound in scope the extension answers nothing (every
// analyzer answers as before).
#ifndef TESSEL_ARITH_PRODUCT_BOUNDS_H_
#define TESSEL_ARITH_PRODUCT_BOUNDS_H_

#include <tessel/arith/analyzer.h>

#include <memory>
#include <optional>
#include <vector>

namespace tessel {
namespace arith {

struct ProductBound {
  std::vector<Var> factors;  // integer variables of one dtype, in the order written
  int64_t limit;             // C >= 0
};

// The fact `prod(factors) <= limit` in the exact form above; undefined when it cannot be written
// (no factors, factors of different dtypes, a limit outside [0, dtype max]).
PrimExpr MakeProductBound(const std::vector<Var>& factors, int64_t limit);
// The product bound `cond` states, if it has the form above.
std::optional<ProductBound> ParseProductBound(const PrimExpr& cond);

class ProductBoundAnalyzer : public AnalyzerExtension {
 public:
  explicit ProductBoundAnalyzer(Analyzer* parent);
  ~ProductBoundAnalyzer() override;

  const char* name() const override { return "product_bounds"; }
  Stage stage() const override { return Stage::kTransitive; }
  std::unique_ptr<AnalyzerExtension> Clone(Analyzer* parent) const override;
  void OnBind(const Var& var, const tvm::ffi::Optional<Range>& range,
              const tvm::ffi::Optional<PrimExpr>& value) override;
  std::function<void()> EnterConstraint(const PrimExpr& constraint) override;
  ProofResult TryProve(const PrimExpr& cond, ProofStrength strength) override;

  // The interval of e's value when e provably computes its exact value (nothing wraps), else
  // nothing. Public for tests.
  std::optional<IntInterval> ExactBound(const PrimExpr& e);

  struct State;

 private:
  void Install();
  Analyzer* parent_;
  std::unique_ptr<State> state_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_PRODUCT_BOUNDS_H_
