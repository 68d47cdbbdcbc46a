// Product bounds: the IR form of the fact, and the bounds and proofs the extension derives from it
// (index arithmetic over symbolic shapes shown not to overflow), including an exhaustive check of
// every answer against wrap-around evaluation over int8.
#include <gtest/gtest.h>
#include <tessel/arith/analyzer.h>
#include <tessel/arith/product_bounds.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>

#include <functional>
#include <map>
#include <random>
#include <string>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

constexpr int64_t kInt32Max = 2147483647;

PrimExpr C32(int64_t v) { return MakeConst(DataType::Int(32), v); }

TEST(ProductBounds, IsRegisteredAsDefault) {
  Analyzer a;
  ASSERT_NE(a.FindExtension("product_bounds"), nullptr);
}

TEST(ProductBounds, FormRoundTrips) {
  Var n("n"), m("m"), k("k");
  PrimExpr two = MakeProductBound({n, m}, kInt32Max);
  EXPECT_EQ(AsText(two), "m == 0 or n <= 2147483647 // m");
  PrimExpr three = MakeProductBound({n, m, k}, 1000);
  EXPECT_EQ(AsText(three), "m == 0 or k == 0 or n <= 1000 // m // k");
  EXPECT_EQ(AsText(MakeProductBound({n}, 99)), "n <= 99");
  for (const PrimExpr& e : {two, three}) {
    auto p = ParseProductBound(e);
    ASSERT_TRUE(p.has_value()) << AsText(e);
    EXPECT_TRUE(p->factors[0].same_as(n));
    EXPECT_TRUE(p->factors[1].same_as(m));
  }
  EXPECT_EQ(ParseProductBound(three)->limit, 1000);
  EXPECT_EQ(ParseProductBound(three)->factors.size(), 3u);
  // Not the form: a divisor without its `== 0` excuse, a product, a bound that is not constant.
  EXPECT_FALSE(ParseProductBound(LE(n, FloorDiv(C32(100), m))).has_value());
  EXPECT_FALSE(ParseProductBound(Or(EQ(k, C32(0)), LE(n, FloorDiv(C32(100), m)))).has_value());
  EXPECT_FALSE(ParseProductBound(LE(Mul(n, m), C32(100))).has_value());
  EXPECT_FALSE(ParseProductBound(Or(EQ(m, C32(0)), LE(n, FloorDiv(k, m)))).has_value());
  // Unwritable: no factors, a negative limit, a limit beyond the dtype, mixed dtypes.
  EXPECT_FALSE(MakeProductBound({}, 5).defined());
  EXPECT_FALSE(MakeProductBound({n, m}, -1).defined());
  EXPECT_FALSE(MakeProductBound({n, m}, int64_t{1} << 40).defined());
  EXPECT_FALSE(MakeProductBound({n, Var("w", DataType::Int(64))}, 5).defined());
}

// A 2-D loop nest over a buffer of shape (n, m) whose element count the host checked.
struct Nest {
  Var n{"n"}, m{"m"}, i{"i"}, j{"j"};
  Analyzer a;
  std::unique_ptr<ConstraintScope> sizes, product, outer, inner;
  explicit Nest(bool with_product = true) {
    sizes = std::make_unique<ConstraintScope>(&a, n >= 0 && m >= 0);
    if (with_product) {
      product = std::make_unique<ConstraintScope>(&a, MakeProductBound({n, m}, kInt32Max));
    }
    a.Bind(i, Range(C32(0), n));
    outer = std::make_unique<ConstraintScope>(&a, n > 0);
    a.Bind(j, Range(C32(0), m));
    inner = std::make_unique<ConstraintScope>(&a, m > 0);
  }
};

TEST(ProductBounds, RowMajorIndexFits) {
  Nest s;
  ConstIntBound b = s.a.ConstIntBound(s.i * s.m + s.j);
  EXPECT_EQ(b->min_value, 0);
  EXPECT_EQ(b->max_value, kInt32Max - 1);
  EXPECT_EQ(s.a.ConstIntBound(s.i * s.m)->max_value, kInt32Max - 1);
  EXPECT_TRUE(s.a.CanProve(s.i * s.m + s.j < s.n * s.m));
  EXPECT_TRUE(s.a.CanProve(s.i * s.m + s.j >= 0));
  EXPECT_TRUE(s.a.CanProve(s.i * s.m + s.j <= s.n * s.m - 1));
  EXPECT_FALSE(s.a.CanProve(s.i * s.m + s.j < s.n * s.m - 1));
  // Twice the index may wrap: nothing is claimed.
  EXPECT_EQ(s.a.ConstIntBound((s.i * s.m + s.j) * 2)->max_value, kInt32Max);
}

TEST(ProductBounds, WithoutTheProductNothingIsClaimed) {
  Nest s(/*with_product=*/false);
  EXPECT_EQ(s.a.ConstIntBound(s.i * s.m + s.j)->max_value, kInt32Max);
  EXPECT_FALSE(s.a.CanProve(s.i * s.m + s.j < s.n * s.m));
  auto* ext = static_cast<ProductBoundAnalyzer*>(s.a.FindExtension("product_bounds"));
  EXPECT_FALSE(ext->ExactBound(s.i * s.m + s.j).has_value());
}

TEST(ProductBounds, ImpureCallsAreNotOneAtom) {
  // Two evaluations of one call_extern node may differ: s - s is not 0.
  Nest s;
  PrimExpr call =
      Call(DataType::Int(32), builtin::call_extern(), {StringImm("next_value"), s.i * s.m + s.j});
  auto* ext = static_cast<ProductBoundAnalyzer*>(s.a.FindExtension("product_bounds"));
  EXPECT_FALSE(ext->ExactBound(Sub(call, call)).has_value());
  EXPECT_EQ(s.a.ConstIntBound(Sub(call, call))->max_value, kInt32Max);
}

TEST(ProductBounds, ScopesAndClones) {
  Var n("n"), m("m"), i("i"), j("j");
  Analyzer a;
  ConstraintScope sizes(&a, n >= 0 && m >= 0);
  a.Bind(i, Range(C32(0), n));
  a.Bind(j, Range(C32(0), m));
  std::unique_ptr<Analyzer> clone;
  {
    ConstraintScope product(&a, MakeProductBound({n, m}, kInt32Max));
    EXPECT_EQ(a.ConstIntBound(i * m + j)->max_value, kInt32Max - 1);
    clone = a.Clone();
  }
  // The scope is left: the bound is gone (and no stale cached answer remains) ...
  EXPECT_EQ(a.ConstIntBound(i * m + j)->max_value, kInt32Max);
  // ... while the clone made inside it keeps the fact.
  EXPECT_EQ(clone->ConstIntBound(i * m + j)->max_value, kInt32Max - 1);
}

TEST(ProductBounds, GuardedTileIndex) {
  // A row of m elements processed in tiles of 128 by blockIdx bx < n, as in
  // examples/smem_symbolic.py: the guard `t * 128 + tx < m` keeps bx * m + t * 128 + tx in range.
  Var n("n"), m("m"), bx("bx"), t("t"), tx("tx");
  Analyzer a;
  ConstraintScope sizes(&a, n >= 0 && m >= 0);
  ConstraintScope product(&a, MakeProductBound({n, m}, kInt32Max));
  a.Bind(bx, Range(C32(0), n));
  a.Bind(tx, Range(C32(0), C32(128)));
  a.Bind(t, Range(C32(0), floordiv(m + 127, C32(128))));
  PrimExpr index = t * 128 + bx * m + tx;
  EXPECT_EQ(a.ConstIntBound(index)->max_value, kInt32Max);
  {
    ConstraintScope guard(&a, t * 128 + tx < m);
    EXPECT_EQ(a.ConstIntBound(index)->max_value, kInt32Max - 1);
    EXPECT_TRUE(a.CanProve(index < n * m));
  }
  EXPECT_EQ(a.ConstIntBound(index)->max_value, kInt32Max);
}

TEST(ProductBounds, ConstantFactorAndThreeDimensions) {
  // (n, c, h) of int32 with count <= 2^31 - 1: the flat index fits where the loops run.
  Var n("n"), c("c"), h("h"), i("i"), k("k"), l("l");
  Analyzer a;
  ConstraintScope sizes(&a, n >= 0 && c >= 0 && h >= 0);
  ConstraintScope product(&a, MakeProductBound({n, c, h}, kInt32Max));
  a.Bind(i, Range(C32(0), n));
  a.Bind(k, Range(C32(0), c));
  a.Bind(l, Range(C32(0), h));
  PrimExpr index = (i * c + k) * h + l;
  // Without h >= 1 the pair n * c alone is unbounded (h may be 0), so i * c may wrap ...
  EXPECT_EQ(a.ConstIntBound(i * c)->min_value, -kInt32Max - 1);
  EXPECT_EQ(a.ConstIntBound(index)->max_value, kInt32Max);
  // ... but inside the loop over l, h >= 1 and everything fits.
  ConstraintScope rows(&a, h > 0);
  EXPECT_EQ(a.ConstIntBound(i * c)->min_value, 0);  // (n - 1) * c <= n * c <= 2^31 - 1
  EXPECT_EQ(a.ConstIntBound(index)->min_value, 0);
  EXPECT_EQ(a.ConstIntBound(index)->max_value, kInt32Max - 1);
  EXPECT_TRUE(a.CanProve(index < n * c * h));
}

// ---- exhaustive soundness over int8 ---------------------------------------------------------

// The value of e under the IR's semantics for int8 (wrap-around), with variables from env.
int64_t Eval8(const PrimExpr& e, const std::map<const VarNode*, int64_t>& env) {
  auto wrap = [](int64_t v) { return static_cast<int64_t>(static_cast<int8_t>(v)); };
  if (const auto* v = e.as<VarNode>()) return env.at(v);
  if (auto c = AsConstInt(e)) return *c;
  if (const auto* op = e.as<AddNode>()) return wrap(Eval8(op->a, env) + Eval8(op->b, env));
  if (const auto* op = e.as<SubNode>()) return wrap(Eval8(op->a, env) - Eval8(op->b, env));
  if (const auto* op = e.as<MulNode>()) return wrap(Eval8(op->a, env) * Eval8(op->b, env));
  if (const auto* op = e.as<FloorDivNode>()) {
    int64_t a = Eval8(op->a, env), b = Eval8(op->b, env);
    int64_t q = a / b;
    if (q * b != a && ((a < 0) != (b < 0))) --q;
    return wrap(q);
  }
  if (const auto* op = e.as<MinNode>()) return std::min(Eval8(op->a, env), Eval8(op->b, env));
  ADD_FAILURE() << "cannot evaluate " << AsText(e);
  return 0;
}

TEST(ProductBounds, ExhaustiveInt8) {
  DataType t = DataType::Int(8);
  auto c8 = [&](int64_t v) { return MakeConst(t, v); };
  Var n("n", t), m("m", t), i("i", t), j("j", t);
  std::mt19937 rng(12345);
  // Random index-like expressions over i, j, n, m.
  std::function<PrimExpr(int)> gen = [&](int depth) -> PrimExpr {
    int pick = static_cast<int>(rng() % (depth <= 0 ? 5 : 10));
    switch (pick) {
      case 0:
        return i;
      case 1:
        return j;
      case 2:
        return n;
      case 3:
        return m;
      case 4:
        return c8(static_cast<int64_t>(rng() % 9) - 2);
      case 5:
      case 6:
        return Add(gen(depth - 1), gen(depth - 1));
      case 7:
        return Sub(gen(depth - 1), gen(depth - 1));
      case 8:
        return Mul(gen(depth - 1), gen(depth - 1));
      default:
        return Min(gen(depth - 1), floordiv(gen(depth - 1), c8(3)));
    }
  };
  int checked = 0, claims = 0;
  for (int64_t limit : {127, 100, 60}) {
    Analyzer a;
    ConstraintScope sizes(&a, n >= c8(0) && m >= c8(0));
    ConstraintScope product(&a, MakeProductBound({n, m}, limit));
    a.Bind(i, Range(c8(0), n));
    ConstraintScope outer(&a, n > c8(0));
    a.Bind(j, Range(c8(0), m));
    ConstraintScope inner(&a, m > c8(0));
    std::vector<PrimExpr> exprs = {i * m + j, m * i + j + c8(1), (n - i - c8(1)) * m + j,
                                   i * m + j - n * m, n * m - i * m - j - c8(1)};
    for (int k = 0; k < 300; ++k) exprs.push_back(gen(4));
    for (const PrimExpr& e : exprs) {
      ConstIntBound b = a.ConstIntBound(e);
      bool exact_claim = b->min_value > -128 || b->max_value < 127;
      PrimExpr lt = e < n * m;
      bool proved_lt = a.CanProve(lt);
      claims += exact_claim + proved_lt;
      for (int64_t nv = 1; nv <= 127; ++nv) {
        for (int64_t mv = 1; nv * mv <= limit; ++mv) {
          for (int64_t iv = 0; iv < nv; iv += std::max<int64_t>(1, nv / 7)) {
            for (int64_t jv = 0; jv < mv; jv += std::max<int64_t>(1, mv / 7)) {
              std::map<const VarNode*, int64_t> env{
                  {n.get(), nv}, {m.get(), mv}, {i.get(), iv}, {j.get(), jv}};
              int64_t v = Eval8(e, env);
              ++checked;
              ASSERT_TRUE(v >= b->min_value && v <= b->max_value)
                  << AsText(e) << " = " << v << " outside [" << b->min_value << ", " << b->max_value
                  << "] at n=" << nv << " m=" << mv << " i=" << iv << " j=" << jv
                  << " limit=" << limit;
              if (proved_lt) {
                ASSERT_LT(v, Eval8(Mul(n, m), env)) << AsText(lt) << " proved but false";
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(claims, 50);
  EXPECT_GT(checked, 100000);
}

}  // namespace
}  // namespace tessel
