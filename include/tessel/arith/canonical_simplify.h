// The canonical simplifier: brings integer index arithmetic to a sum-of-products normal form,
//   sum_i coeff_i * (atom_i1 * atom_i2 * ...) + constant,
// merging like terms, and understands floordiv/floormod of such sums the way loop tiling produces
// them (`(x // 8) * 8 + x % 8` is `x`, `(x * 16 + y) % 8` is `y % 8`, `(x // 4) % 4` and
// `(x % 16) // 4` are the same value, `(x // 4) // 8` is `x // 32`).
//
// Soundness under wrap-around (ir/expr.h): a sum stands for its value modulo 2^bits, so the ring
// identities of + - * (distribution, merging, cancelling) always hold. Every identity that looks at
// the value itself (splitting a dividend, deciding a quotient from bounds, truncating division as
// flooring division) is used only where ConstIntBound of the parent Analyzer shows that the sum's
// exact value fits in its dtype, i.e. that the wrapped value is the exact one. A remainder by a
// power of two needs no such check, since wrapping preserves residues modulo 2^k.
//
// Atoms are ordered deterministically (by kind, then structurally; variables by name, equal names
// by first appearance), so the output does not depend on pointer values or the run. The output is
// ordinary IR: positive terms first, then subtracted negative ones, the constant last.
//
// It is registered as a default extension (stage kCanonical, name "canonical") of every Analyzer;
// `Analyzer::CanonicalSimplify` runs it alone, `Analyzer::Simplify` runs it after the rewrite
// stage.
#ifndef TESSEL_ARITH_CANONICAL_SIMPLIFY_H_
#define TESSEL_ARITH_CANONICAL_SIMPLIFY_H_

#include <tessel/arith/analyzer.h>

#include <memory>

namespace tessel {
namespace arith {

class CanonicalSimplifier : public AnalyzerExtension {
 public:
  explicit CanonicalSimplifier(Analyzer* parent) : parent_(parent) {}

  const char* name() const final { return "canonical"; }
  Stage stage() const final { return Stage::kCanonical; }
  std::unique_ptr<AnalyzerExtension> Clone(Analyzer* parent) const final {
    return std::make_unique<CanonicalSimplifier>(parent);
  }
  // The canonical form of every integer subexpression of expr; expr itself (the same object) when
  // that is structurally what it already was, when the expression holds a call with side effects,
  // or when a sum grows past the term limit (kMaxTerms).
  PrimExpr Simplify(const PrimExpr& expr) final;

  // A sum with more terms than this makes the simplifier give up (no exponential blow-up).
  static constexpr int kMaxTerms = 64;

 private:
  Analyzer* parent_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_CANONICAL_SIMPLIFY_H_
