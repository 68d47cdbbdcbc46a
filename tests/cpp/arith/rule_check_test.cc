// Checks every rule of the rewrite table on random values for its holes, with the exact
// evaluator (eval.h): wherever the condition holds (and, for a rule without [wrap], no integer
// operation of the pattern, the result or the condition leaves its dtype), the pattern and the
// result are equal. [wrap] rules are checked with wrap-around semantics, hardest at int8.
// A failure names the rule's file:line and the values of its holes.
#include <gtest/gtest.h>
#include <tessel/arith/rewrite_simplify.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "eval.h"
#include "fuzz_util.h"

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)
using testing::ExactEvaluator;
using testing::i128;
using testing::Str;

// Whether every + - * and quotient in e keeps its exact value inside its dtype (false also when
// some operand is undefined, e.g. a division by zero).
bool NoOverflow(const PrimExpr& e, const testing::Env& env) {
  bool ok = true;
  PostOrderVisit(e, [&](const ObjectRef& obj) {
    if (!ok) return;
    const auto* n = obj.as<PrimExprNode>();
    if (!n || !n->dtype.is_int_or_uint()) return;
    PrimExpr a, b;
    if (const auto* op = obj.as<AddNode>()) a = op->a, b = op->b;
    if (const auto* op = obj.as<SubNode>()) a = op->a, b = op->b;
    if (const auto* op = obj.as<MulNode>()) a = op->a, b = op->b;
    if (const auto* op = obj.as<DivNode>()) a = op->a, b = op->b;
    if (const auto* op = obj.as<FloorDivNode>()) a = op->a, b = op->b;
    if (!a.defined()) return;
    auto av = ExactEvaluator(env)(a), bv = ExactEvaluator(env)(b);
    if (!av || !bv) {
      ok = false;
      return;
    }
    i128 r;
    if (obj.as<AddNode>()) {
      r = *av + *bv;
    } else if (obj.as<SubNode>()) {
      r = *av - *bv;
    } else if (obj.as<MulNode>()) {
      r = *av * *bv;
    } else if (*bv == 0) {
      ok = false;
      return;
    } else if (obj.as<DivNode>()) {
      r = *av / *bv;
    } else {
      r = testing::FloorDivExact(*av, *bv);
    }
    ok = FitsInDType(n->dtype, r);
  });
  return ok;
}

struct Parsed {
  PrimExpr before, after, cond;
  std::vector<std::pair<std::string, Var>> holes;
};

std::optional<Parsed> ParseRule(const RewriteRuleInfo& rule, DataType t) {
  Map<String, Any> vars = RewriteHoleVars(t);
  Parsed p;
  try {
    p.before = ParseExpr(rule.before, vars);
    p.after = ParseExpr(rule.after, vars);
    if (!rule.condition.empty()) p.cond = ParseExpr(rule.condition, vars);
  } catch (const tvm::ffi::Error&) {
    // A literal of the rule does not fit this dtype: the rule cannot match it either.
    return std::nullopt;
  }
  for (const auto& [name, v] : vars) p.holes.emplace_back(name, v.cast<Var>());
  return p;
}

class Values {
 public:
  explicit Values(uint64_t seed) : rng_(seed) {}
  i128 Of(DataType t) {
    if (t.is_bool()) return rng_() % 2;
    IntInterval r = DTypeRange(t);
    switch (rng_() % 8) {
      case 0:
        return r.lo + static_cast<i128>(rng_() % 3);
      case 1:
        return r.hi - static_cast<i128>(rng_() % 3);
      case 2: {
        unsigned __int128 span = static_cast<unsigned __int128>(r.hi - r.lo) + 1;
        unsigned __int128 u = (static_cast<unsigned __int128>(rng_()) << 64) | rng_();
        return r.lo + static_cast<i128>(u % span);
      }
      case 3:
        return std::max<i128>(r.lo, std::min<i128>(r.hi, static_cast<i128>(rng_() % 257) - 128));
      default:
        return static_cast<i128>(rng_() % 41) - 20;
    }
  }

 private:
  std::mt19937_64 rng_;
};

TEST(RuleCheck, EveryRuleHoldsOnRandomValues) {
  const std::vector<RewriteRuleInfo>& rules = RewriteRules();
  ASSERT_FALSE(rules.empty());
  Values values(7);
  int failures = 0;
  for (const RewriteRuleInfo& rule : rules) {
    std::string where = rule.file + ":" + std::to_string(rule.line);
    int64_t checked = 0;
    for (DataType t : {DataType::Int(8), DataType::Int(32), DataType::Int(64)}) {
      std::optional<Parsed> p = ParseRule(rule, t);
      if (!p) continue;
      int samples = t.bits() == 8 ? (rule.wrap ? 30000 : 8000) : 3000;
      for (int s = 0; s < samples && failures < 20; ++s) {
        testing::Env env;
        for (const auto& [name, v] : p->holes) env[v.get()] = values.Of(v.dtype());
        auto before = ExactEvaluator(env)(p->before);
        if (!before) continue;
        if (p->cond.defined()) {
          // Conditions are decided exactly: one whose arithmetic overflows is never taken.
          if (!NoOverflow(p->cond, env)) continue;
          auto c = ExactEvaluator(env)(p->cond);
          if (!c || !*c) continue;
        }
        if (!rule.wrap && (!NoOverflow(p->before, env) || !NoOverflow(p->after, env))) continue;
        ++checked;
        auto after = ExactEvaluator(env)(p->after);
        if (after && *after == *before) continue;
        std::ostringstream os;
        os << where << ": " << rule.before << " -> " << rule.after
           << (rule.condition.empty() ? "" : " if " + rule.condition)
           << (rule.wrap ? " [wrap]" : "") << "\n  fails for " << t << ":";
        for (const auto& [name, v] : p->holes) {
          if (env.count(v.get())) os << " " << name << "=" << Str(env[v.get()]);
        }
        os << "\n  before = " << Str(*before)
           << ", after = " << (after ? Str(*after) : std::string("undefined"));
        ADD_FAILURE() << os.str();
        ++failures;
      }
    }
    // A rule whose condition never held was not checked at all.
    EXPECT_GT(checked, 0) << where << ": never exercised: " << rule.before << " -> " << rule.after;
  }
}

}  // namespace
}  // namespace tessel
