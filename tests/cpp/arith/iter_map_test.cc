// The iterator-map detector (iter_map.h): fusion, splitting, their mixes, the bijective and
// surjective checks, padding, predicates, refusals, and the bindings a schedule's split and fuse
// produce, re-simplified.
#include <gtest/gtest.h>
#include <tessel/arith/iter_map.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/printer.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <string>
#include <utility>
#include <vector>

namespace tessel {
namespace {

using namespace ir;     // NOLINT(build/namespaces)
using namespace arith;  // NOLINT(build/namespaces)

Map<Var, Range> Dom(const std::vector<std::pair<Var, int64_t>>& iters) {
  Map<Var, Range> dom;
  for (const auto& [v, e] : iters)
    dom.Set(v, Range(MakeConst(v.dtype(), 0), MakeConst(v.dtype(), e)));
  return dom;
}

std::string Errors(const IterMapResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += std::string(e) + "; ";
  return s;
}

IterMapResult Detect(const Array<PrimExpr>& indices, const Map<Var, Range>& dom,
                     IterMapLevel level = IterMapLevel::kSurjective, PrimExpr pred = Bool(true)) {
  return DetectIterMap(indices, dom, pred, level);
}

// The single split of a detected index: its extent, scale and lower factor.
void ExpectSplit(const IterSumExpr& sum, int64_t extent, int64_t scale, int64_t base = 0) {
  ASSERT_EQ(sum->args.size(), 1u);
  EXPECT_EQ(AsConstInt(sum->args[0]->extent), extent);
  EXPECT_EQ(AsConstInt(sum->args[0]->scale), scale);
  EXPECT_EQ(AsConstInt(sum->base), base);
}

void ExpectSimplify(const Array<PrimExpr>& indices, const Map<Var, Range>& dom,
                    const Array<PrimExpr>& expected,
                    IterMapLevel level = IterMapLevel::kSurjective) {
  Array<PrimExpr> got = IterMapSimplify(indices, dom, Bool(true), level);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(got[i], expected[i]))
        << "index " << i << ": got " << AsText(got[i]) << ", expected " << AsText(expected[i]);
  }
}

// The split a detected index takes of an input iterator (each index is a mark of its own over
// a one-split sum).
IterSplitExpr Inner(const IterSumExpr& sum) {
  IterSplitExpr s = sum->args[0];
  if (auto src = s->source->source.as<IterSumExpr>(); src && (*src)->args.size() == 1) {
    return (*src)->args[0];
  }
  return s;
}

bool IsZero(const PrimExpr& e) { return AsConstInt(e) == 0; }

class IterMapTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"}, z{"z"}, f{"f"}, i0{"i0"}, i1{"i1"}, j{"j"};
};

TEST_F(IterMapTest, Fusion) {
  auto r = Detect({x * 32 + y}, Dom({{x, 8}, {y, 32}}), IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 256, 1);
  // The fused mark's source is the sum of the two whole iterators.
  auto mark = r.indices[0]->args[0]->source;
  auto src = mark->source.as<IterSumExpr>();
  ASSERT_TRUE(src.has_value());
  EXPECT_EQ((*src)->args.size(), 2u);
  // Three levels, written in any order, with a constant offset.
  r = Detect({z + 3 + x * 12 + y * 4}, Dom({{x, 2}, {y, 3}, {z, 4}}), IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 24, 1, 3);
  // A scaled fusion (stride 2).
  r = Detect({x * 4 + y * 2}, Dom({{x, 3}, {y, 2}}));
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 6, 2);
}

TEST_F(IterMapTest, Splitting) {
  auto r = Detect({floordiv(f, 32), floormod(f, 32)}, Dom({{f, 256}}), IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 8, 1);
  ExpectSplit(r.indices[1], 32, 1);
  EXPECT_TRUE(Inner(r.indices[0])->source.same_as(Inner(r.indices[1])->source));
  EXPECT_EQ(AsConstInt(Inner(r.indices[0])->lower_factor), 32);
  // The middle of three.
  r = Detect({floormod(floordiv(f, 32), 8)}, Dom({{f, 1024}}));
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 8, 1);
  EXPECT_EQ(AsConstInt(Inner(r.indices[0])->lower_factor), 32);
  r = Detect({floordiv(f, 256), floordiv(floormod(f, 256), 32), floormod(f, 32)}, Dom({{f, 1024}}),
             IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
}

TEST_F(IterMapTest, Mixed) {
  // A split of a fused iterator: (x * 16 + y) // 4 and % 4.
  auto r = Detect({floordiv(x * 16 + y, 4), floormod(x * 16 + y, 4)}, Dom({{x, 4}, {y, 16}}),
                  IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 16, 1);
  ExpectSplit(r.indices[1], 4, 1);
  // TVM's compound case: fuse(y // 3, x // 5, y % 3) with x in [0, 10), y in [0, 9).
  PrimExpr zf = (floordiv(y, 3) * 2 + floordiv(x, 5)) * 3 + floormod(y, 3);
  r = Detect({zf, floormod(x, 5)}, Dom({{x, 10}, {y, 9}}), IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 18, 1);
  ExpectSplit(r.indices[1], 5, 1);
}

TEST_F(IterMapTest, BijectiveAndSurjectiveFailures) {
  auto dom = Dom({{x, 8}, {y, 6}});
  // An iterator used twice.
  EXPECT_FALSE(Detect({x, x}, dom).ok());
  EXPECT_FALSE(Detect({x, x + 1, y}, dom, IterMapLevel::kBijective).ok());
  EXPECT_FALSE(Detect({y * 8 + x, y}, dom).ok());
  // A missing iterator: surjective yes, bijective no.
  EXPECT_TRUE(Detect({floordiv(x, 4), floormod(x, 4)}, dom).ok());
  auto r = Detect({floordiv(x, 4), floormod(x, 4)}, dom, IterMapLevel::kBijective);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("not used"), std::string::npos) << Errors(r);
  EXPECT_TRUE(Detect({floordiv(x, 4), floormod(x, 4), y}, dom, IterMapLevel::kBijective).ok());
  // Overlapping splits.
  EXPECT_FALSE(Detect({floordiv(x, 2), floormod(x, 4)}, dom).ok());
  // Only part of x: surjective yes, bijective no.
  EXPECT_TRUE(Detect({floordiv(x, 4)}, Dom({{x, 8}})).ok());
  EXPECT_FALSE(Detect({floordiv(x, 4)}, Dom({{x, 8}}), IterMapLevel::kBijective).ok());
  // Factor mismatch and overlapping fusion.
  EXPECT_FALSE(Detect({y * 4 + x}, Dom({{x, 3}, {y, 4}})).ok());
  EXPECT_TRUE(Detect({x * 7 + y}, Dom({{x, 3}, {y, 8}})).ok());
  EXPECT_FALSE(Detect({x * 7 + y}, Dom({{x, 3}, {y, 8}}), IterMapLevel::kBijective).ok());
}

TEST_F(IterMapTest, Refusals) {
  auto dom = Dom({{x, 8}, {y, 6}});
  auto r = Detect({x * y}, dom);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("product of two iterators"), std::string::npos) << Errors(r);
  EXPECT_FALSE(Detect({floordiv(x, y)}, dom).ok());
  EXPECT_FALSE(Detect({max(x, 3)}, dom).ok());
  EXPECT_FALSE(Detect({x * -7 + y}, dom).ok());
  // A divisor that is not provably positive.
  Var c("c");
  EXPECT_FALSE(Detect({floordiv(x, c)}, dom).ok());
  // Under wrap-around the dividend of int8 arithmetic may overflow: refused.
  Var b("b", DataType::Int(8));
  r = Detect({floordiv(b * MakeConst(DataType::Int(8), 4), MakeConst(DataType::Int(8), 8))},
             Dom({{b, 100}}));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(Errors(r).find("overflow"), std::string::npos) << Errors(r);
  // An analyzer in no-overflow mode takes the mathematical value, as TVM does.
  Analyzer exact;
  exact.SetAssumeNoOverflow(true);
  Var d("d"), n("n");
  exact.Bind(n, Range(1, 1024));
  Map<Var, Range> sym;
  sym.Set(d, Range(0, n * 16));
  r = DetectIterMap({floordiv(d, n), floormod(d, n)}, sym, Bool(true), IterMapLevel::kBijective,
                    &exact);
  EXPECT_TRUE(r.ok()) << Errors(r);
}

TEST_F(IterMapTest, Padding) {
  auto dom = Dom({{x, 18}});
  // Both parts of a padded iterator: only without a check (surjective refuses the dependent
  // splits of a padded iterator, bijective any padding).
  auto r = Detect({floordiv(x, 4), floormod(x, 4)}, dom, IterMapLevel::kNoCheck);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 5, 1);
  ExpectSplit(r.indices[1], 4, 1);
  EXPECT_FALSE(IsZero(r.padding_predicate)) << AsText(r.padding_predicate);
  EXPECT_FALSE(Detect({floordiv(x, 4), floormod(x, 4)}, dom).ok());
  EXPECT_FALSE(Detect({floordiv(x, 4), floormod(x, 4)}, dom, IterMapLevel::kBijective).ok());
  r = Detect({floordiv(x, 4)}, dom);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 5, 1);
  EXPECT_FALSE(IsZero(r.padding_predicate)) << AsText(r.padding_predicate);
  // Left padding by an offset.
  r = Detect({floordiv(y + 80, 32)}, Dom({{y, 176}}));
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 6, 1, 2);
  // No padding needed: the predicate is false.
  r = Detect({floordiv(x, 2), floormod(x, 2)}, dom);
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_TRUE(IsZero(r.padding_predicate)) << AsText(r.padding_predicate);
}

TEST_F(IterMapTest, Predicates) {
  // A non-dividing split as a schedule writes it: i0 * 10 + i1 < 128.
  auto r =
      Detect({x * 10 + y}, Dom({{x, 13}, {y, 10}}), IterMapLevel::kSurjective, x * 10 + y < 128);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 128, 1);
  r = Detect({x * 10 + y}, Dom({{x, 13}, {y, 10}}), IterMapLevel::kSurjective, x * 10 + y >= 6);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 124, 1, 6);
  // A bound on one iterator narrows its range.
  r = Detect({x}, Dom({{x, 48}}), IterMapLevel::kSurjective, x < 10);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 10, 1);
  // Not a conjunction of bounds.
  EXPECT_FALSE(Detect({x}, Dom({{x, 48}}), IterMapLevel::kSurjective, ne(x, 3)).ok());
}

// Bindings as schedule primitives leave them, and their re-simplification.
TEST_F(IterMapTest, ScheduleSplitFuse) {
  // split(i, 16): vi = i0 * 16 + i1.
  auto dom = Dom({{i0, 8}, {i1, 16}, {j, 32}});
  auto r = Detect({i0 * 16 + i1, j}, dom, IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSplit(r.indices[0], 128, 1);
  ExpectSimplify({i0 * 16 + i1, j}, dom, {i0 * 16 + i1, j});
  // fuse(i, j) with j of extent 32: vi = f // 32, vj = f % 32, one source split twice.
  auto fdom = Dom({{f, 4096}});
  r = Detect({floordiv(f, 32), floormod(f, 32)}, fdom, IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  EXPECT_TRUE(Inner(r.indices[0])->source.same_as(Inner(r.indices[1])->source));
  ExpectSimplify({floordiv(f, 32), floormod(f, 32)}, fdom, {floordiv(f, 32), floormod(f, 32)});
  // split then fuse(i1, j): vi = i0 * 16 + f // 32, vj = f % 32 with f in [0, 512).
  auto sdom = Dom({{i0, 8}, {f, 512}});
  r = Detect({i0 * 16 + floordiv(f, 32), floormod(f, 32)}, sdom, IterMapLevel::kBijective);
  ASSERT_TRUE(r.ok()) << Errors(r);
  ExpectSimplify({i0 * 16 + floordiv(f, 32), floormod(f, 32)}, sdom,
                 {i0 * 16 + floordiv(f, 32), floormod(f, 32)});
  // fuse then split back by the same factor: vi = (fo * 32 + fi) // 32 = fo, vj = fi.
  auto bdom = Dom({{i0, 128}, {i1, 32}});
  ExpectSimplify({floordiv(i0 * 32 + i1, 32), floormod(i0 * 32 + i1, 32)}, bdom, {i0, i1},
                 IterMapLevel::kBijective);
  // fuse of a split: (i // 4) * 4 + i % 4 is i.
  ExpectSimplify({floordiv(x, 4) * 4 + floormod(x, 4)}, Dom({{x, 64}}), {x});
  // A detection that fails leaves the bindings as they are.
  ExpectSimplify({x * y}, Dom({{x, 4}, {y, 4}}), {x * y});
}

TEST_F(IterMapTest, NormalizeToExpr) {
  auto r = Detect({floormod(floordiv(f, 32), 8)}, Dom({{f, 1024}}));
  ASSERT_TRUE(r.ok()) << Errors(r);
  PrimExpr e = NormalizeIterMapToExpr(r.indices[0]);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(e, floordiv(floormod(f, 256), 32))) << AsText(e);
  r = Detect({floordiv(f, 32)}, Dom({{f, 1024}}));
  e = NormalizeIterMapToExpr(r.indices[0]);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(e, floordiv(f, 32))) << AsText(e);
}

}  // namespace
}  // namespace tessel
