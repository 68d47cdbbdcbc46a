// The iterator-map detector: whether index expressions over loop variables with known ranges
// [min, min + extent) are quasi-affine maps of those variables, and in which form.
//
// The form (after TVM's arith/iter_affine_map.h, whose semantics it follows):
//   IterMark(source, extent)          an iterator ranging over [0, extent); its source is an input
//                                     variable (minus its range's min) or an IterSumExpr of splits
//                                     of other marks (a fused iterator).
//   IterSplitExpr(mark, lower_factor, extent, scale)
//                                   = floormod(floordiv(mark, lower_factor), extent) * scale
//   IterSumExpr(args, base)         = sum(args) + base; base holds everything free of the input
//                                     iterators (constants, free variables, their products).
// "Fusion" is `x * 32 + y` with y in [0, 32): one mark of extent 32 * extent(x). "Splitting" is
// `(f // 32) % 8`: the split (f, lower_factor 32, extent 8).
//
// DetectIterMap(indices, input_iters, predicate, level) rewrites each index into one IterSumExpr
// of at most one split (an index that is a constant has none) and then checks the level:
//   kBijective   every split of every mark is used exactly once, together they cover the mark,
//                and every input iterator of extent > 1 is used: the indices enumerate a dense
//                space one-to-one.
//   kSurjective  splits of a mark do not overlap and their extents multiply to a divisor of the
//                mark's extent (skipping inner parts is allowed); non-dividing splits are padded
//                and padding_predicate says which points of the padded space are padding.
//   kNoCheck     only the rewriting.
// Predicates are conjunctions of bounds `lo <= e`, `e < hi` (also <=, >, >=) on sums of the input
// iterators: a bound on a single iterator narrows its range; a bound on a fused sum makes that sum
// one mark of the reduced extent (with an offset for a lower bound).
//
// Semantics. The detected form is a statement about the mathematical values of the indices. Under
// the IR's wrap-around semantics (ir/expr.h) it is given only where the analyzer shows that the
// dividend of every floordiv/floormod and every index fits its dtype over the iterators' ranges;
// an Analyzer in assume_no_overflow mode (docs/arith.md) skips that check, as TVM does, and is
// needed for most symbolic extents (e.g. `x // c, x % c` with x in [0, c * d)).
//
// Unsupported inputs (a product of two iterators, a division by an iterator, an iterator inside a
// min/max/select/load/cast, scales that do not line up, ...) give a message in `errors` and no
// indices; the detector never returns a form that is wrong.
#ifndef TESSEL_ARITH_ITER_MAP_H_
#define TESSEL_ARITH_ITER_MAP_H_

#include <tessel/arith/analyzer.h>
#include <tessel/ir/expr.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/string.h>

namespace tessel {
namespace arith {

class IterSumExpr;

// An iterator over [0, extent). source: a Var (possibly `var - min` as a PrimExpr) or an
// IterSumExpr. Marks are compared by identity: two splits split the same iterator exactly when
// they hold the same mark object.
class IterMarkNode : public tvm::ffi::Object {
 public:
  tvm::ffi::ObjectRef source;
  PrimExpr extent;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindDAGNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.IterMark", IterMarkNode, tvm::ffi::Object);
};
class IterMark : public tvm::ffi::ObjectRef {
 public:
  IterMark(tvm::ffi::ObjectRef source, PrimExpr extent);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(IterMark, tvm::ffi::ObjectRef, IterMarkNode);
};

// floormod(floordiv(source, lower_factor), extent) * scale.
class IterSplitExprNode : public tvm::ffi::Object {
 public:
  IterMark source;
  PrimExpr lower_factor;
  PrimExpr extent;
  PrimExpr scale;
  DataType dtype;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.IterSplitExpr", IterSplitExprNode,
                                    tvm::ffi::Object);
};
class IterSplitExpr : public tvm::ffi::ObjectRef {
 public:
  // The whole mark: lower_factor 1, extent the mark's, scale 1 (or `scale`).
  explicit IterSplitExpr(IterMark source);
  IterSplitExpr(IterMark source, PrimExpr scale);
  IterSplitExpr(IterMark source, PrimExpr lower_factor, PrimExpr extent, PrimExpr scale);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(IterSplitExpr, tvm::ffi::ObjectRef, IterSplitExprNode);
  IterSplitExprNode* CopyOnWrite();
};

// sum(args) + base.
class IterSumExprNode : public tvm::ffi::Object {
 public:
  tvm::ffi::Array<IterSplitExpr> args;
  PrimExpr base;
  DataType dtype;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.arith.IterSumExpr", IterSumExprNode, tvm::ffi::Object);
};
class IterSumExpr : public tvm::ffi::ObjectRef {
 public:
  IterSumExpr(tvm::ffi::Array<IterSplitExpr> args, PrimExpr base);
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(IterSumExpr, tvm::ffi::ObjectRef, IterSumExprNode);
  IterSumExprNode* CopyOnWrite();
};

enum class IterMapLevel : int { kBijective = 0, kSurjective = 1, kNoCheck = 3 };

struct IterMapResult {
  // One IterSumExpr per index when detection succeeded; empty otherwise.
  tvm::ffi::Array<IterSumExpr> indices;
  // Why detection failed (empty on success).
  tvm::ffi::Array<tvm::ffi::String> errors;
  // True exactly at the points of the (padded) index space that the input iterators do not
  // reach; `false` when nothing was padded. In terms of the input iterators.
  PrimExpr padding_predicate;
  bool ok() const { return errors.empty() && !indices.empty(); }
};

// analyzer: consulted for symbolic divisibility and bounds (facts and bindings are used, never
// changed); null uses a fresh default (wrap-around) one. simplify_trivial_iterators: an input
// iterator of extent 1 becomes the constant min (TVM's default).
IterMapResult DetectIterMap(const tvm::ffi::Array<PrimExpr>& indices,
                            const tvm::ffi::Map<Var, Range>& input_iters, const PrimExpr& predicate,
                            IterMapLevel level, Analyzer* analyzer = nullptr,
                            bool simplify_trivial_iterators = true);

// The indices rewritten from their detected form in floordiv/floormod/mul/add form (splits of a
// whole iterator written as the iterator, a fused mark as its sum); the indices unchanged where
// detection fails. A failing predicate is retried without it (below kBijective), as in TVM.
tvm::ffi::Array<PrimExpr> IterMapSimplify(const tvm::ffi::Array<PrimExpr>& indices,
                                          const tvm::ffi::Map<Var, Range>& input_iters,
                                          const PrimExpr& predicate, IterMapLevel level,
                                          Analyzer* analyzer = nullptr,
                                          bool simplify_trivial_iterators = true);

// An IterSumExpr, IterSplitExpr or IterMark (its source) as an ordinary expression, equal to it
// for every value of the iterators in their ranges; a PrimExpr is returned as it is.
PrimExpr NormalizeIterMapToExpr(const tvm::ffi::ObjectRef& iter_expr, Analyzer* analyzer = nullptr);

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_ITER_MAP_H_
