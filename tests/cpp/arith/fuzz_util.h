// Small helpers shared by the analyzer's fuzz and rule-check tests.
#ifndef TESSEL_TESTS_CPP_ARITH_FUZZ_UTIL_H_
#define TESSEL_TESTS_CPP_ARITH_FUZZ_UTIL_H_

#include <tessel/arith/analyzer.h>
#include <tessel/ir/printer.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "eval.h"

namespace tessel {
namespace testing {

// Decimal text of a 128-bit value (iostreams do not print __int128).
inline std::string Str(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

// An integer environment variable (TESSEL_FUZZ_ITERS, TESSEL_FUZZ_SEED), or dflt when unset.
inline int64_t EnvInt(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoll(v) : dflt;
}

// The fuzzers' share of TESSEL_FUZZ_ITERS (default dflt) for one overflow mode: each fuzzer runs
// half of its iterations in the default mode and half in assume_no_overflow mode.
inline int64_t ItersPerMode(int64_t dflt, bool assume_no_overflow) {
  int64_t total = EnvInt("TESSEL_FUZZ_ITERS", dflt);
  return assume_no_overflow ? total - total / 2 : total / 2;
}

// The evaluator semantics that the analyzer's answers hold under in the given overflow mode.
inline Semantics SemanticsOf(bool assume_no_overflow) {
  return assume_no_overflow ? Semantics::kAssumeNoOverflow : Semantics::kWrap;
}

// The value at env of e, an input of the analyzer (the expression asked about, a fact, a
// condition to prove), under semantics s; nullopt where it is undefined, and also where the point
// lies outside the mode's domain (an int32/int64 operation of e leaves its dtype), in which case
// *outside is set.
inline std::optional<i128> EvalInput(const ir::PrimExpr& e, const Env& env, Semantics s,
                                     bool* outside) {
  ExactEvaluator ev(env, s);
  std::optional<i128> v = ev(e);
  if (ev.out_of_domain()) {
    *outside = true;
    return std::nullopt;
  }
  return v;
}

// For the report of a proof that fails at env in assume_no_overflow mode: a note naming a
// simplified form of cond (the rewrite stage's, the canonical stage's, Simplify's) that has an
// int32/int64 operation leaving its dtype there, although cond has none: the mode's assumption
// then covered an operation that a simplifier made, not one of the input.
inline std::string SimplifiedOverflowNote(arith::Analyzer* analyzer, const ir::PrimExpr& cond,
                                          const Env& env) {
  if (!analyzer->assume_no_overflow()) return "";
  std::pair<const char*, ir::PrimExpr> forms[] = {{"rewrite", analyzer->RewriteSimplify(cond)},
                                                  {"canonical", analyzer->CanonicalSimplify(cond)},
                                                  {"simplified", analyzer->Simplify(cond)}};
  for (const auto& [name, form] : forms) {
    ExactEvaluator ev(env, Semantics::kAssumeNoOverflow);
    ev(form);
    if (ev.out_of_domain()) {
      return std::string("\n  (its ") + name + " form " + ir::AsText(form) +
             " has an operation that leaves its dtype at this point)";
    }
  }
  return "";
}

}  // namespace testing
}  // namespace tessel

#endif  // TESSEL_TESTS_CPP_ARITH_FUZZ_UTIL_H_
