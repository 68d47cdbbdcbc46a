// Integer sets: intervals [min_value, max_value] whose ends are expressions (over variables that
// are not being ranged over) or infinite, and EvalSet, which bounds an expression while some of
// its variables range over given domains (loop ranges, typically).
//
// Meaning: for every assignment of the domain variables to values in their domains (and any
// values of the other variables that satisfy the analyzer's facts), min_value <= e <= max_value.
// Soundness under wrap-around: an interval is only derived through an operation when the
// ConstIntBound of that operation shows it cannot overflow; otherwise the result is Everything.
// Domains are assumed non-empty and well-formed (min + extent does not overflow).
#ifndef TESSEL_ARITH_INT_SET_H_
#define TESSEL_ARITH_INT_SET_H_

#include <tessel/arith/const_int_bound.h>

namespace tessel {
namespace arith {

class IntSetNode : public tvm::ffi::Object {
 public:
  // None: unbounded on that side.
  tvm::ffi::Optional<PrimExpr> min_value;
  tvm::ffi::Optional<PrimExpr> max_value;

  bool IsEverything() const { return !min_value.has_value() && !max_value.has_value(); }
  bool HasLowerBound() const { return min_value.has_value(); }
  bool HasUpperBound() const { return max_value.has_value(); }
  // Both ends are the very same expression.
  bool IsSinglePoint() const;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.IntSet", IntSetNode, tvm::ffi::Object);
};

class IntSet : public tvm::ffi::ObjectRef {
 public:
  IntSet(tvm::ffi::Optional<PrimExpr> min_value, tvm::ffi::Optional<PrimExpr> max_value);
  static IntSet Everything();
  static IntSet SinglePoint(PrimExpr value);
  static IntSet Interval(PrimExpr min_value, PrimExpr max_value);
  // [min, min + extent - 1].
  static IntSet FromRange(const Range& range);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(IntSet, tvm::ffi::ObjectRef, IntSetNode);
};

class Analyzer;

class IntSetAnalyzer {
 public:
  IntSet operator()(const PrimExpr& expr, const tvm::ffi::Map<Var, IntSet>& dom_map) const;
  IntSet operator()(const PrimExpr& expr, const tvm::ffi::Map<Var, Range>& dom_map) const;

 private:
  friend class Analyzer;
  explicit IntSetAnalyzer(Analyzer* parent) : parent_(parent) {}
  Analyzer* parent_;
};

// EvalSet with a fresh Analyzer (no facts besides the domains).
IntSet EvalSet(const PrimExpr& expr, const tvm::ffi::Map<Var, IntSet>& dom_map);
IntSet EvalSet(const PrimExpr& expr, const tvm::ffi::Map<Var, Range>& dom_map);

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_INT_SET_H_
