// Constant integer bounds: for an integer expression, int64 [min_value, max_value] that contains
// every value it can take, given the variables' bindings and the active constraint facts.
//
// Soundness contract (checked by tests/cpp/arith/bound_fuzz_test.cc): integer +, -, *, shifts and
// narrowing casts wrap modulo 2^bits (ir/expr.h), so where the exact result of an operation may
// leave its dtype's range, the bound is the dtype's whole range; by default the bound never
// assumes the absence of overflow. Under Analyzer::SetAssumeNoOverflow(true) + - * / % of a
// signed 32/64-bit integer are mathematical: the bound is the exact interval, which may leave
// the dtype's range (the sentinels stand for anything beyond int64). Division and remainder by a divisor range that contains 0 are bounded over
// the non-zero divisors (a division by zero has no defined result to bound). A bound min > max
// means the facts contradict each other: the expression is unreachable.
//
// kNegInf / kPosInf are INT64_MIN / INT64_MAX: "no bound below / above" (for int64 they are also
// the dtype's own limits; uint64 values above INT64_MAX are reported as kPosInf).
#ifndef TESSEL_ARITH_CONST_INT_BOUND_H_
#define TESSEL_ARITH_CONST_INT_BOUND_H_

#include <tessel/arith/int_interval.h>
#include <tessel/ir/expr.h>

#include <functional>
#include <limits>
#include <memory>
#include <optional>

namespace tessel {
namespace arith {

using ir::DataType;
using ir::PrimExpr;
using ir::Range;
using ir::Var;

class ConstIntBoundNode : public tvm::ffi::Object {
 public:
  int64_t min_value;
  int64_t max_value;

  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.ConstIntBound", ConstIntBoundNode,
                                    tvm::ffi::Object);
};

class ConstIntBound : public tvm::ffi::ObjectRef {
 public:
  ConstIntBound(int64_t min_value, int64_t max_value);
  static constexpr int64_t kPosInf = ConstIntBoundNode::kPosInf;
  static constexpr int64_t kNegInf = ConstIntBoundNode::kNegInf;
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(ConstIntBound, tvm::ffi::ObjectRef,
                                                ConstIntBoundNode);
};

// The bound of an exact interval of values of dtype t, with the infinity sentinels.
ConstIntBound ToConstIntBound(const IntInterval& x);
// The exact values a bound of an expression of dtype t stands for (sentinels become t's limits).
IntInterval ToInterval(const ConstIntBound& b, DataType t);

class Analyzer;

// Owned by an Analyzer (which keeps it consistent with the other sub-analyzers); usable directly
// for bound queries and bindings.
class ConstIntBoundAnalyzer {
 public:
  ConstIntBound operator()(const PrimExpr& expr) const;
  // The exact interval (no sentinels) of a scalar or vector expression's values.
  IntInterval Eval(const PrimExpr& expr) const;
  // The same for a node held elsewhere: a cached answer costs no reference-count traffic (the
  // simplifiers ask this of nearly every node they look at).
  IntInterval Eval(const ir::PrimExprNode* expr) const;

  // var takes values in [min, min + extent); a Range whose end overflows is not well-formed.
  void Bind(const Var& var, const Range& range, bool allow_override = false);
  // var's values lie in info. Updating a variable that already has a different bound fails
  // (ValueError) unless allow_override, which replaces it.
  void Update(const Var& var, const ConstIntBound& info, bool allow_override = false);
  // Records the facts about variables that `constraint` implies (x < e, x >= e, x == e, and
  // conjunctions and negations of these); the returned function removes them again. Scopes must
  // be left in the reverse order of entry.
  std::function<void()> EnterConstraint(const PrimExpr& constraint);
  // A scoped fact var in [x.lo, x.hi], removed by the returned function.
  std::function<void()> EnterBound(const Var& var, const IntInterval& x);

  // Changes whenever a binding or a scope changes the bounds: a cache of answers derived from
  // them is valid while this stays the same.
  uint64_t generation() const;

  // A second opinion for `+ - *` nodes whose exact interval, computed from their operands'
  // bounds, leaves the dtype (so that the node might wrap): the refiner returns a sound interval
  // of the node's value (an extension that knows relational facts, arith/product_bounds.h), or
  // nothing. It is not asked inside a Let body, under assume_no_overflow, or while it is itself
  // running (bounds it asks for are plain ones). Its answers are cached like every other bound:
  // whoever changes what it knows must call Invalidate(). An empty function removes it.
  using Refiner = std::function<std::optional<IntInterval>(const ir::PrimExprNode*)>;
  void SetRefiner(Refiner refiner);
  // Starts a new generation: every cached bound (and modular set) is recomputed.
  void Invalidate();

  // Opaque state (defined in the .cc file).
  struct Impl;

 private:
  friend class Analyzer;
  explicit ConstIntBoundAnalyzer(Analyzer* parent);
  ~ConstIntBoundAnalyzer();
  // Analyzer::SetAssumeNoOverflow: bounds of signed 32/64-bit + - * / % are their exact
  // (mathematical) intervals instead of the dtype's whole range; starts a new generation.
  void SetAssumeNoOverflow(bool on);
  void CopyStateFrom(const ConstIntBoundAnalyzer& other);
  std::unique_ptr<Impl> impl_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_CONST_INT_BOUND_H_
