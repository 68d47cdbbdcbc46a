// LowerBlocks: text-format before/expected pairs compared structurally, the errors it raises, and
// every example lowered (with FlattenBuffer and Simplify after it) to verified block-free IR.
#include <gtest/gtest.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/ops.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/flatten_buffer.h>
#include <tessel/transform/lower_blocks.h>
#include <tessel/transform/simplify.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "../ir/expect_error.h"
#include "expect_pass.h"
#include "stmt_interp.h"

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

// The elements a parameter buffer reaches (what the interpreter must allocate).
PrimExpr FlatExtentForTest(const Buffer& b) {
  PrimExpr span = b->elem_offset + 1;
  PrimExpr acc = 1;
  for (size_t k = b->shape.size(); k-- > 0;) {
    PrimExpr stride = b->strides.empty() ? acc : b->strides[k];
    span = span + (b->shape[k] - 1) * stride;
    acc = acc * b->shape[k];
  }
  return span;
}

// LowerBlocks(before) equals expected structurally, and the result is well-formed.
void ExpectLower(const std::string& before, const std::string& expected) {
  PrimFunc in = testing::ParseFunc(before), want = testing::ParseFunc(expected);
  ASSERT_EQ(testing::VerifyText(in), "") << AsText(in);
  PrimFunc got = LowerBlocks(in);
  auto mismatch = tvm::ffi::StructuralEqual::GetFirstMismatch(got, want, /*map_free_vars=*/true);
  EXPECT_FALSE(mismatch.has_value())
      << "first difference at " << testing::MismatchPath((*mismatch).get<0>()) << "\ngot:\n"
      << AsText(got) << "\nexpected:\n"
      << AsText(want);
  EXPECT_EQ(testing::VerifyText(got), "") << AsText(got);
}

TEST(LowerBlocks, MatmulInitIsGuardedByTheReduceVariableAtItsMin) {
  ExpectLower(R"(
@T.prim_func
def matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    for i in range(128):
        for j in range(128):
            for k in range(128):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)",
              R"(
@T.prim_func
def matmul(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    for i in range(128):
        for j in range(128):
            C[i, j] = T.float32(0)
            for k in range(128):
                C[i, j] = C[i, j] + A[i, k] * B[k, j]
)");
}

// The init leaves every reduce loop that directly encloses the block (a serial loop of constant
// extent >= 1 whose variable the guard compares with the loop's min), as max_pool2d's 2x2 window.
TEST(LowerBlocks, InitLeavesTheReduceLoopsAroundTheBlock) {
  ExpectLower(R"(
@T.prim_func
def pool(A: T.Buffer((8, 8), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j, ri, rj in T.grid(4, 4, 2, 2):
        with T.block("B"):
            vi, vj, vri, vrj = T.axis.remap("SSRR", [i, j, ri, rj])
            with T.init():
                B[vi, vj] = T.float32(-3.0e38)
            B[vi, vj] = T.max(B[vi, vj], A[vi * 2 + vri, vj * 2 + vrj])
)",
              R"(
@T.prim_func
def pool(A: T.Buffer((8, 8), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j in T.grid(4, 4):
        B[i, j] = T.float32(-3.0e38)
        for ri, rj in T.grid(2, 2):
            B[i, j] = T.max(B[i, j], A[i * 2 + ri, j * 2 + rj])
)");
}

// The init stays where leaving a loop would change what runs: a spatial loop inside the reduce
// loop (the init must run once per element, in the first k iteration), and a reduce loop whose
// extent may be 0 (then the init never ran).
TEST(LowerBlocks, InitStaysInsideWhenHoistingWouldChangeWhatRuns) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
    for k in range(8):
        for i in range(8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
    for i in range(8):
        for k in range(n):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
)",
              R"(
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
    for k in range(8):
        for i in range(8):
            if k == 0:
                B[i] = T.float32(0)
            B[i] = B[i] + A[i, k]
    for i in range(8):
        for k in range(n):
            if k == 0:
                B[i] = T.float32(0)
            B[i] = B[i] + A[i, k]
)");
}

TEST(LowerBlocks, InitGuardUsesEveryReduceAxisAndItsDomainMin) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((8, 8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for j in range(6):
            for k in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.reduce((2, 8), j + 2)
                    vk = T.axis.reduce(8, k)
                    T.reads(A[vi, vj, vk])
                    T.writes(B[vi])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vj, vk]
)",
              R"(
@T.prim_func
def f(A: T.Buffer((8, 8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for j in range(6):
            if j + 2 == 2:
                B[i] = T.float32(0)
            for k in range(8):
                B[i] = B[i] + A[i, j + 2, k]
)");
}

TEST(LowerBlocks, PredicateBecomesAnIf) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for io in range((n + 15) // 16):
        for ii in range(16):
            with T.block("B"):
                vi = T.axis.spatial(n, io * 16 + ii)
                T.where(io * 16 + ii < n)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(2)
)",
              R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for io in range((n + 15) // 16):
        for ii in range(16):
            if io * 16 + ii < n:
                B[io * 16 + ii] = A[io * 16 + ii] * T.float32(2)
)");
}

TEST(LowerBlocks, RootBlockAllocationsBecomeAllocateAndDeclBuffer) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16,), "float32")):
    with T.block("root"):
        T.reads()
        T.writes()
        t = T.alloc_buffer((16, 4), "float32")
        s = T.alloc_buffer((4,), "float32", scope="local")
        for i in range(16):
            for j in range(4):
                t[i, j] = A[i, j]
                s[j] = t[i, j]
            B[i] = s[0]
)",
              R"(
@T.prim_func
def f(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16,), "float32")):
    t_data = T.allocate([16, 4], "float32", "global")
    t = T.decl_buffer((16, 4), "float32", data=t_data)
    s_data = T.allocate([4], "float32", "local")
    s = T.decl_buffer((4,), "float32", data=s_data, scope="local")
    for i in range(16):
        for j in range(4):
            t[i, j] = A[i, j]
            s[j] = t[i, j]
        B[i] = s[0]
)");
}

TEST(LowerBlocks, PredicateGuardsTheAllocationsAndStridedBufferGetsOneExtent) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((10,), "float32")):
    for i in range(12):
        with T.block("b"):
            vi = T.axis.spatial(10, i)
            T.where(i < 10)
            T.reads()
            T.writes(A[vi])
            t = T.alloc_buffer((4, 4), "float32", strides=(8, 1))
            t[1, 2] = T.float32(1)
            A[vi] = t[1, 2]
)",
              R"(
@T.prim_func
def f(A: T.Buffer((10,), "float32")):
    for i in range(12):
        if i < 10:
            t_data = T.allocate([28], "float32", "global")
            t = T.decl_buffer((4, 4), "float32", data=t_data, strides=(8, 1))
            t[1, 2] = T.float32(1)
            A[i] = t[1, 2]
)");
}

TEST(LowerBlocks, RampIndexIntoAMatchedBufferStaysARamp) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((8, 16), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            T.reads()
            T.writes(A[vi, 4:12])
            row = T.match_buffer(A[vi, 4:12], (8,), "float32")
            row[0:4] = T.Broadcast(T.float32(1), 4)
)",
              R"(
@T.prim_func
def f(A: T.Buffer((8, 16), "float32")):
    for i in range(8):
        A[i, 4:8] = T.Broadcast(T.float32(1), 4)
)");
}

TEST(LowerBlocks, AllocationShapeMentioningAnIterVarIsSubstituted) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            T.reads()
            T.writes(A[vi, 0:vi + 1])
            t = T.alloc_buffer((vi + 1,), "float32")
            for j in range(vi + 1):
                t[j] = T.float32(1)
                A[vi, j] = t[j]
)",
              R"(
@T.prim_func
def f(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        t_data = T.allocate([i + 1], "float32", "global")
        t = T.decl_buffer((i + 1,), "float32", data=t_data)
        for j in range(i + 1):
            t[j] = T.float32(1)
            A[i, j] = t[j]
)");
}

TEST(LowerBlocks, MatchBufferAccessesGoToTheSourceRegion) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((4, 4), "float32")):
    for io in range(4):
        for jo in range(4):
            with T.block("tile"):
                vi, vj = T.axis.remap("SS", [io, jo])
                T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                T.writes(B[vi, vj])
                Asub = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16), "float32", strides=(64, 1), elem_offset=vi * 1024 + vj * 16)
                B[vi, vj] = T.float32(0)
                for ii in range(16):
                    for jj in range(16):
                        B[vi, vj] = B[vi, vj] + Asub[ii, jj]
)",
              R"(
@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((4, 4), "float32")):
    for io in range(4):
        for jo in range(4):
            B[io, jo] = T.float32(0)
            for ii in range(16):
                for jj in range(16):
                    B[io, jo] = B[io, jo] + A[io * 16 + ii, jo * 16 + jj]
)");
}

TEST(LowerBlocks, MatchBufferOfLowerRankLinesUpWithTheLastDimensions) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((8, 16), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.spatial(8, i)
            T.reads()
            T.writes(A[vi, 0:16])
            row = T.match_buffer(A[vi, 0:16], (16,), "float32")
            for j in range(16):
                row[j] = T.float32(1)
)",
              R"(
@T.prim_func
def f(A: T.Buffer((8, 16), "float32")):
    for i in range(8):
        for j in range(16):
            A[i, j] = T.float32(1)
)");
}

TEST(LowerBlocks, MatchBufferSymbolsTakeTheRegionsValues) {
  // n, s0, s1 and off are bound by the match: the region's extent, A's strides, and the
  // region's offset in A.
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((8, 64), "int32")):
    for io in range(8):
        with T.block("tile"):
            vi = T.axis.spatial(8, io)
            T.reads()
            T.writes(A[vi * 8:vi * 8 + 8, 0:64], B[vi, 0:3])
            Asub = T.match_buffer(A[vi * 8:vi * 8 + 8, 0:64], (n, 64), "float32", strides=(s0, s1), elem_offset=off)
            for ii in range(n):
                Asub[ii, 0] = T.float32(0)
            B[vi, 0] = off
            B[vi, 1] = s0
            B[vi, 2] = s1
)",
              R"(
@T.prim_func
def f(A: T.Buffer((64, 64), "float32"), B: T.Buffer((8, 64), "int32")):
    for io in range(8):
        for ii in range(8):
            A[io * 8 + ii, 0] = T.float32(0)
        B[io, 0] = io * 8 * 64
        B[io, 1] = 64
        B[io, 2] = 1
)");
}

TEST(LowerBlocks, SymbolicShapesAndNestedBlocks) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    for io in range(n):
        with T.block("outer"):
            vo = T.axis.spatial(n, io)
            T.reads(A[vo, 0:m])
            T.writes(B[vo, 0:m])
            for j in range(m):
                with T.block("inner"):
                    vi = T.axis.spatial(n, vo)
                    vj = T.axis.spatial(m, j)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj]
)",
              R"(
@T.prim_func
def f(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    for io in range(n):
        for j in range(m):
            B[io, j] = A[io, j]
)");
}

TEST(LowerBlocks, NestedMatchBufferResolvesToTheOutermostSource) {
  ExpectLower(R"(
@T.prim_func
def f(A: T.Buffer((4, 32), "float32")):
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            T.reads()
            T.writes(A[vi, 0:32])
            row = T.match_buffer(A[vi, 0:32], (32,), "float32")
            for h in range(2):
                with T.block("inner"):
                    vh = T.axis.spatial(2, h)
                    T.reads()
                    T.writes(row[vh * 16:vh * 16 + 16])
                    half = T.match_buffer(row[vh * 16:vh * 16 + 16], (16,), "float32")
                    for k in range(16):
                        half[k] = T.float32(0)
)",
              R"(
@T.prim_func
def f(A: T.Buffer((4, 32), "float32")):
    for i in range(4):
        for h in range(2):
            for k in range(16):
                A[i, h * 16 + k] = T.float32(0)
)");
}

TEST(LowerBlocks, FunctionWithoutBlocksIsReturnedUnchanged) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((16, 4), "float32")):
    for i in range(16):
        for j in range(4):
            A[i, j] = T.float32(0)
)");
  EXPECT_TRUE(LowerBlocks(in).same_as(in));
  IRModule mod({{"f", in}});
  EXPECT_TRUE(LowerBlocks(mod).same_as(mod));
  EXPECT_TRUE(LowerBlocksPass()(mod).same_as(mod));
  PrimFunc lowered = LowerBlocks(testing::ParseFunc(R"(
@T.prim_func
def g(A: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("A"):
            vi = T.axis.spatial(16, i)
            T.reads()
            T.writes(A[vi])
            A[vi] = T.float32(0)
)"));
  EXPECT_TRUE(LowerBlocks(lowered).same_as(lowered));
}

TEST(LowerBlocks, InitWithoutReduceAxisIsAnError) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("A"):
            vi = T.axis.spatial(16, i)
            T.reads()
            T.writes(A[vi])
            with T.init():
                A[vi] = T.float32(0)
            A[vi] = A[vi] + T.float32(1)
)");
  testing::ExpectError([&] { LowerBlocks(in); }, "ValueError",
                       {"LowerBlocks: block \"A\" has T.init() but no reduce axis"});
}

TEST(LowerBlocks, MatchBufferShapeContradictingTheRegionIsAnError) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    with T.block("tile"):
        T.reads()
        T.writes(A[0:16])
        Asub = T.match_buffer(A[0:16], (8,), "float32")
        Asub[0] = T.float32(0)
)");
  testing::ExpectError(
      [&] { LowerBlocks(in); }, "ValueError",
      {"block \"tile\"", "match_buffer Asub: shape[0] is 8", "the source region gives 16"});
}

// ---- semantics: the reference interpreter runs a function before and after lowering ----

// Sets up `interp` for f: scalars and free symbols get small fixed values, each parameter buffer
// memory filled with values that depend only on its position and index. Returns the memory ids
// of the parameter buffers.
std::vector<int> SetUpArguments(const PrimFunc& f, testing::StmtInterp* interp) {
  std::vector<int> ids;
  std::unordered_set<const VarNode*> bound;
  auto bind = [&](const PrimExpr& e, double v) {
    if (const auto* var = e.as<VarNode>()) {
      if (bound.insert(var).second) interp->Bind(GetRef<Var>(var), v);
    }
  };
  for (const Var& p : f->params) {
    if (!f->buffer_map.count(p) && !p.dtype().is_handle()) bind(p, 6);
  }
  if (auto names = f->attrs.Get("tessel.free_vars")) {
    std::unordered_set<std::string> wanted;
    for (const Any& n : names->cast<Array<Any>>()) wanted.insert(n.cast<String>());
    PostOrderVisit(f->body, [&](const ObjectRef& n) {
      if (const auto* v = n.as<VarNode>()) {
        if (wanted.count(v->name_hint)) bind(GetRef<Var>(v), 4);
      }
    });
  }
  for (size_t i = 0; i < f->params.size(); ++i) {
    auto buf = f->buffer_map.Get(f->params[i]);
    if (!buf) continue;
    for (const PrimExpr& e : (*buf)->shape) bind(e, 5);
    for (const PrimExpr& e : (*buf)->strides) bind(e, 7);
    bind((*buf)->elem_offset, 3);
    int64_t n = static_cast<int64_t>(interp->Scalar(FlatExtentForTest(*buf)));
    DataType t = (*buf)->dtype;
    ids.push_back(interp->BindMemory((*buf)->data, n < 1 ? 1 : n, [&](int64_t k) {
      int64_t h = (static_cast<int64_t>(i) * 7919 + k * 104729) % 1009;
      if (t.is_float()) return static_cast<double>(static_cast<float>(h / 100.0 - 5.0));
      if (t.is_bool()) return static_cast<double>(h % 2);
      return static_cast<double>(h % 17 - (t.is_uint() ? 0 : 8));
    }));
  }
  return ids;
}

// Runs before and after on the same arguments. Returns false (with *why) when the interpreter
// cannot run `before`; fails the test when `after` cannot run or computes something else.
bool ExpectSameResults(const PrimFunc& before, const PrimFunc& after, std::string* why) {
  testing::StmtInterp a, b;
  std::vector<int> ids_a, ids_b;
  try {
    ids_a = SetUpArguments(before, &a);
    a.Exec(before->body);
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  try {
    ids_b = SetUpArguments(after, &b);
    b.budget = a.budget + 3000000;
    b.Exec(after->body);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the lowered function does not run: " << e.what() << "\n" << AsText(after);
    return true;
  }
  for (size_t i = 0; i < ids_a.size(); ++i) {
    const auto& x = a.memory[ids_a[i]];
    const auto& y = b.memory[ids_b[i]];
    for (size_t k = 0; k < x.size(); ++k) {
      bool same = x[k] == y[k] || (std::isnan(x[k]) && std::isnan(y[k])) ||
                  std::fabs(x[k] - y[k]) <= 1e-5 * std::max(1.0, std::fabs(x[k]));
      if (!same) {
        ADD_FAILURE() << "parameter buffer " << i << " element " << k << ": " << x[k] << " before, "
                      << y[k] << " after lowering\n"
                      << AsText(after);
        return true;
      }
    }
  }
  return true;
}

void ExpectLoweringKeepsResults(const std::string& text) {
  PrimFunc f = testing::ParseFunc(text);
  std::string why;
  PrimFunc lowered = Simplify(FlattenBuffer(LowerBlocks(f)));
  EXPECT_TRUE(ExpectSameResults(f, lowered, &why)) << why;
}

TEST(LowerBlocks, SemanticsMatmulWithInit) {
  ExpectLoweringKeepsResults(R"(
@T.prim_func
def matmul(A: T.Buffer((12, 10), "float32"), B: T.Buffer((10, 9), "float32"), C: T.Buffer((12, 9), "float32")):
    for i in range(12):
        for j in range(9):
            for k in range(10):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(LowerBlocks, SemanticsMatchBufferStridesAndOffsetSymbols) {
  ExpectLoweringKeepsResults(R"(
@T.prim_func
def f(A: T.Buffer((16, 12), "float32"), B: T.Buffer((4, 4), "float32", strides=(9, 2), elem_offset=3)):
    for io in range(4):
        for jo in range(3):
            with T.block("tile"):
                vi, vj = T.axis.remap("SS", [io, jo])
                T.reads(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4])
                T.writes(B[vi, vj])
                Asub = T.match_buffer(A[vi * 4:vi * 4 + 4, vj * 4:vj * 4 + 4], (n, 4), "float32", strides=(s0, s1), elem_offset=off)
                B[vi, vj] = T.Cast("float32", off + s0 * 100 + s1 * 1000)
                for ii in range(n):
                    for jj in range(4):
                        B[vi, vj] = B[vi, vj] + Asub[ii, jj] * T.Cast("float32", ii - jj)
)");
}

// ---- every example through the CPU pipeline's lowering passes ----

bool HasBlockOrNdAccess(const PrimFunc& f, std::string* what) {
  bool bad = false;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (n.as<BlockNode>() || n.as<BlockRealizeNode>()) {
      bad = true;
      *what = "a block";
    }
    if (const auto* load = n.as<BufferLoadNode>()) {
      if (load->indices.size() != 1 || load->buffer->shape.size() != 1) {
        bad = true;
        *what = "an N-D load of " + std::string(load->buffer->name);
      }
    }
    if (const auto* store = n.as<BufferStoreNode>()) {
      if (store->indices.size() != 1 || store->buffer->shape.size() != 1) {
        bad = true;
        *what = "an N-D store to " + std::string(store->buffer->name);
      }
    }
    if (const auto* alloc = n.as<AllocateNode>()) {
      if (alloc->extents.size() != 1) {
        bad = true;
        *what = "a multi-extent Allocate";
      }
    }
  });
  return bad;
}

TEST(LowerBlocks, EveryExampleLowersToVerifiedFlatIR) {
  std::filesystem::path dir = std::filesystem::path(TESSEL_SOURCE_DIR) / "examples";
  int count = 0, checked = 0;
  std::string skipped, run;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".py") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    IRModule mod = ParseModule(text.str(), entry.path().filename().string());
    ASSERT_TRUE(VerifyWellFormed(mod).empty());
    IRModule lowered = Simplify(FlattenBuffer(LowerBlocks(mod)));
    for (const auto& kv : lowered->functions) {
      EXPECT_EQ(testing::VerifyText(kv.second), "") << AsText(kv.second);
      std::string what;
      EXPECT_FALSE(HasBlockOrNdAccess(kv.second, &what)) << what << " left in\n"
                                                         << AsText(kv.second);
      // Parameter buffers keep their declaration for the host wrapper.
      EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(kv.second->buffer_map,
                                                   mod->functions[kv.first]->buffer_map));
    }
    for (const auto& kv : lowered->functions) {
      std::string why;
      if (ExpectSameResults(mod->functions[kv.first], kv.second, &why)) {
        ++checked;
        run += " " + std::string(kv.first);
      } else {
        skipped += "  " + entry.path().filename().string() + ": " + why + "\n";
      }
    }
    // Both passes are idempotent on their own output.
    IRModule once = FlattenBuffer(LowerBlocks(mod));
    EXPECT_TRUE(LowerBlocks(once).same_as(once));
    EXPECT_TRUE(FlattenBuffer(once).same_as(once));
    ++count;
  }
  EXPECT_GE(count, 40);
  // Most examples run on the reference interpreter; the rest need threads or big budgets.
  EXPECT_GE(checked, 20) << "not run:\n" << skipped;
  std::cout << "functions run before and after lowering (" << checked << "):" << run
            << "\nnot run:\n"
            << skipped;
}

TEST(LowerBlocks, ReductionOverConcurrentLoopsIsRefused) {
  // Threads (or parallel iterations, or vector lanes) bound to a reduce axis would all update
  // B[vi] at once: refused with the block, iterator and loop named.
  const char* kinds[][2] = {{"T.thread_binding(128, thread=\"threadIdx.x\")", "threadIdx.x"},
                            {"T.parallel(128)", "a parallel loop"},
                            {"T.vectorized(128)", "a vectorized loop"}};
  for (const auto& kind : kinds) {
    PrimFunc f = testing::ParseFunc(std::string(R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in )") + kind[0] + R"(:
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
)");
    testing::ExpectError([&] { LowerBlocks(f); }, "ValueError",
                         {"block \"B\"", "reduction iterator 'vk'", "loop 'k'", kind[1]});
  }
  // A spatial axis over threads, with the reduction serial inside each thread, is fine.
  PrimFunc ok = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        for k in range(128):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
)");
  EXPECT_NO_THROW(LowerBlocks(ok));
}

}  // namespace
}  // namespace transform
}  // namespace tessel
