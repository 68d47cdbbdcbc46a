// The Z3 prover: true facts the cheap methods cannot reach, facts that must not be proved (each
// counterexample checked with the exact evaluator), scopes, clones, caching, determinism, SMT-LIB2.
// In a build without Z3 only Z3ProverOff runs (the others skip), and it checks that every query
// answers unknown.
#include <gtest/gtest.h>
#include <tessel/arith/z3_prover.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "eval.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

#define REQUIRE_Z3() \
  if (!Z3Prover::Available()) GTEST_SKIP() << "built without Z3"

PrimExpr I32(int64_t v) { return IntImm(DataType::Int(32), v); }

// Asks the prover alone (the cheap methods are not consulted).
ProofResult Z3(Analyzer& a, const PrimExpr& cond) {
  Z3Prover* p = GetZ3Prover(a);
  EXPECT_NE(p, nullptr);
  return p->TryProve(cond, ProofStrength::kDefault);
}

// cond must not be proved, neither by the analyzer nor by Z3; a counterexample, when Z3 gives
// one, must satisfy the bindings (checked by the caller's ranges) and make cond false.
void ExpectNotProved(Analyzer& a, const PrimExpr& cond, bool expect_counterexample = true,
                     const std::vector<PrimExpr>& facts = {}) {
  EXPECT_FALSE(a.CanProve(cond)) << AsText(cond);
  EXPECT_NE(Z3(a, cond), ProofResult::kProved) << AsText(cond);
  auto cx = GetZ3Prover(a)->Counterexample(cond);
  EXPECT_EQ(cx.has_value(), expect_counterexample) << AsText(cond);
  if (!cx) return;
  testing::Env env;
  for (const auto& [var, value] : *cx) env[var.get()] = value;
  auto v = testing::ExactEvaluator(env)(cond);
  ASSERT_TRUE(v.has_value()) << AsText(cond);
  EXPECT_EQ(*v, 0) << "not a counterexample to " << AsText(cond);
  for (const PrimExpr& f : facts) {
    auto fv = testing::ExactEvaluator(env)(f);
    ASSERT_TRUE(fv.has_value()) << AsText(f);
    EXPECT_EQ(*fv, 1) << "the counterexample to " << AsText(cond) << " violates the fact "
                      << AsText(f);
  }
}

void ExpectZ3Proves(Analyzer& a, const PrimExpr& cond) {
  EXPECT_EQ(Z3(a, cond), ProofResult::kProved) << AsText(cond);
  EXPECT_TRUE(a.CanProve(cond)) << AsText(cond);
}

TEST(Z3Prover, IsADefaultExtension) {
  Analyzer a;
  Z3Prover* p = GetZ3Prover(a);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->stage(), AnalyzerExtension::Stage::kProver);
  EXPECT_EQ(std::string(p->name()), "z3");
  EXPECT_EQ(p->rlimit(), Z3Prover::kDefaultRLimit);
  EXPECT_THROW(p->set_rlimit(0), tvm::ffi::Error);
  // Nothing reaches Z3 while the cheap methods decide.
  Var x("x");
  a.Bind(x, Range(0, 16));
  EXPECT_TRUE(a.CanProve(x < 16));
  EXPECT_EQ(p->stats().queries, 0);
}

// The cheap refutation evaluates candidate points exactly in 128 bits; uint64 products at the
// ends of the range (2^64 - 1 squared) used to overflow that (undefined behaviour, found by
// UBSan in scripts/sanitize.sh). Under UBSan this test fails on the old code; everywhere it checks
// the wrapped answers.
TEST(Z3Prover, Uint64ProductsAtTheEndsOfTheRange) {
  REQUIRE_Z3();
  Analyzer a;
  DataType u64 = DataType::UInt(64);
  Var x("x", u64), y("y", u64);
  ExpectZ3Proves(a, EQ(x * y, y * x));
  ExpectNotProved(a, GE(x * y, x));  // false at x = 2^64 - 1, y = 2^64 - 1 (the product wraps to 1)
}

TEST(Z3Prover, ProductMonotonicity) {
  REQUIRE_Z3();
  Analyzer a;
  Var x("a"), y("b"), d("d");
  for (const Var& v : {x, y, d}) a.Bind(v, Range(-1000, 2000));
  ConstraintScope s1(&a, x < y);
  ConstraintScope s2(&a, d > 0);
  ExpectZ3Proves(a, x * d < y * d);
  // Without d > 0 it is false.
  Analyzer b;
  for (const Var& v : {x, y, d}) b.Bind(v, Range(-1000, 2000));
  ConstraintScope s3(&b, x < y);
  ExpectNotProved(b, x * d < y * d, true, {x < y});
}

TEST(Z3Prover, RoundedDownDistance) {
  REQUIRE_Z3();
  Analyzer an;
  Var a("a"), b("b"), c("c");
  for (const Var& v : {a, b, c}) an.Bind(v, Range(1, 100000));
  ExpectZ3Proves(an, floordiv(b - a, c) * c + a <= b);
  ExpectNotProved(an, floordiv(b - a, c) * c + a < b);
}

TEST(Z3Prover, NestedFloorDivCollapses) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x");  // any int32
  ExpectZ3Proves(an, eq(floordiv(floordiv(x, 3), 5), floordiv(x, 15)));
  ExpectZ3Proves(an, eq(floordiv(floordiv(x, -4), 8), floordiv(x, -32)));
  ExpectNotProved(an, eq(truncdiv(floordiv(x, 3), 5), floordiv(x, 15)));
  Var y("y"), z("z");
  an.Bind(y, Range(1, 64));
  an.Bind(z, Range(1, 64));
  Var w("w");
  an.Bind(w, Range(0, 4096));
  // With both divisors symbolic it is true but beyond Z3 (non-linear integer division): the
  // rlimit ends the search, and the answer is unknown, never a wrong one.
  EXPECT_EQ(Z3(an, eq(floordiv(floordiv(w, y), z), floordiv(w, y * z))), ProofResult::kUnknown);
}

TEST(Z3Prover, XorSwizzleBounds) {
  REQUIRE_Z3();
  Analyzer an;
  Var i("i"), j("j");
  an.Bind(i, Range(0, 1024));
  an.Bind(j, Range(0, 64));
  PrimExpr swizzle = bitwise_xor(floormod(j, 8), floormod(floordiv(i, 8), 8));
  ExpectZ3Proves(an, swizzle < 8 && swizzle >= 0);
  ExpectZ3Proves(an, floordiv(j, 8) * 8 + swizzle < 64);
  ExpectNotProved(an, swizzle < 7);
  ExpectZ3Proves(an, eq(bitwise_and(i, I32(~7)) + bitwise_and(i, I32(7)), i));
}

TEST(Z3Prover, FloorModSigns) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y"), n("n");
  an.Bind(y, Range(1, 100));
  an.Bind(n, Range(-99, 99));
  ExpectZ3Proves(an, floormod(x, y) >= 0 && floormod(x, y) < y);
  ExpectZ3Proves(an, floormod(x, y - 101) <= 0);
  ExpectZ3Proves(an, eq(floormod(x, y) + floordiv(x, y) * y, x));
  // truncmod takes the dividend's sign: negative for negative x.
  ExpectNotProved(an, truncmod(x, y) >= 0);
  ExpectZ3Proves(an, truncmod(n, y) > -y && truncmod(n, y) < y);
  ExpectZ3Proves(an, eq(truncdiv(n, y) * y + truncmod(n, y), n));
}

TEST(Z3Prover, ShiftsThatOverflowAreNotProved) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), s("s");
  an.Bind(x, Range(0, 1 << 30));
  an.Bind(s, Range(0, 32));
  ExpectNotProved(an, shift_left(x, I32(4)) >= x);
  ExpectNotProved(an, shift_left(I32(1), s) > 0);
  ExpectZ3Proves(an, shift_left(floormod(x, 8), I32(2)) < 32);
  ExpectZ3Proves(an, shift_right(x, s) <= x);
  // An amount that may leave [0, bits) gives an unconstrained value: no proof, no counterexample.
  Var t("t");
  an.Bind(t, Range(0, 40));
  ExpectNotProved(an, shift_right(x, t) <= x, /*expect_counterexample=*/false);
}

TEST(Z3Prover, UnsignedWrapAround) {
  REQUIRE_Z3();
  Analyzer an;
  Var u("u", DataType::UInt(32));
  an.Bind(u, Range(IntImm(DataType::UInt(32), 0), IntImm(DataType::UInt(32), 10)));
  PrimExpr one = IntImm(DataType::UInt(32), 1);
  ExpectNotProved(an, u - one < u);
  ExpectZ3Proves(an, u - one < u || eq(u, IntImm(DataType::UInt(32), 0)));
  ExpectZ3Proves(an, bitwise_not(u) >= IntImm(DataType::UInt(32), 4294967285LL));
}

TEST(Z3Prover, DivisionByMaybeZero) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, Range(-1000, 2000));
  an.Bind(y, Range(-4, 9));
  // Holds for every y != 0; y == 0 is undefined, so nothing may be assumed.
  PrimExpr identity = eq(truncdiv(x, y) * y + truncmod(x, y), x);
  ExpectNotProved(an, identity, /*expect_counterexample=*/false);
  {
    ConstraintScope nz(&an, ne(y, 0));
    ExpectZ3Proves(an, identity);
  }
  ExpectNotProved(an, identity, false);
  // Two divisions by the same zero are not assumed equal.
  EXPECT_EQ(Z3(an, eq(floordiv(x, y), floordiv(x, y)) || ne(y, 0)), ProofResult::kUnknown);
}

TEST(Z3Prover, PoppedScopeIsForgotten) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, Range(0, 100));
  an.Bind(y, Range(0, 100));
  PrimExpr goal = x * y < 100;
  {
    ConstraintScope s1(&an, x < 10 && y < 10);
    ExpectZ3Proves(an, goal);
  }
  ExpectNotProved(an, goal);
  EXPECT_EQ(Z3(an, goal), ProofResult::kDisproved);
}

TEST(Z3Prover, CastsSelectsLets) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), b("b", DataType::Bool());
  an.Bind(x, Range(0, 200));
  ExpectNotProved(an, eq(cast(DataType::Int(32), cast(DataType::Int(8), x)), x));
  ExpectZ3Proves(an, eq(cast(DataType::Int(32), cast(DataType::UInt(8), x)), x));
  ExpectZ3Proves(an, select(b, x * x, x) < 40000);
  ExpectZ3Proves(an, eq(if_then_else(x > 100, floormod(x * 3 + 3, 3), 0), 0));
  Var t("t");
  ExpectZ3Proves(an, Let(t, x * 3, eq(floormod(t, 3), 0) && t < 600));
  ExpectZ3Proves(an, eq(max(x, I32(7)) * min(x, I32(7)), x * 7));
  // Untranslatable: a float cast is a fresh value.
  PrimExpr f = cast(DataType::Int(32), cast(DataType::Float(32), x));
  ExpectNotProved(an, eq(f, x), false);
}

TEST(Z3Prover, RebindingUpdatesTheSolver) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, Range(0, 10));
  an.Bind(y, x * x);
  ExpectZ3Proves(an, eq(y - x * x, 0) && y < 100);
  an.Bind(y, x * 3, /*allow_override=*/true);
  ExpectNotProved(an, eq(y - x * x, 0));
  ExpectZ3Proves(an, eq(y, x + x + x));
}

TEST(Z3Prover, CounterexampleOfTheCli) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, Range(0, 32));
  an.Bind(y, Range(0, 8));
  auto cx = GetZ3Prover(an)->Counterexample(x * 4 + y < 128);
  ASSERT_TRUE(cx.has_value());
  ASSERT_EQ(cx->size(), 2u);
  EXPECT_TRUE((*cx)[0].first.same_as(x));
  EXPECT_EQ(static_cast<int64_t>((*cx)[0].second), 31);
  EXPECT_EQ(static_cast<int64_t>((*cx)[1].second), 4);
}

TEST(Z3Prover, CacheAndStats) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, Range(0, 100));
  an.Bind(y, Range(1, 100));
  Z3Prover* p = GetZ3Prover(an);
  PrimExpr goal = floordiv(x, y) * y <= x;
  EXPECT_EQ(Z3(an, goal), ProofResult::kProved);
  EXPECT_EQ(Z3(an, goal), ProofResult::kProved);
  // x = y = 99 refutes this before Z3; Counterexample still asks Z3.
  EXPECT_EQ(Z3(an, x * y < 9000), ProofResult::kDisproved);
  EXPECT_TRUE(p->Counterexample(x * y < 9000).has_value());
  Z3Stats s = p->stats();
  EXPECT_EQ(s.queries, 3);
  EXPECT_EQ(s.cache_hits, 1);
  EXPECT_EQ(s.proved, 1);
  EXPECT_EQ(s.refuted, 1);
  EXPECT_EQ(s.refuted_cheaply, 1);
  EXPECT_EQ(s.unknown, 0);
  EXPECT_GT(s.seconds, 0);
  // A structurally equal query over another variable named x is another question.
  Var x2("x");
  an.Bind(x2, Range(0, 1000));
  EXPECT_EQ(Z3(an, floordiv(x2, y) * y <= x2 - 1), ProofResult::kDisproved);
  EXPECT_EQ(Z3(an, floordiv(x, y) * y <= x - 1), ProofResult::kDisproved);
  // A scope changes the key.
  {
    ConstraintScope sc(&an, floormod(x, y) > 0);
    EXPECT_EQ(Z3(an, floordiv(x, y) * y <= x - 1), ProofResult::kProved);
  }
}

TEST(Z3Prover, RLimitIsDeterministicAndSettable) {
  REQUIRE_Z3();
  auto verdict = [](int64_t rlimit) {
    Analyzer an;
    Var a("a"), b("b"), c("c");
    for (const Var& v : {a, b, c}) an.Bind(v, Range(1, 1 << 15));
    GetZ3Prover(an)->set_rlimit(rlimit);
    return Z3(an, eq(floordiv(floordiv(a, b), c), floordiv(a, b * c)));
  };
  EXPECT_EQ(verdict(1), ProofResult::kUnknown);
  ProofResult r = verdict(Z3Prover::kDefaultRLimit);
  EXPECT_EQ(r, verdict(Z3Prover::kDefaultRLimit));
}

// A fixed set of questions and their verdicts under one analyzer's state.
std::vector<ProofResult> Corpus(Analyzer& an, const std::vector<Var>& v) {
  std::vector<PrimExpr> qs = {
      v[0] * v[2] < v[1] * v[2],
      floordiv(v[1] - v[0], v[2]) * v[2] + v[0] <= v[1],
      bitwise_xor(floormod(v[0], 8), floormod(v[1], 8)) < 8,
      truncmod(v[0] - 50, v[2]) >= 0,
      shift_left(v[0], I32(24)) >= 0,
      eq(floordiv(floordiv(v[0], v[2]), 3), floordiv(v[0], v[2] * 3)),
      v[0] * v[1] < 10000,
  };
  std::vector<ProofResult> out;
  for (const PrimExpr& q : qs) out.push_back(Z3(an, q));
  return out;
}

std::vector<ProofResult> CorpusOnFreshAnalyzer() {
  Analyzer an;
  std::vector<Var> v = {Var("a"), Var("b"), Var("d")};
  an.Bind(v[0], Range(0, 100));
  an.Bind(v[1], Range(0, 100));
  an.Bind(v[2], Range(1, 17));
  ConstraintScope s(&an, v[0] < v[1]);
  return Corpus(an, v);
}

TEST(Z3Prover, DeterministicAcrossRunsClonesAndThreads) {
  REQUIRE_Z3();
  std::vector<ProofResult> expected = CorpusOnFreshAnalyzer();
  EXPECT_EQ(expected[0], ProofResult::kProved);
  EXPECT_EQ(expected[3], ProofResult::kDisproved);
  EXPECT_EQ(CorpusOnFreshAnalyzer(), expected);
  // A clone made inside the scope answers like its original (and the original's cache does not
  // help it: a clone made before any query).
  Analyzer an;
  std::vector<Var> v = {Var("a"), Var("b"), Var("d")};
  an.Bind(v[0], Range(0, 100));
  an.Bind(v[1], Range(0, 100));
  an.Bind(v[2], Range(1, 17));
  std::unique_ptr<Analyzer> clone;
  {
    ConstraintScope s(&an, v[0] < v[1]);
    clone = an.Clone();
    EXPECT_EQ(Corpus(an, v), expected);
  }
  EXPECT_EQ(Corpus(*clone, v), expected);
  EXPECT_EQ(GetZ3Prover(*clone)->rlimit(), Z3Prover::kDefaultRLimit);
  std::vector<std::vector<ProofResult>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&results, t] { results[t] = CorpusOnFreshAnalyzer(); });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) EXPECT_EQ(r, expected);
}

TEST(Z3Prover, CloneKeepsLimits) {
  REQUIRE_Z3();
  Analyzer an;
  GetZ3Prover(an)->set_rlimit(1);
  auto clone = an.Clone();
  EXPECT_EQ(GetZ3Prover(*clone)->rlimit(), 1);
  Var a("a"), b("b");
  clone->Bind(a, Range(0, 100));
  clone->Bind(b, Range(1, 100));
  EXPECT_EQ(Z3(*clone, floordiv(a, b) * b <= a), ProofResult::kUnknown);
}

TEST(Z3Prover, SMTLIB2IsSelfContained) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y");
  an.Bind(x, Range(0, 32));
  an.Bind(y, Range(0, 8));
  Z3Prover* p = GetZ3Prover(an);
  std::string proved = p->GetSMTLIB2(x * 4 + y < 132);
  std::string refuted = p->GetSMTLIB2(bitwise_xor(x, y) * 4 + y < 128);
  EXPECT_NE(proved.find("(check-sat)"), std::string::npos) << proved;
  EXPECT_NE(proved.find("declare-fun x"), std::string::npos) << proved;
  EXPECT_THROW(p->GetSMTLIB2(x), tvm::ffi::Error);
  if (std::system("z3 -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no z3 binary";
  auto run = [](const std::string& script) {
    std::string path = ::testing::TempDir() + "tessel_z3_test.smt2";
    std::ofstream(path) << script;
    std::string out;
    FILE* f = popen(("z3 " + path).c_str(), "r");
    char buf[256];
    while (f && fgets(buf, sizeof(buf), f)) out += buf;
    if (f) pclose(f);
    return out;
  };
  EXPECT_EQ(run(proved), "unsat\n");
  EXPECT_EQ(run(refuted), "sat\n");
}

// Conditions the cheap methods already decide exactly (a linear form of interval-only variables,
// a load, an unconstrained bool) are answered unknown without asking Z3; anything Z3 might prove
// is still asked.
TEST(Z3Prover, OutOfReachConditionsSkipZ3) {
  REQUIRE_Z3();
  Analyzer an;
  Var x("x"), y("y"), z("z"), b("b", DataType::Bool());
  an.Bind(x, Range(0, 100));
  an.Bind(y, Range(0, 100));
  Z3Prover* p = GetZ3Prover(an);
  Buffer buf = MakeBuffer("A", DataType::Int(32), {I32(100)});
  ConstraintScope sz(&an, z < 50);
  std::vector<PrimExpr> skipped = {
      x<50, x + y * 2 <= 150, logical_not(eq(x - y, 3)), b, logical_not(b), BufferLoad(buf, {x})> 0,
      x < 60 && z < 40, eq(x + z, 7), Call(DataType::Bool(), builtin::likely(), {y >= 1})};
  for (const PrimExpr& c : skipped) {
    EXPECT_EQ(Z3(an, c), ProofResult::kUnknown) << AsText(c);
    EXPECT_FALSE(an.CanProve(c)) << AsText(c);
  }
  EXPECT_EQ(p->stats().queries, 0);
  EXPECT_EQ(p->stats().skipped, static_cast<int64_t>(2 * skipped.size()));
  // Each of these needs Z3 (or may): a negated conjunction is a disjunction, a scaled `!=` skips
  // values the bounds cannot see, a variable occurring twice, a relational fact, a product.
  ExpectZ3Proves(an, logical_not(x < 3 && x > 5));
  ExpectZ3Proves(an, ne(x * 2, I32(7)));
  ExpectZ3Proves(an, x - x + y < 100);
  {
    ConstraintScope s(&an, x < y);
    ExpectZ3Proves(an, x < 99);
  }
  ExpectNotProved(an, x * y < 9000);
  EXPECT_GT(p->stats().queries, 0);
}

// The encoding states the intervals of bit operations, right shifts and divisions by constants,
// so these facts prove far within the default rlimit: at 1500 units (without the stated
// intervals they needed ~5300 and ~7100).
TEST(Z3Prover, StatedIntervalsKeepProofsCheap) {
  REQUIRE_Z3();
  Analyzer an;
  Var i("i"), j("j"), x("x"), s("s");
  an.Bind(i, Range(0, 1024));
  an.Bind(j, Range(0, 64));
  an.Bind(x, Range(0, 1 << 30));
  an.Bind(s, Range(0, 32));
  GetZ3Prover(an)->set_rlimit(1500);
  PrimExpr swizzle = bitwise_xor(floormod(j, 8), floormod(floordiv(i, 8), 8));
  EXPECT_EQ(Z3(an, floordiv(j, 8) * 8 + swizzle < 64), ProofResult::kProved);
  EXPECT_EQ(Z3(an, shift_right(x, s) <= x), ProofResult::kProved);
  // The stated intervals are consequences, never extra assumptions: what is false stays unproved.
  EXPECT_EQ(Z3(an, swizzle < 7), ProofResult::kDisproved);
  EXPECT_NE(Z3(an, shift_right(x, s) < x), ProofResult::kProved);  // x = 0 or s = 0
  EXPECT_NE(Z3(an, shift_right(x, s) < I32(1 << 29)), ProofResult::kProved);
  Var t("t");
  an.Bind(t, Range(0, 40));
  EXPECT_NE(Z3(an, shift_right(x, t) <= x), ProofResult::kProved);
}

TEST(Z3ProverOff, EveryQueryIsUnknown) {
  if (Z3Prover::Available()) GTEST_SKIP() << "built with Z3";
  Analyzer an;
  Z3Prover* p = GetZ3Prover(an);
  ASSERT_NE(p, nullptr);
  Var x("x"), y("y");
  an.Bind(x, Range(0, 100));
  an.Bind(y, Range(1, 100));
  ConstraintScope s(&an, x < y);
  EXPECT_EQ(Z3(an, floordiv(x, y) * y <= x), ProofResult::kUnknown);
  EXPECT_EQ(Z3(an, x * y < 9000), ProofResult::kUnknown);
  EXPECT_FALSE(p->Counterexample(x * y < 9000).has_value());
  EXPECT_THROW(p->GetSMTLIB2(x < y), tvm::ffi::Error);
  EXPECT_TRUE(an.CanProve(x < 100));  // the cheap methods still work
  auto clone = an.Clone();
  EXPECT_EQ(Z3(*clone, x < y), ProofResult::kUnknown);
  EXPECT_EQ(p->stats().queries, 3);
  EXPECT_EQ(p->stats().unknown, 3);
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// A relational condition with a genuine counterexample among the candidate points (the ends of
// each variable's bounds) is refuted without a Z3 query; a true one still reaches Z3 and is
// proved; Counterexample always asks Z3.
TEST(Z3Prover, CheapRefuterAnswersWithoutZ3) {
  REQUIRE_Z3();
  Analyzer an;
  Var i("i"), n("n"), m("m"), s("s"), t("t");
  an.Bind(i, Range(0, 16));
  an.Bind(t, Range(0, 128));
  Z3Prover* p = GetZ3Prover(an);
  // Alone, i < n is a linear comparison of interval-only variables: skipped, not refuted.
  EXPECT_EQ(Z3(an, i < n), ProofResult::kUnknown);
  EXPECT_EQ(p->stats().skipped, 1);
  // A relational fact takes n out of that case; i = 15, n = INT32_MIN, m = INT32_MAX refutes.
  ConstraintScope sm(&an, n < m);
  EXPECT_FALSE(an.CanProve(i < n));
  EXPECT_EQ(Z3(an, i < n), ProofResult::kDisproved);
  EXPECT_EQ(Z3(an, t < Call(DataType::Int(32), builtin::shift_right(), {I32(64), s})),
            ProofResult::kDisproved);
  EXPECT_EQ(p->stats().queries, 0);
  EXPECT_GE(p->stats().refuted_cheaply, 3);
  int64_t cheap = p->stats().refuted_cheaply;
  {
    ConstraintScope sc(&an, i < n);
    ExpectZ3Proves(an, i + 1 <= n);
    EXPECT_EQ(p->stats().queries, 1);
    EXPECT_EQ(p->stats().proved, 1);
  }
  EXPECT_EQ(p->stats().refuted_cheaply, cheap);
  EXPECT_TRUE(p->Counterexample(i < n).has_value());
}

}  // namespace
}  // namespace tessel
