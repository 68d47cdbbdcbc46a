// Modular sets: an integer expression's values all lie in {coeff * k + base | k integer}.
// coeff == 0: the expression is the constant base. (1, 0): nothing is known. Otherwise coeff > 0
// and 0 <= base < coeff.
//
// Soundness under wrap-around: wrapping modulo 2^bits preserves residues modulo powers of two
// only, so where an operation may overflow its dtype (ConstIntBound says so), the set keeps only
// the power-of-two part of coeff.
#ifndef TESSEL_ARITH_MODULAR_SET_H_
#define TESSEL_ARITH_MODULAR_SET_H_

#include <tessel/arith/const_int_bound.h>

#include <cstdint>
#include <utility>

namespace tessel {
namespace arith {

class ModularSetNode : public tvm::ffi::Object {
 public:
  int64_t coeff;
  int64_t base;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.ModularSet", ModularSetNode, tvm::ffi::Object);
};

class ModularSet : public tvm::ffi::ObjectRef {
 public:
  // Normalizes: coeff := |coeff|, base := base mod coeff.
  ModularSet(int64_t coeff, int64_t base);
  static ModularSet Everything() { return ModularSet(1, 0); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(ModularSet, tvm::ffi::ObjectRef, ModularSetNode);
};

class Analyzer;

class ModularSetAnalyzer {
 public:
  ModularSet operator()(const PrimExpr& expr) const;
  // The same set as {coeff, base}, without making a ModularSet object (for per-node questions).
  std::pair<int64_t, int64_t> Eval(const PrimExpr& expr) const;
  // var's values lie in info; a different existing binding fails unless allow_override.
  void Update(const Var& var, const ModularSet& info, bool allow_override = false);
  // Records `x % c == k` (floormod or truncmod), `x == e`, and conjunctions of these; the returned
  // function removes them again.
  std::function<void()> EnterConstraint(const PrimExpr& constraint);
  // Whether any variable has a set of its own (from Update or a constraint scope).
  bool HasVarFacts() const;

  // Opaque state (defined in the .cc file).
  struct Impl;

 private:
  friend class Analyzer;
  explicit ModularSetAnalyzer(Analyzer* parent);
  ~ModularSetAnalyzer();
  void CopyStateFrom(const ModularSetAnalyzer& other);
  std::unique_ptr<Impl> impl_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_MODULAR_SET_H_
