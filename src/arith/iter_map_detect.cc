// DetectIterMap and IterMapSimplify (iter_map.h): the predicate read as bounds on sums of the
// input iterators, the rewriting of every index (twice when padding is needed: the first pass
// collects what each mark must be padded to), and the level's check of the splits.
#include <tessel/ir/functor.h>

#include <algorithm>
#include <memory>

#include "iter_map_rewriter.h"

namespace tessel {
namespace arith {

using iter_map::IterMapRewriter;
using iter_map::UsesAnyVar;
using tvm::ffi::ObjectRef;
using tvm::ffi::Optional;

namespace {

// lower_bound <= iter < upper_bound (either bound optional).
struct IterConstraint {
  PrimExpr iter;
  Optional<PrimExpr> lower_bound;
  Optional<PrimExpr> upper_bound;
  size_t size = 0;
};

size_t NodeCount(const PrimExpr& e) {
  size_t n = 0;
  ir::PostOrderVisit(e, [&](const ObjectRef&) { ++n; });
  return n;
}

// The conjuncts of an `and` tree.
void Conjuncts(const PrimExpr& pred, std::vector<PrimExpr>* out) {
  if (const auto* a = pred.as<ir::AndNode>()) {
    Conjuncts(a->a, out);
    Conjuncts(a->b, out);
  } else {
    out->push_back(pred);
  }
}

// Reads pred as a conjunction of bounds: a bound on one input iterator narrows its range in
// input_iters, a bound on a sum becomes a constraint. False when pred has another form.
bool MatchBoundConstraints(const PrimExpr& pred, tvm::ffi::Map<Var, Range>* input_iters,
                           std::vector<IterConstraint>* result) {
  std::unordered_set<const ir::VarNode*> iter_vars;
  for (const auto& kv : *input_iters) iter_vars.insert(kv.first.get());
  std::vector<PrimExpr> parts;
  Conjuncts(pred, &parts);
  Analyzer simplifier;
  for (const PrimExpr& part : parts) {
    if (iter_map::IsOne(part)) continue;
    PrimExpr lhs, rhs;
    bool greater = false, equal = false;
    if (const auto* op = part.as<ir::LTNode>()) {
      lhs = op->a, rhs = op->b;
    } else if (const auto* op = part.as<ir::LENode>()) {
      lhs = op->a, rhs = op->b, equal = true;
    } else if (const auto* op = part.as<ir::GTNode>()) {
      lhs = op->a, rhs = op->b, greater = true;
    } else if (const auto* op = part.as<ir::GENode>()) {
      lhs = op->a, rhs = op->b, greater = true, equal = true;
    } else {
      return false;
    }
    DataType t = lhs.dtype();
    if (!(t.is_int() || t.is_uint()) || !(rhs.dtype().is_int() || rhs.dtype().is_uint())) {
      return false;
    }
    bool uses_l = UsesAnyVar(lhs, iter_vars), uses_r = UsesAnyVar(rhs, iter_vars);
    if (!uses_l && !uses_r) continue;  // says nothing about the iterators
    bool bound_at_left;
    if (!uses_l) {
      bound_at_left = true;
    } else if (!uses_r) {
      bound_at_left = false;
    } else {
      // Both sides use iterators: move the iterator-free terms of lhs - rhs to the right.
      bound_at_left = false;
      PrimExpr iter_part = ir::MakeConst(t, 0), bound_part = ir::MakeConst(t, 0);
      std::function<void(const PrimExpr&, bool)> extract = [&](const PrimExpr& e, bool positive) {
        if (const auto* add = e.as<ir::AddNode>()) {
          extract(add->a, positive);
          extract(add->b, positive);
        } else if (const auto* sub = e.as<ir::SubNode>()) {
          extract(sub->a, positive);
          extract(sub->b, !positive);
        } else if (UsesAnyVar(e, iter_vars)) {
          iter_part = positive ? iter_part + e : iter_part - e;
        } else {
          bound_part = positive ? bound_part - e : bound_part + e;
        }
      };
      extract(lhs - rhs, true);
      lhs = simplifier.Simplify(iter_part);
      rhs = simplifier.Simplify(bound_part);
    }
    Optional<PrimExpr> lower, upper;
    PrimExpr iter;
    if (greater) {
      if (bound_at_left) {
        upper = equal ? lhs + 1 : lhs;  // bound >(=) iter
        iter = rhs;
      } else {
        lower = equal ? rhs : rhs + 1;  // iter >(=) bound
        iter = lhs;
      }
    } else {
      if (bound_at_left) {
        lower = equal ? lhs : lhs + 1;  // bound <(=) iter
        iter = rhs;
      } else {
        upper = equal ? rhs + 1 : rhs;  // iter <(=) bound
        iter = lhs;
      }
    }
    if (auto var = iter.as<Var>(); var.has_value() && input_iters->count(*var)) {
      Range r = input_iters->at(*var);
      PrimExpr begin = r->min, end = r->min + r->extent;
      if (lower) begin = ir::max(begin, *lower);
      if (upper) end = ir::min(end, *upper);
      begin = simplifier.Simplify(begin);
      input_iters->Set(*var, Range(begin, simplifier.Simplify(end - begin)));
    } else {
      result->push_back(IterConstraint{iter, lower, upper, 0});
    }
  }
  return true;
}

bool IterRangeSanityCheck(const tvm::ffi::Map<Var, Range>& iters) {
  std::unordered_set<const ir::VarNode*> vars;
  for (const auto& kv : iters) vars.insert(kv.first.get());
  for (const auto& kv : iters) {
    if (UsesAnyVar(kv.second->min, vars) || UsesAnyVar(kv.second->extent, vars)) return false;
  }
  return true;
}

IterMapResult Detect(const tvm::ffi::Array<PrimExpr>& indices,
                     const tvm::ffi::Map<Var, Range>& input_iters, const PrimExpr& predicate,
                     IterMapLevel level, Analyzer* analyzer, bool simplify_trivial_iterators) {
  IterMapResult result;
  result.padding_predicate = ir::Bool(false);
  if (!IterRangeSanityCheck(input_iters)) {
    result.errors.push_back("invalid iterators: the range of one refers to another");
    return result;
  }
  tvm::ffi::Map<Var, Range> constrained = input_iters;
  std::vector<IterConstraint> constraints;
  if (!iter_map::IsOne(predicate) &&
      !MatchBoundConstraints(predicate, &constrained, &constraints)) {
    result.errors.push_back("could not read the predicate " + ir::AsText(predicate) +
                            " as bounds on the input iterators");
    return result;
  }
  for (IterConstraint& c : constraints) c.size = NodeCount(c.iter);
  // A sum's inner sums are constrained before it.
  std::stable_sort(
      constraints.begin(), constraints.end(),
      [](const IterConstraint& a, const IterConstraint& b) { return a.size < b.size; });
  for (const auto& kv : constrained) {
    if (!analyzer->MayBeNonEmpty(kv.second)) {
      result.errors.push_back("the range of " + std::string(kv.first->name_hint) + " is empty");
      return result;
    }
  }
  IterMapRewriter rewriter(analyzer, constrained, level, simplify_trivial_iterators,
                           &result.errors);
  for (const IterConstraint& c : constraints) {
    rewriter.RewriteIterConstraint(c.iter, c.lower_bound, c.upper_bound);
    if (!result.errors.empty()) return result;
  }
  if (!rewriter.CheckConstraints()) {
    result.errors.push_back("the predicate constrains overlapping sums of iterators");
    return result;
  }
  tvm::ffi::Array<IterSumExpr> rewritten;
  bool allow_padding = level != IterMapLevel::kBijective;
  if (allow_padding) {
    for (const PrimExpr& index : indices) {
      rewritten.push_back(rewriter.RewriteAndUpdatePadding(index));
      if (!result.errors.empty()) return result;
    }
  }
  if (!allow_padding || rewriter.requires_padding()) {
    rewritten.clear();
    for (const PrimExpr& index : indices) {
      rewritten.push_back(rewriter.Rewrite(index));
      if (!result.errors.empty()) return result;
    }
  }
  result.padding_predicate = rewriter.padding_predicate();
  if (!rewriter.CheckMapping(rewritten, level)) {
    result.errors.push_back(level == IterMapLevel::kBijective
                                ? "the indices do not form a bijective map of the iterators"
                                : "the indices are not independent");
    return result;
  }
  result.indices = rewritten;
  return result;
}

}  // namespace

IterMapResult DetectIterMap(const tvm::ffi::Array<PrimExpr>& indices,
                            const tvm::ffi::Map<Var, Range>& input_iters, const PrimExpr& predicate,
                            IterMapLevel level, Analyzer* analyzer,
                            bool simplify_trivial_iterators) {
  std::unique_ptr<Analyzer> own;
  if (!analyzer) {
    own = std::make_unique<Analyzer>();
    analyzer = own.get();
  }
  try {
    return Detect(indices, input_iters, predicate, level, analyzer, simplify_trivial_iterators);
  } catch (const tvm::ffi::Error& err) {
    // An analyzer question that fails (a constant division by zero while folding, a range the
    // analyzer refuses) is a refusal, not a crash.
    IterMapResult result;
    result.padding_predicate = ir::Bool(false);
    result.errors.push_back(std::string("iterator-map detection failed: ") + err.message());
    return result;
  }
}

tvm::ffi::Array<PrimExpr> IterMapSimplify(const tvm::ffi::Array<PrimExpr>& indices,
                                          const tvm::ffi::Map<Var, Range>& input_iters,
                                          const PrimExpr& predicate, IterMapLevel level,
                                          Analyzer* analyzer, bool simplify_trivial_iterators) {
  std::unique_ptr<Analyzer> own;
  if (!analyzer) {
    own = std::make_unique<Analyzer>();
    analyzer = own.get();
  }
  if (!IterRangeSanityCheck(input_iters)) return indices;
  IterMapResult res =
      DetectIterMap(indices, input_iters, predicate, level, analyzer, simplify_trivial_iterators);
  tvm::ffi::Array<IterSumExpr> rewritten = res.indices;
  if (rewritten.empty() && !iter_map::IsOne(predicate) && level != IterMapLevel::kBijective) {
    // The predicate may be what failed; the form without it is still a valid simplification.
    rewritten = DetectIterMap(indices, input_iters, ir::Bool(true), level, analyzer,
                              simplify_trivial_iterators)
                    .indices;
  }
  if (rewritten.empty()) return indices;
  tvm::ffi::Array<PrimExpr> out;
  for (const IterSumExpr& sum : rewritten) out.push_back(NormalizeIterMapToExpr(sum, analyzer));
  return out;
}

}  // namespace arith
}  // namespace tessel
