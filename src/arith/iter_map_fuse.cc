// Fusing: a sum of splits `x1 * c1 + ... + xn * cn` whose scales line up (each the product of the
// extents below it, times the smallest scale) becomes one mark `(x1 * s1 + ... + xn) * cn`; the
// same sum fuses to the same mark object wherever it occurs. Predicates on sums narrow the fused
// marks. At the end the splits of every mark are checked against the level (iter_map.h).
#include <algorithm>
#include <functional>

#include "iter_map_rewriter.h"

namespace tessel {
namespace arith {
namespace iter_map {

namespace {

// a * b: constants folded, symbolic products in canonical order so that equal products compare
// equal structurally.
PrimExpr MulNormalize(Analyzer* analyzer, const PrimExpr& a, const PrimExpr& b) {
  PrimExpr p = a * b;
  if (ir::AsConstInt(p)) return p;
  return analyzer->CanonicalSimplify(p);
}

// The factors of a product tree.
void Factors(const PrimExpr& e, std::vector<PrimExpr>* out) {
  if (const auto* m = e.as<ir::MulNode>()) {
    Factors(m->a, out);
    Factors(m->b, out);
  } else {
    out->push_back(e);
  }
}

}  // namespace

MarkWithOffset* IterMapRewriter::FindFused(const IterSumExpr& flattened) {
  for (auto& kv : sum_fuse_map_) {
    if (SumEqual(kv.first, flattened)) return &kv.second;
  }
  return nullptr;
}

IterSumExpr* IterMapRewriter::FindFlattened(const IterSumExpr& structured) {
  for (auto& kv : flattened_map_) {
    if (SumEqual(kv.first, structured)) return &kv.second;
  }
  return nullptr;
}

IterSumExpr IterMapRewriter::NormalizeToIterWithOffset(IterSumExpr expr) {
  if (expr->args.empty()) return expr;
  std::optional<IterSumExpr> fused = TryFuseIters(expr, level_, true);
  if (fused) return *fused;
  Error("could not fuse the iterators of " + ir::AsText(NormalizeIterMapToExpr(expr, analyzer_)) +
        " into one (their scales and extents do not line up)");
  return expr;
}

IterSumExpr IterMapRewriter::NormalizeToIterOnBoundExpr(IterSumExpr expr, Optional<PrimExpr> min,
                                                        Optional<PrimExpr> max) {
  PrimExpr base = expr->base;
  if (!IsZero(base)) {
    expr.CopyOnWrite()->base = ir::MakeConst(base.dtype(), 0);
    if (min) min = *min - base;
    if (max) max = *max - base;
  }
  std::optional<IterSumExpr> fused = TryFuseIters(expr, level_, false);
  if (!fused || (*fused)->args.size() != 1 || !IsOne((*fused)->args[0]->scale)) {
    Error("could not normalize the iterators of a predicate");
    return expr;
  }
  IterSplitExpr split = (*fused)->args[0];
  IterSumExpr structured = *split->source->source.as<IterSumExpr>();
  IterSumExpr* flattened_ptr = FindFlattened(structured);
  TVM_FFI_ICHECK(flattened_ptr) << "a fused mark without its flattened form";
  IterSumExpr flattened = *flattened_ptr;
  MarkWithOffset* entry = FindFused(flattened);
  TVM_FFI_ICHECK(entry) << "a flattened sum without its mark";
  IterMark mark = entry->mark;
  PrimExpr iter_min = entry->offset;
  PrimExpr iter_max = iter_min + mark->extent;
  PrimExpr min_delta = ir::MakeConst(iter_min.dtype(), 0);
  if (min) {
    PrimExpr new_min = analyzer_->Simplify(ir::max(*min, iter_min));
    min_delta = analyzer_->Simplify(new_min - iter_min);
    iter_min = new_min;
  }
  if (max) {
    // Prefer the predicate's bound when it is provably the tighter one (symbolic bounds).
    iter_max = analyzer_->CanProve(ir::le(*max, iter_max))
                   ? *max
                   : analyzer_->Simplify(ir::min(*max, iter_max));
  }
  if (!IsZero(min_delta)) {
    flattened_map_.erase(
        std::remove_if(flattened_map_.begin(), flattened_map_.end(),
                       [&](const auto& kv) { return SumEqual(kv.first, structured); }),
        flattened_map_.end());
    structured.CopyOnWrite()->base = structured->base - min_delta;
    flattened_map_.push_back({structured, flattened});
  }
  PrimExpr extent = analyzer_->Simplify(iter_max - iter_min);
  // A new mark object: the old one may be in use by indices rewritten before.
  IterMark new_mark(structured, extent);
  entry->mark = new_mark;
  entry->offset = iter_min;
  constrained_iters_flattened_.push_back(flattened);
  IterSumExprNode* n = expr.CopyOnWrite();
  n->args = {IterSplitExpr(new_mark)};
  n->base = base;
  return expr;
}

int IterMapRewriter::FindBaseIter(const IterSumExpr& expr, const std::vector<bool>& skip,
                                  const IterMark* match_source, int rbegin) {
  if (rbegin == -1) rbegin = static_cast<int>(expr->args.size()) - 1;
  int base_index = -1;
  int64_t min_scale = 0;
  for (int i = rbegin; i >= 0; --i) {
    if (skip[i]) continue;
    if (match_source && !match_source->same_as(expr->args[i]->source)) continue;
    if (auto c = ir::AsConstInt(expr->args[i]->scale)) {
      if (base_index == -1 || *c < min_scale) {
        min_scale = *c;
        base_index = i;
      } else if (*c == min_scale && IsOne(expr->args[i]->extent) &&
                 !IsOne(expr->args[base_index]->extent)) {
        base_index = i;  // ties: a trivial iterator first
      }
    }
  }
  if (base_index != -1) return base_index;
  // No constant scale: the one with the fewest factors is usually the smallest.
  size_t min_factors = 0;
  for (int i = rbegin; i >= 0; --i) {
    if (skip[i]) continue;
    if (match_source && !match_source->same_as(expr->args[i]->source)) continue;
    std::vector<PrimExpr> f;
    Factors(expr->args[i]->scale, &f);
    if (base_index == -1 || f.size() < min_factors) {
      min_factors = f.size();
      base_index = i;
    }
  }
  return base_index;
}

int IterMapRewriter::FindIterWithExactScale(const IterSumExpr& expr, const std::vector<bool>& skip,
                                            const PrimExpr& expected_scale,
                                            const IterMark* match_source, int rbegin,
                                            int first_unit_extent_pos) {
  if (rbegin == -1) rbegin = static_cast<int>(expr->args.size()) - 1;
  int matched = -1;
  for (int j = rbegin; j >= 0; --j) {
    if (skip[j]) continue;
    if (match_source && !match_source->same_as(expr->args[j]->source)) continue;
    if (analyzer_->CanProveEqual(expr->args[j]->scale, expected_scale)) {
      // An extent-1 split does not change the scale: it goes first.
      if (IsOne(expr->args[j]->extent)) return j;
      if (matched == -1) matched = j;
      if (j <= first_unit_extent_pos) return matched;
    }
  }
  return matched;
}

int IterMapRewriter::FindIterSmallerClosestToScale(const IterSumExpr& expr,
                                                   const std::vector<bool>& skip,
                                                   const PrimExpr& expected_scale,
                                                   PrimExpr* matched_scale) {
  int matched = -1;
  for (int j = static_cast<int>(expr->args.size()) - 1; j >= 0; --j) {
    if (skip[j]) continue;
    const PrimExpr& cur = expr->args[j]->scale;
    if (analyzer_->CanProveGreaterEqual(expected_scale - cur, 0) &&
        analyzer_->CanProveGreaterEqual(cur, 0)) {
      if (matched == -1 || analyzer_->CanProveLess(*matched_scale - cur, 0)) {
        matched = j;
        *matched_scale = cur;
      }
    }
  }
  return matched;
}

std::optional<IterSumExpr> IterMapRewriter::TryCombineSplitFromSameSource(IterSumExpr expr) {
  size_t n = expr->args.size();
  if (n <= 1) return std::nullopt;
  std::vector<int> hits(n, 0);
  bool overlap = false;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (expr->args[i]->source.same_as(expr->args[j]->source)) ++hits[i];
    }
    overlap = overlap || hits[i] > 1;
  }
  if (!overlap) return std::nullopt;
  int first_unit = static_cast<int>(n);
  for (size_t i = 0; i < n; ++i) {
    if (IsOne(expr->args[i]->extent)) {
      first_unit = static_cast<int>(i);
      break;
    }
  }
  std::vector<bool> visited(n, false);
  std::vector<IterSplitExpr> reversed;
  for (int rend = static_cast<int>(n) - 1; rend >= 0;) {
    if (visited[rend]) {
      --rend;
      continue;
    }
    if (hits[rend] == 1) {
      reversed.push_back(expr->args[rend]);
      visited[rend] = true;
      --rend;
      continue;
    }
    // (x // (c * s)) % m * (s * t) + (x // c) % s * t = (x // c) % (m * s) * t
    IterMark source = expr->args[rend]->source;
    int idx = FindBaseIter(expr, visited, &source, rend);
    TVM_FFI_ICHECK_NE(idx, -1);
    visited[idx] = true;
    IterSplitExpr rhs = expr->args[idx];
    while (true) {
      PrimExpr lhs_scale = MulNormalize(analyzer_, rhs->extent, rhs->scale);
      int m = FindIterWithExactScale(expr, visited, lhs_scale, &source, rend, first_unit);
      if (m == -1) break;
      const IterSplitExpr& lhs = expr->args[m];
      PrimExpr lhs_lower = MulNormalize(analyzer_, rhs->lower_factor, rhs->extent);
      if (!analyzer_->CanProveEqual(lhs->lower_factor, lhs_lower)) break;
      visited[m] = true;
      rhs.CopyOnWrite()->extent = MulNormalize(analyzer_, lhs->extent, rhs->extent);
    }
    reversed.push_back(rhs);
  }
  expr.CopyOnWrite()->args = Array<IterSplitExpr>(reversed.rbegin(), reversed.rend());
  return expr;
}

std::optional<IterSumExpr> IterMapRewriter::TryFuseIters(IterSumExpr expr, IterMapLevel level,
                                                         bool allow_early_skip) {
  if (auto combined = TryCombineSplitFromSameSource(expr)) {
    expr = *combined;
    if (expr->args.size() <= 1 && allow_early_skip) return expr;
  }
  DataType t = expr->dtype;
  std::vector<bool> visited(expr->args.size(), false);
  int base_index = FindBaseIter(expr, visited, nullptr);
  if (base_index == -1) return std::nullopt;
  PrimExpr base_scale = expr->args[base_index]->scale;
  // Only positive scales fuse (a negative one would make the fused mark run backwards, and its
  // extent arithmetic does not hold; the fuzzer found a negative extent).
  if (!analyzer_->CanProveGreaterEqual(base_scale, 1)) return std::nullopt;

  std::vector<IterSplitExpr> flattened_iters, grouped_iters;
  PrimExpr extra_base = ir::MakeConst(t, 0);
  PrimExpr tail_extent = ir::MakeConst(t, 0);
  PrimExpr expected_scale = base_scale;
  int first_unit = static_cast<int>(expr->args.size());
  for (size_t i = 0; i < expr->args.size(); ++i) {
    if (IsOne(expr->args[i]->extent)) {
      first_unit = static_cast<int>(i);
      break;
    }
  }
  for (size_t i = 0; i < expr->args.size();) {
    PrimExpr matched_scale;
    bool exact = false;
    int pos = i == 0
                  ? base_index
                  : FindIterWithExactScale(expr, visited, expected_scale, nullptr, -1, first_unit);
    if (pos != -1) {
      matched_scale = expected_scale;
      exact = true;
    } else if (level != IterMapLevel::kBijective && IsOne(base_scale)) {
      // Overlapping (surjective) fusion: the next scale is below the expected one.
      pos = FindIterSmallerClosestToScale(expr, visited, expected_scale, &matched_scale);
    }
    if (pos == -1) return std::nullopt;
    // The longest constrained sum that ends at this split (a predicate on part of the sum).
    std::optional<IterSumExpr> constraint;
    for (const IterSumExpr& c : constrained_iters_flattened_) {
      if (SplitEqual(expr->args[pos], c->args.back(), false) &&
          (!constraint || (*constraint)->args.size() < c->args.size())) {
        constraint = c;
      }
    }
    if (constraint) {
      for (auto it = (*constraint)->args.rbegin(); it != (*constraint)->args.rend(); ++it) {
        size_t k = 0;
        for (; k < expr->args.size(); ++k) {
          if (!visited[k] && SplitEqual(expr->args[k], *it, false) &&
              analyzer_->CanProveEqual((*it)->scale * matched_scale, expr->args[k]->scale)) {
            break;
          }
        }
        if (k == expr->args.size()) return std::nullopt;
        visited[k] = true;
        flattened_iters.push_back(expr->args[k]);
      }
      MarkWithOffset* matched = FindFused(*constraint);
      TVM_FFI_ICHECK(matched) << "a constrained sum without its mark";
      grouped_iters.emplace_back(matched->mark,
                                 analyzer_->Simplify(ir::floordiv(matched_scale, base_scale)));
      extra_base = extra_base + matched->offset * matched_scale;
      if (!exact) tail_extent = tail_extent + expected_scale - matched_scale;
      expected_scale = MulNormalize(analyzer_, matched->mark->extent, matched_scale);
      i += (*constraint)->args.size();
    } else {
      visited[pos] = true;
      IterSplitExpr arg = expr->args[pos];
      arg.CopyOnWrite()->scale = analyzer_->Simplify(ir::floordiv(arg->scale, base_scale));
      flattened_iters.push_back(arg);
      grouped_iters.push_back(arg);
      if (!exact) tail_extent = tail_extent + expected_scale - matched_scale;
      expected_scale = MulNormalize(analyzer_, expr->args[pos]->extent, matched_scale);
      ++i;
    }
  }
  IterSumExpr flattened(Array<IterSplitExpr>(flattened_iters.rbegin(), flattened_iters.rend()),
                        ir::MakeConst(t, 0));
  IterSumExpr structured(Array<IterSplitExpr>(grouped_iters.rbegin(), grouped_iters.rend()),
                         ir::MakeConst(t, 0));
  extra_base = analyzer_->Simplify(extra_base);
  if (MarkWithOffset* old = FindFused(flattened)) {
    if (!analyzer_->CanProveEqual(extra_base, old->offset * base_scale)) return std::nullopt;
    return IterSumExpr({IterSplitExpr(old->mark, base_scale)},
                       analyzer_->Simplify(expr->base + extra_base));
  }
  PrimExpr extent = analyzer_->Simplify(ir::floordiv(expected_scale, base_scale) + tail_extent);
  IterMark mark(structured, extent);
  sum_fuse_map_.push_back({flattened, MarkWithOffset{mark, extra_base}});
  flattened_map_.push_back({structured, flattened});
  return IterSumExpr({IterSplitExpr(mark, base_scale)},
                     analyzer_->Simplify(expr->base + extra_base));
}

size_t IterMapRewriter::SearchSkipLowerFactor(const std::vector<IterSplitExpr>& splits,
                                              const std::vector<bool>& used,
                                              const PrimExpr& expected) {
  size_t res = splits.size();
  for (size_t i = 0; i < splits.size(); ++i) {
    if (used[i]) continue;
    // Every remaining split must start at a multiple of what is covered so far.
    if (!CanProveDivisible(splits[i]->lower_factor, expected)) return splits.size();
    if (res == splits.size() ||
        CanProveDivisible(splits[res]->lower_factor, splits[i]->lower_factor)) {
      res = i;
    }
  }
  return res;
}

Array<IterSplitExpr> IterMapRewriter::TryNormalizeSplits(const IterMark& mark,
                                                         const std::vector<IterSplitExpr>& splits,
                                                         IterMapLevel level) {
  std::vector<bool> used(splits.size(), false);
  std::vector<IterSplitExpr> iters;
  PrimExpr expected = ir::MakeConst(mark->extent.dtype(), 1);
  for (size_t i = 0; i < splits.size(); ++i) {
    size_t j = 0;
    for (; j < splits.size(); ++j) {
      if (!used[j] && analyzer_->CanProveEqual(splits[j]->lower_factor, expected)) break;
    }
    if (j == splits.size()) {
      if (level == IterMapLevel::kBijective) {
        Error("the splits of an iterator leave a gap or overlap");
        return {};
      }
      j = SearchSkipLowerFactor(splits, used, expected);
      if (j == splits.size()) {
        Error("the splits of an iterator overlap");
        return {};
      }
    }
    used[j] = true;
    iters.push_back(splits[j]);
    expected = MulNormalize(analyzer_, splits[j]->lower_factor, splits[j]->extent);
  }
  const IterMark* origin = PaddedOrigin(mark);
  bool full = analyzer_->CanProveEqual(expected, mark->extent);
  bool divides = full || CanProveDivisible(mark->extent, expected);
  if (level == IterMapLevel::kBijective) {
    if (origin) {
      Error("a bijective mapping cannot pad an iterator");
      return {};
    }
    if (!full) {
      Error("the splits do not cover their iterator's whole range");
      return {};
    }
  } else if (!origin) {
    if (!divides) {
      Error("the splits' extents do not divide their iterator's extent");
      return {};
    }
  } else if (level == IterMapLevel::kSurjective) {
    const PrimExpr& before = (*origin)->extent;
    if (full) {
      if (splits.size() != 1) {
        Error("dependent splits of a padded iterator");
        return {};
      }
      if (analyzer_->CanProveEqual(splits[0]->extent, expected) &&
          !analyzer_->CanProve(ir::ge(before, expected))) {
        Error("a split of a padded iterator over its whole padded extent is not surjective");
        return {};
      }
    } else if (divides) {
      if (!analyzer_->CanProve(ir::ge(before, expected))) {
        Error("the extent before padding is less than the splits cover");
        return {};
      }
    } else {
      Error("the splits' extents do not divide their padded iterator's extent");
      return {};
    }
  }
  return Array<IterSplitExpr>(iters.rbegin(), iters.rend());
}

bool IterMapRewriter::CheckMapping(const Array<IterSumExpr>& bindings, IterMapLevel level) {
  // Every mark reached from the indices, and the splits of it that are used.
  std::vector<IterMark> marks;
  std::vector<std::vector<IterSplitExpr>> splits;
  auto index_of = [&](const IterMark& m) -> int {
    for (size_t i = 0; i < marks.size(); ++i) {
      if (marks[i].same_as(m)) return static_cast<int>(i);
    }
    return -1;
  };
  std::function<void(const IterMark&)> collect = [&](const IterMark& m) {
    if (index_of(m) != -1) return;
    marks.push_back(m);
    splits.emplace_back();
    if (auto sum = m->source.as<IterSumExpr>()) {
      for (const IterSplitExpr& s : (*sum)->args) {
        collect(s->source);
        splits[index_of(s->source)].push_back(s);
      }
    }
  };
  for (const IterSumExpr& sum : bindings) {
    for (const IterSplitExpr& s : sum->args) {
      collect(s->source);
      splits[index_of(s->source)].push_back(s);
    }
  }
  for (size_t i = 0; i < marks.size(); ++i) {
    if (TryNormalizeSplits(marks[i], splits[i], level).empty()) return false;
  }
  if (level == IterMapLevel::kBijective) {
    for (const IterMark& m : input_marks_) {
      if (index_of(m) == -1 && !IsOne(m->extent)) {
        Error("the input iterator " + ir::AsText(NormalizeIterMapToExpr(m, analyzer_)) +
              " is not used");
        return false;
      }
    }
  }
  return true;
}

bool IterMapRewriter::CheckConstraints() const {
  // Constrained sums (shortest first) must be nested or disjoint.
  for (size_t i = 0; i < constrained_iters_flattened_.size(); ++i) {
    for (size_t j = i + 1; j < constrained_iters_flattened_.size(); ++j) {
      int state = 0;  // 1: inclusion so far, -1: disjoint so far
      for (const IterSplitExpr& a : constrained_iters_flattened_[i]->args) {
        bool found = false;
        for (const IterSplitExpr& b : constrained_iters_flattened_[j]->args) {
          if (SplitEqual(a, b)) {
            found = true;
            break;
          }
        }
        if (state == 0) {
          state = found ? 1 : -1;
        } else if ((state == -1 && found) || (state == 1 && !found)) {
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace iter_map
}  // namespace arith
}  // namespace tessel
