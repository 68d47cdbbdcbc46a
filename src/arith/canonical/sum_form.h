// The sum-of-products representation behind the canonical simplifier, valid for one Simplify
// call: interned atoms, sums of terms over them, their deterministic order, their exact bounds, and
// the conversion back to IR.
//
// Meaning of a Sum of dtype t: its value modulo 2^bits(t) (the ring value), which equals the value
// of the expression it came from. A coefficient or constant is stored as its representative in the
// signed range of bits(t) (for unsigned types too: 255 of uint8 is stored as -1). The sum is
// *exact* when the interval of sum coeff * terms + constant over the mathematical integers fits in
// t: then the expression's value is that mathematical value, and identities about the value itself
// (division, remainder, bounds) apply.
//
// Atoms have actual values (what the IR computes): a variable, an opaque expression (a load, a
// call, a min, a division by a non-constant ...), or a split floordiv(floormod(A, upper), lower) of
// the actual value of a dividend sum A (upper 0 means no floormod; lower divides upper).
#ifndef TESSEL_SRC_ARITH_CANONICAL_SUM_FORM_H_
#define TESSEL_SRC_ARITH_CANONICAL_SUM_FORM_H_

#include <tessel/arith/analyzer.h>
#include <tessel/arith/int_interval.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "support/small_vector.h"

namespace tessel {
namespace arith {
namespace canonical {

// Thrown when a sum grows past CanonicalSimplifier::kMaxTerms, or a product past
// AtomList::kMax atoms; the simplifier then gives up (returns its input).
struct TooManyTerms {};
// Thrown under Analyzer::assume_no_overflow when a coefficient or constant of a sum of a
// NoOverflowDType leaves the dtype (see Context::Rep); the simplifier then gives up too.
struct Unrepresentable {};

// A term's atom ids, in ascending atom order (repeated ids are powers). Fixed storage keeps a
// Term trivially copyable: sums are built and copied a few times per node.
class AtomList {
 public:
  static constexpr int kMax = 6;
  using value_type = int;
  AtomList() = default;
  AtomList(std::initializer_list<int> ids) {
    for (int id : ids) push_back(id);
  }
  size_t size() const { return n_; }
  const int* begin() const { return ids_; }
  const int* end() const { return ids_ + n_; }
  int operator[](size_t i) const { return ids_[i]; }
  void push_back(int id) {
    if (n_ == kMax) throw TooManyTerms{};
    ids_[n_++] = id;
  }
  friend bool operator==(const AtomList& a, const AtomList& b) {
    if (a.n_ != b.n_) return false;
    for (int i = 0; i < a.n_; ++i) {
      if (a.ids_[i] != b.ids_[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const AtomList& a, const AtomList& b) { return !(a == b); }

 private:
  int ids_[kMax];
  uint8_t n_ = 0;
};

struct Term {
  int64_t coeff;
  AtomList atoms;
};

struct Sum {
  DataType dtype;
  // Ascending term order; no zero coefficient, no two terms with the same atoms.
  support::SmallVector<Term, 3> terms;
  int64_t constant = 0;

  bool is_const() const { return terms.empty(); }
};

struct Atom {
  enum class Kind : uint8_t { kVar = 0, kExpr = 1, kSplit = 2 };
  Kind kind;
  DataType dtype;
  // kVar / kExpr: the expression (its integer children already canonical).
  PrimExpr expr;
  // kExpr: false when it holds a call with side effects (never merged with another occurrence).
  bool pure = true;
  // kSplit: dividend id (see Context::Dividend), lower >= 1, upper 0 (none) or a multiple of lower.
  int dividend = -1;
  int64_t lower = 1;
  int64_t upper = 0;
  // Lazily computed: the bound of the atom's actual value, and its IR.
  std::optional<IntInterval> bound;
  PrimExpr ir;
};

// The signed representative of v modulo 2^bits.
int64_t Wrap(i128 v, int bits);

class Context {
 public:
  explicit Context(Analyzer* analyzer) : analyzer_(analyzer) {}

  Analyzer* analyzer() const { return analyzer_; }

  // Atom ids. Pure atoms are interned: structurally equal expressions get the same id.
  int VarAtom(const ir::VarNode* var);
  int ExprAtom(const PrimExpr& expr, bool pure);
  // floordiv(floormod(actual value of dividend, upper), lower); upper 0 means none.
  int SplitAtom(const Sum& dividend, int64_t lower, int64_t upper);
  const Atom& atom(int id) const { return atoms_[id]; }
  const Sum& dividend(int id) const { return dividends_[id]; }

  // Whether sums of dtype t stand for their mathematical value whatever their bound: the analyzer
  // assumes that t's arithmetic does not overflow.
  bool Mathematical(DataType t) const {
    return analyzer_->assume_no_overflow() && NoOverflowDType(t);
  }
  // v's representative in t, Wrap(v, t.bits()). For a Mathematical dtype a representative other
  // than v itself would change the sum's mathematical value by a multiple of 2^bits (`x + 2^31`
  // of int32 would read as `x - 2^31`), so a v outside t throws Unrepresentable instead.
  int64_t Rep(i128 v, DataType t) const {
    if (Mathematical(t) && !FitsIn(IntInterval{v, v}, t)) throw Unrepresentable{};
    return Wrap(v, t.bits());
  }

  // Sum builders (Constant and OfAtom: value and coeff fit in t wherever a Mathematical sum is
  // built).
  static Sum Constant(DataType t, i128 value);
  static Sum OfAtom(DataType t, int atom, int64_t coeff = 1);
  // acc + scale * other (scale is a ring element).
  void AddTo(Sum* acc, const Sum& other, i128 scale);
  void AddTerm(Sum* acc, Term term);
  Sum Scale(const Sum& s, i128 scale);
  // a * b, distributed when one side is a constant or a monomial; else nullopt.
  std::optional<Sum> Multiply(const Sum& a, const Sum& b);

  // Exact interval of an atom's actual value, of a term's and a sum's mathematical value.
  IntInterval AtomBound(int id);
  IntInterval TermBound(const Term& term);
  IntInterval Bound(const Sum& s);
  // For s the sum of an input expression (Canon's result) or a sum that Fits: the sum's exact
  // value fits in its dtype (so it is the expression's value), or the analyzer assumes no
  // overflow for its dtype (the mathematical value is the value by assumption: each input
  // operation is exact, and Rep keeps every coefficient and constant unreduced).
  bool Exact(const Sum& s) {
    return FitsOrAssumed(Bound(s), s.dtype, analyzer_->assume_no_overflow());
  }
  // The sum's exact value fits in its dtype. For a sum that a rule derives (the remainder part of
  // a dividend, ...) this is what exactness means in either mode: the assumption covers the
  // input's operations only, and such a sum is none of them.
  bool Fits(const Sum& s) { return FitsIn(Bound(s), s.dtype); }
  // The interval of the actual value of an expression whose canonical form is s.
  IntInterval ActualBound(const Sum& s);

  // Total deterministic orders (negative, 0, positive).
  int CompareAtoms(int a, int b);
  int CompareTerms(const Term& a, const Term& b);
  int CompareSums(const Sum& a, const Sum& b);
  bool SameSum(const Sum& a, const Sum& b) const;

  PrimExpr ToExpr(const Sum& s);
  PrimExpr AtomExpr(int id);
  // e itself when ToExpr(s) would be structurally equal to it (decided without building: most
  // expressions the simplifier sees are already in canonical form), else ToExpr(s).
  PrimExpr ToExprOr(const Sum& s, const PrimExpr& e);

 private:
  int CompareExpr(const PrimExpr& a, const PrimExpr& b);
  int CompareVars(const ir::VarNode* a, const ir::VarNode* b);
  int VarOrder(const ir::VarNode* v);
  PrimExpr TermExpr(const Term& term, int64_t magnitude);
  bool MatchesTerm(const Term& term, int64_t multiplier, ir::DataType t, const ir::PrimExprNode* e);
  bool MatchesAtom(int id, const ir::PrimExprNode* e);
  // How ToExpr spells a sum: an initial operand, then operands added or subtracted in order. An
  // operand is a term times a multiplier, or (term < 0) a constant. ToExpr builds it, Matches
  // compares against it, so the two cannot disagree.
  struct Step {
    enum Op : uint8_t { kInit, kAdd, kSub } op;
    int term;
    int64_t multiplier;
    i128 constant;
  };
  using Plan = support::SmallVector<Step, 8>;
  Plan Spell(const Sum& s) const;
  PrimExpr Build(const Sum& s, const Plan& plan);
  bool Matches(const Sum& s, const ir::PrimExprNode* e);
  bool Matches(const Sum& s, const Plan& plan, const ir::PrimExprNode* e);
  int Dividend(const Sum& s);

  Analyzer* analyzer_;
  // Inline room for a typical query's atoms and dividends: a Context lives for one call, and
  // two heap blocks per call were measurable.
  support::SmallVector<Atom, 8> atoms_;
  support::SmallVector<Sum, 4> dividends_;
  // Variables in the order the orders first met them (ties of equal names).
  support::SmallVector<const ir::VarNode*, 8> var_order_;
};

}  // namespace canonical
}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_CANONICAL_SUM_FORM_H_
