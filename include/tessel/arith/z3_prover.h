// arith::Z3Prover: the analyzer's last resort. A default extension (stage kProver, name "z3"), so
// every Analyzer owns one; the facade asks it only after every cheap method failed, at every
// proof strength.
//
// A query translates the bindings, the scoped facts, the bounds the analyzer knows for each
// variable and the negated condition into Z3 integer arithmetic (docs/arith.md, "The Z3 prover"
// gives the exact model of wrap-around, division, shifts and bit operations) and asks Z3 whether
// that is unsatisfiable. Z3 runs under a deterministic resource limit (rlimit), never a clock;
// verdicts are cached under an exact structural key. Z3 types stay inside src/arith/z3_prover.cc:
// a build without Z3 (TESSEL_USE_Z3=OFF) has the same class, and every query answers kUnknown.
#ifndef TESSEL_ARITH_Z3_PROVER_H_
#define TESSEL_ARITH_Z3_PROVER_H_

#include <tessel/arith/analyzer.h>
#include <tessel/arith/int_interval.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace arith {

struct Z3Stats {
  int64_t queries = 0;         // questions asked of the prover (cache hits included)
  int64_t cache_hits = 0;      // answered from the verdict cache
  int64_t proved = 0;          // Z3 answered unsat (cache hits not counted)
  int64_t refuted = 0;         // Z3 found a counterexample
  int64_t unknown = 0;         // rlimit spent, a Z3 exception, an inexact model, or no Z3
  int64_t resource_limit = 0;  // those of `unknown` where Z3 stopped at the rlimit
  double seconds = 0;          // wall time inside the prover (translation + Z3), for reports only
  // TryProve calls answered kUnknown without Z3 (not counted in queries): conditions out of its
  // reach once the cheap methods failed (a load; a linear comparison over interval-only
  // variables; a bool variable nothing is known about).
  int64_t skipped = 0;
  // TryProve calls answered kDisproved without Z3 (not counted in queries) because a candidate
  // point, evaluated exactly, satisfies the bindings and facts and falsifies the condition.
  int64_t refuted_cheaply = 0;
};

// A counterexample: a value (exact, of the variable's dtype) for each variable of the query and
// facts, in order of first appearance (the query's first).
using Z3Counterexample = std::vector<std::pair<Var, i128>>;

class Z3Prover : public AnalyzerExtension {
 public:
  // Resource units per query: enough for the non-linear and bit-vector facts of the tests and of
  // bench/arith/z3_corpus.txt (each proved there needs less), small enough that a query that
  // cannot be decided gives up in about 2 ms (docs/performance.md, "The Z3 prover").
  static constexpr int64_t kDefaultRLimit = 2000;

  explicit Z3Prover(Analyzer* parent);
  ~Z3Prover() override;

  // Whether this build has Z3 (TESSEL_USE_Z3 not OFF and Z3 found).
  static bool Available();

  const char* name() const final { return "z3"; }
  Stage stage() const final { return Stage::kProver; }
  std::unique_ptr<AnalyzerExtension> Clone(Analyzer* parent) const final;
  void OnBind(const Var& var, const tvm::ffi::Optional<Range>& range,
              const tvm::ffi::Optional<PrimExpr>& value) final;
  std::function<void()> EnterConstraint(const PrimExpr& constraint) final;
  // kProved (unsat), kDisproved (a counterexample that needs no unconstrained value), else
  // kUnknown.
  ProofResult TryProve(const PrimExpr& cond, ProofStrength strength) final;

  // The resource limit of each later query (> 0).
  void set_rlimit(int64_t rlimit);
  int64_t rlimit() const;

  // The counterexample to cond under the current bindings and facts, when Z3 refutes it; each
  // value is the smallest in magnitude that still refutes, variable by variable in order.
  std::optional<Z3Counterexample> Counterexample(const PrimExpr& cond);
  // A self-contained SMT-LIB2 script: declarations, bounds, bindings, facts and the negated
  // condition, then (check-sat); unsat means cond holds. ValueError in a build without Z3.
  std::string GetSMTLIB2(const PrimExpr& cond);

  Z3Stats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The analyzer's Z3 prover (its extension named "z3"), or null if it has none.
Z3Prover* GetZ3Prover(const Analyzer& analyzer);

}  // namespace arith
}  // namespace tessel

#endif  // TESSEL_ARITH_Z3_PROVER_H_
