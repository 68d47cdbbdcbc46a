// The iterator-map rewriter (private to src/arith/iter_map_*.cc): turns an index expression into
// an IterSumExpr over marks of the input iterators, fusing sums into marks and splitting marks
// at floordiv/floormod, and checks the splits of every mark at the end (iter_map.h).
//
// Split over files by concept: iter_map_rewrite.cc (the walk over + - * // %, padding),
// iter_map_fuse.cc (fusing sums into marks, predicates on sums, the split checks),
// iter_map_detect.cc (predicate parsing, DetectIterMap, IterMapSimplify), iter_map_expr.cc (the
// objects, NormalizeIterMapToExpr, the tvm-ffi globals).
#ifndef TESSEL_SRC_ARITH_ITER_MAP_REWRITER_H_
#define TESSEL_SRC_ARITH_ITER_MAP_REWRITER_H_

#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tessel {
namespace arith {
namespace iter_map {

using tvm::ffi::Array;
using tvm::ffi::Map;
using tvm::ffi::ObjectRef;
using tvm::ffi::Optional;

inline bool IsConst(const PrimExpr& e, int64_t v) {
  auto c = ir::AsConstInt(e);
  return c && *c == v;
}
inline bool IsOne(const PrimExpr& e) { return IsConst(e, 1); }
inline bool IsZero(const PrimExpr& e) { return IsConst(e, 0); }
// Structural equality of pure expressions (variables by identity).
bool ExprEqual(const PrimExpr& a, const PrimExpr& b);
// Whether e mentions a variable of `vars`.
bool UsesAnyVar(const PrimExpr& e, const std::unordered_set<const ir::VarNode*>& vars);
// The split of the same mark with the same lower_factor and extent (and scale, when asked).
bool SplitEqual(const IterSplitExpr& a, const IterSplitExpr& b, bool check_scale = true);
bool SumEqual(const IterSumExpr& a, const IterSumExpr& b);
IterSumExpr ToSum(const IterSplitExpr& split);

// The value of a subexpression while rewriting: an iterator sum, or an expression free of the
// input iterators.
struct Value {
  PrimExpr expr;    // set when free of the input iterators
  IterSumExpr sum;  // set otherwise
  bool is_iter() const { return sum.defined(); }
  IterSumExpr AsSum() const { return sum.defined() ? sum : IterSumExpr({}, expr); }
};

// A mark and the offset of the sum it stands for: flattened sum = mark + offset.
struct MarkWithOffset {
  IterMark mark;
  PrimExpr offset;
};

class IterMapRewriter {
 public:
  IterMapRewriter(Analyzer* analyzer, const Map<Var, Range>& input_iters, IterMapLevel level,
                  bool simplify_trivial_iterators, Array<tvm::ffi::String>* errors);

  // expr as one split (plus base), or an error logged.
  IterSumExpr Rewrite(const PrimExpr& expr);
  // The first pass when padding is allowed: records the padding each mark needs.
  IterSumExpr RewriteAndUpdatePadding(const PrimExpr& expr);
  // Registers `min <= expr < max` (either side optional) as the range of the sum expr.
  IterSumExpr RewriteIterConstraint(const PrimExpr& expr, const Optional<PrimExpr>& min,
                                    const Optional<PrimExpr>& max);
  // Whether the constrained sums are nested or disjoint (never partially overlapping).
  bool CheckConstraints() const;
  // The level's check of every mark's splits (iter_map.h).
  bool CheckMapping(const Array<IterSumExpr>& bindings, IterMapLevel level);

  PrimExpr padding_predicate() const { return padding_predicate_; }
  bool requires_padding() const { return requires_padding_; }

  // Records an error message (detection fails once any is recorded).
  void Error(const std::string& msg) { errors_.push_back(msg); }

 private:
  // ---- iter_map_rewrite.cc ----
  Value Visit(const PrimExpr& e);
  Value VisitAdd(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b, int sign);
  Value VisitMul(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b);
  Value VisitDivMod(const PrimExpr& e, const PrimExpr& a, const PrimExpr& b, bool is_div);
  // The dividend as a single split plus base (fusing it), or undefined with an error logged.
  IterSumExpr PreprocessDividend(const IterSumExpr& dividend, const PrimExpr& original);
  // (lhs + base) // rhs and (lhs + base) % rhs, or nullopt with an error logged.
  std::optional<Value> SplitFloorDiv(IterSplitExpr lhs, PrimExpr base, PrimExpr rhs);
  std::optional<Value> SplitFloorMod(IterSplitExpr lhs, PrimExpr base, PrimExpr rhs);
  // A split s' equal to `split + shift` whose extent is divisible by divisor (padding the mark
  // when allowed), and shift; or an undefined split with an error logged.
  std::pair<IterSplitExpr, PrimExpr> PadDividendToDivisor(IterSplitExpr split, PrimExpr base,
                                                          PrimExpr divisor);
  bool CanProveDivisible(const PrimExpr& lhs, const PrimExpr& rhs);
  // Whether e's exact value, over the input iterators' ranges, fits its dtype (always true for an
  // analyzer in assume_no_overflow mode).
  bool FitsDType(const PrimExpr& e);

  // ---- iter_map_fuse.cc ----
  IterSumExpr NormalizeToIterWithOffset(IterSumExpr expr);
  IterSumExpr NormalizeToIterOnBoundExpr(IterSumExpr expr, Optional<PrimExpr> min,
                                         Optional<PrimExpr> max);
  std::optional<IterSumExpr> TryFuseIters(IterSumExpr expr, IterMapLevel level,
                                          bool allow_early_skip);
  std::optional<IterSumExpr> TryCombineSplitFromSameSource(IterSumExpr expr);
  int FindBaseIter(const IterSumExpr& expr, const std::vector<bool>& skip,
                   const IterMark* match_source, int rbegin = -1);
  int FindIterWithExactScale(const IterSumExpr& expr, const std::vector<bool>& skip,
                             const PrimExpr& expected_scale, const IterMark* match_source,
                             int rbegin, int first_unit_extent_pos);
  int FindIterSmallerClosestToScale(const IterSumExpr& expr, const std::vector<bool>& skip,
                                    const PrimExpr& expected_scale, PrimExpr* matched_scale);
  Array<IterSplitExpr> TryNormalizeSplits(const IterMark& mark,
                                          const std::vector<IterSplitExpr>& splits,
                                          IterMapLevel level);
  size_t SearchSkipLowerFactor(const std::vector<IterSplitExpr>& splits,
                               const std::vector<bool>& used, const PrimExpr& expected);
  // Lookups in the fused-sum tables (linear: the tables hold a handful of sums).
  MarkWithOffset* FindFused(const IterSumExpr& flattened);
  IterSumExpr* FindFlattened(const IterSumExpr& structured);

  Analyzer* analyzer_;
  // A clone of analyzer_ with the input iterators bound (for the overflow checks).
  std::unique_ptr<Analyzer> bound_analyzer_;
  IterMapLevel level_;
  Array<tvm::ffi::String>& errors_;
  std::unordered_map<const ir::VarNode*, Value> var_map_;
  std::unordered_set<const ir::VarNode*> iter_vars_;
  std::vector<IterMark> input_marks_;

  // Fused sums: flattened form (splits of the original marks) -> its mark and offset, and the
  // structured form (the mark's source) -> flattened form.
  std::vector<std::pair<IterSumExpr, MarkWithOffset>> sum_fuse_map_;
  std::vector<std::pair<IterSumExpr, IterSumExpr>> flattened_map_;
  std::vector<IterSumExpr> constrained_iters_flattened_;

  // Padding (iter_map_rewrite.cc): per original mark, the padding all its splits share.
  struct PaddingInfo {
    PrimExpr padding_factor;
    PrimExpr left_pad;
    PrimExpr right_pad;
    IterMark padded;
  };
  std::vector<std::pair<IterMark, PaddingInfo>> padded_iter_map_;
  // padded mark -> original mark
  std::vector<std::pair<IterMark, IterMark>> padded_origin_map_;
  PaddingInfo& PaddingOf(const IterMark& mark);
  const IterMark* PaddedOrigin(const IterMark& padded) const;
  bool update_iterator_padding_ = false;
  PrimExpr padding_predicate_;
  bool requires_padding_ = false;
};

}  // namespace iter_map
}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_SRC_ARITH_ITER_MAP_REWRITER_H_
