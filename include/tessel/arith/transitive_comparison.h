// Transitive comparisons: known facts `a < b`, `b <= c + 2`, `x == y` combined to decide `a < c`.
//
// Every fact is kept as a difference bound between two terms, `val(u) - val(v) <= w` over the
// mathematical integers, where a term is an integer expression (compared structurally) and
// val(t) is the value it computes in its own dtype (after any wrap-around). Chains of such bounds
// add up exactly, so a query `a < c` is proved when the shortest path from a to c over the known
// bounds (plus every term's constant bound against the constant 0) is at most -1; it is
// disproved when the opposite comparison is implied. A negative cycle means the facts contradict
// each other: the code is unreachable and every comparison is answered as proved.
//
// Soundness under wrap-around: a side `t + c` (or `t - c`, `c + t`) is read as the term t with
// offset c only when the constant bound of t shows that t + c does not overflow the dtype, so
// that val(t + c) == val(t) + c; otherwise the whole side is one opaque term. From `x + 1 < y`
// on an unbounded int8 x nothing about x vs y follows (x = 127 makes x + 1 == -128). Such a check
// uses the bounds known when the fact is recorded; a constraint-scope fact lives no longer than
// those bounds' scopes, and a binding recorded inside a scope that needed a bound for its
// offsets is dropped when that scope ends.
//
// A fact `a != b` is kept too: it does not chain, but sharpens a derived bound that lands
// exactly on it (`a <= b` and `a != b` give `a < b`) and rules out `a == b`.
//
// Sources of facts: constraint scopes (comparisons, `not` of comparisons, conjunctions), value
// bindings (`var == value`) and range bindings (`min <= var < min + extent`, the end read exactly
// only when min or extent is constant or `min + extent` provably does not overflow).
//
// Work is bounded: at most kMaxTerms terms and kMaxFacts facts are kept; past that, the facts of
// the oldest bindings are forgotten, and then new facts are ignored, which only loses precision.
// A query runs Bellman-Ford over them.
#ifndef TESSEL_ARITH_TRANSITIVE_COMPARISON_H_
#define TESSEL_ARITH_TRANSITIVE_COMPARISON_H_

#include <tessel/arith/analyzer.h>

#include <memory>
#include <unordered_map>
#include <vector>

namespace tessel {
namespace arith {

class TransitiveComparisonAnalyzer : public AnalyzerExtension {
 public:
  static constexpr size_t kMaxTerms = 96;
  static constexpr size_t kMaxFacts = 256;

  explicit TransitiveComparisonAnalyzer(Analyzer* parent);
  ~TransitiveComparisonAnalyzer() override;

  const char* name() const override { return "transitive"; }
  Stage stage() const override { return Stage::kTransitive; }
  std::unique_ptr<AnalyzerExtension> Clone(Analyzer* parent) const override;
  void OnBind(const Var& var, const tvm::ffi::Optional<Range>& range,
              const tvm::ffi::Optional<PrimExpr>& value) override;
  std::function<void()> EnterConstraint(const PrimExpr& constraint) override;
  // Comparisons of scalar integers (and Not/And/Or of them): kProved, kDisproved or kUnknown.
  ProofResult TryProve(const PrimExpr& cond, ProofStrength strength) override;
  // Replaces each integer comparison that the facts decide by true or false.
  PrimExpr Simplify(const PrimExpr& expr) override;

  // `val(lhs) - val(rhs) <= offset`; an undefined term stands for the constant 0. Public for
  // tests and debugging (see facts()).
  struct Fact {
    PrimExpr lhs;
    PrimExpr rhs;
    __int128 offset;
    // The variable whose binding produced this fact (undefined for constraint facts) and the
    // generation of that binding: a fact of an overridden binding is ignored.
    Var owner;
    uint64_t generation = 0;
    // `val(lhs) - val(rhs) != offset` instead (from `a != b`, `not (a == b)`).
    bool not_equal = false;
  };
  // Every fact currently in force (permanent, then scoped, outermost first).
  std::vector<Fact> facts() const;

 private:
  struct Graph;
  // Adds the facts that `cond` implies (true when negate is false) to out.
  void Collect(const PrimExpr& cond, bool negate, std::vector<Fact>* out, bool* used_bounds);
  ProofResult Decide(const PrimExpr& cond);
  ProofResult DecideCompare(const PrimExpr& cond);
  const Graph& GetGraph();
  // Whether one more fact fits, after dropping stale or old permanent binding facts if needed.
  bool MakeRoom();

  Analyzer* parent_;
  // Facts that never expire: bindings made outside constraint scopes (and, in a clone, every
  // fact of the original).
  std::vector<Fact> permanent_;
  // Facts of the open constraint scopes, in order; each scope's undo truncates it.
  std::vector<Fact> scoped_;
  size_t open_scopes_ = 0;
  // The current generation of each bound variable's binding.
  std::unordered_map<const ir::VarNode*, std::pair<Var, uint64_t>> generation_;
  uint64_t next_generation_ = 1;
  // The interned terms and edges of the facts in force, rebuilt when the facts change.
  std::unique_ptr<Graph> graph_;
};

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_TRANSITIVE_COMPARISON_H_
