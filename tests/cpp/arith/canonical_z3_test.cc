// Asks Z3 to prove the identities the canonical simplifier rests on (the soundness arguments
// written next to each rule in src/arith/canonical/canonical_simplify.cc and sum_form.cc), stated
// as rules: `condition => before == after` over the mathematical integers (the canonical form is
// exact there; its ring and overflow contract is sum_form.h's). The divisors and multipliers of
// an identity are constants in the simplifier, and identities with symbolic divisors are
// non-linear, which Z3 does not decide in general: so each identity is proved for every
// assignment of its constant holes in [1, MaxFor(holes)] (10, 6 or 4), with the other holes
// (A, h, l) symbolic and unbounded except where the condition bounds them. A counterexample fails
// the test and prints the values; an assignment Z3 cannot decide within its budget (floordiv and
// floormod become auxiliary variables, and some mixes exhaust it) is counted and printed, and an
// identity must be proved at nine in ten of its assignments or more.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/ir/substitute.h>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

struct Identity {
  const char* where;   // the rule's place in the simplifier
  const char* before;  // over A, h, l (symbolic) and the constants of `constants`
  const char* after;
  const char* condition;  // "" when none; may bound l
  std::vector<const char*> constants;
};

// The constant holes range over [1, MaxFor(holes)] (divisors and multipliers are positive), by
// the number of holes so that an identity costs at most about 1,300 queries.
int64_t MaxFor(size_t holes) { return holes <= 2 ? 10 : holes == 3 ? 6 : 4; }

const std::vector<Identity>& Identities() {
  static const std::vector<Identity> list = {
      {"split fusion", "(A // c) * c + A % c", "A", "", {"c"}},
      {"canonical_simplify.cc:181 (g h + l) // (g e)",
       "(g * h + l) // (g * e)",
       "h // e",
       "0 <= l and l < g",
       {"g", "e"}},
      {"canonical_simplify.cc:187 nested floordiv under a mod",
       "A % u // l // d",
       "A % u // (l * d)",
       "u % (l * d) == 0",
       {"u", "l", "d"}},
      {"canonical_simplify.cc:187 nested floordiv", "A // l // d", "A // (l * d)", "", {"l", "d"}},
      {"canonical_simplify.cc:222 mod of a multiple of g",
       "(g * A) % c",
       "g * (A % (c // g))",
       "c % g == 0",
       {"g", "c"}},
      {"canonical_simplify.cc:235 (G h + l) % (G e)",
       "(g * h + l) % (g * e)",
       "g * (h % e) + l",
       "0 <= l and l < g",
       {"g", "e"}},
      {"canonical_simplify.cc:243 floormod of a floordiv under a mod",
       "A % u // l % d",
       "A % (l * d) // l",
       "u % (l * d) == 0",
       {"u", "l", "d"}},
      {"canonical_simplify.cc:243 floormod of a floordiv",
       "A // l % d",
       "A % (l * d) // l",
       "",
       {"l", "d"}},
      {"canonical_simplify.cc:316 split merge under a mod",
       "c * (A % m // l) + c * (m // l) * (A % u // m)",
       "c * (A % u // l)",
       "m % l == 0 and u % m == 0",
       {"c", "l", "m", "u"}},
      {"canonical_simplify.cc:316 split merge",
       "c * (A % m // l) + c * (m // l) * (A // m)",
       "c * (A // l)",
       "m % l == 0",
       {"c", "l", "m"}},
      {"canonical_simplify.cc:318 a known remainder",
       "c * l * (A // l)",
       "c * (A - r)",
       "A % l == r",
       {"c", "l"}},
      {"sum_form: a mod of a sum with a multiple", "(A + k * c) % c", "A % c", "", {"c", "k"}},
      {"sum_form: a floordiv of a sum with a multiple",
       "(A + k * c) // c",
       "A // c + k",
       "",
       {"c", "k"}},
  };
  return list;
}

TEST(CanonicalZ3, EveryIdentityIsProvedForItsConstants) {
  if (!Z3Prover::Available()) GTEST_SKIP() << "built without Z3";
  DataType t = DataType::Int(64);
  tvm::ffi::Map<tvm::ffi::String, tvm::ffi::Any> vars;
  std::map<std::string, Var> by_name;
  for (const char* n : {"A", "h", "l", "r", "c", "g", "e", "u", "d", "m", "k"}) {
    by_name[n] = Var(n, t);
    vars.Set(n, by_name[n]);
  }
  int64_t queries = 0, identities = 0, total_undecided = 0;
  for (const Identity& id : Identities()) {
    PrimExpr before = ParseExpr(id.before, vars), after = ParseExpr(id.after, vars);
    PrimExpr claim = EQ(before, after);
    if (std::string(id.condition).size()) claim = Or(Not(ParseExpr(id.condition, vars)), claim);
    ++identities;
    std::vector<int64_t> value(id.constants.size(), 1);
    int64_t proved = 0, undecided = 0;
    // Every assignment of the constant holes.
    std::function<void(size_t)> each = [&](size_t i) {
      if (i == id.constants.size()) {
        VarMap sub;
        for (size_t j = 0; j < value.size(); ++j) {
          sub[by_name[id.constants[j]].get()] = MakeConst(t, value[j]);
        }
        Analyzer analyzer;
        analyzer.SetAssumeNoOverflow(true);
        Z3Prover* z3 = GetZ3Prover(analyzer);
        ASSERT_NE(z3, nullptr);
        z3->set_rlimit(200000);
        PrimExpr c = Substitute(claim, sub);
        ++queries;
        ProofResult res = z3->TryProve(c, ProofStrength::kDefault);
        if (res == ProofResult::kProved) {
          ++proved;
          return;
        }
        std::string at;
        for (size_t j = 0; j < value.size(); ++j) {
          at += std::string(" ") + id.constants[j] + "=" + std::to_string(value[j]);
        }
        std::string cex;
        if (res == ProofResult::kDisproved) {
          if (auto m = z3->Counterexample(c)) {
            for (const auto& [var, v] : *m) {
              cex += " " + std::string(var->name_hint) + "=" +
                     std::to_string(static_cast<long long>(v));
            }
          }
        }
        std::string text =
            std::string(id.where) + ": " + id.before + " == " + id.after +
            (std::string(id.condition).empty() ? "" : std::string(" if ") + id.condition);
        if (res == ProofResult::kDisproved) {
          ADD_FAILURE() << text << " is false at" << at << cex;
        } else {
          ++undecided;
          std::cout << "  undecided " << text << " at" << at << "\n";
        }
        return;
      }
      for (int64_t v = 1; v <= MaxFor(id.constants.size()); ++v) {
        value[i] = v;
        each(i + 1);
        if (::testing::Test::HasFailure()) return;
      }
    };
    each(0);
    EXPECT_GE(proved, 9 * (proved + undecided) / 10)
        << id.where << ": proved at " << proved << " assignments, undecided at " << undecided;
    total_undecided += undecided;
  }
  std::cout << "canonical identities: " << identities << ", Z3 queries: " << queries
            << ", undecided: " << total_undecided << "\n";
}

}  // namespace
}  // namespace tessel
