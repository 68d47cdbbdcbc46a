#include <gtest/gtest.h>
#include <tessel/transform/unroll_loop.h>

#include <string>

#include "expect_pass.h"

namespace tessel {
namespace {

using namespace ir;  // NOLINT(build/namespaces)
using testing::ExpectPass;
using testing::ExpectUnchanged;

PrimFunc Unroll(const PrimFunc& f) { return transform::UnrollLoop(f); }

void ExpectUnroll(const std::string& before, const std::string& expected) {
  ExpectPass(Unroll, before, expected);
}

TEST(UnrollLoop, CopiesTheBodyPerIteration) {
  ExpectUnroll(R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in T.unroll(2, 5):
        A[i] = i + 1
)",
               R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    A[2] = 2 + 1
    A[3] = 3 + 1
    A[4] = 4 + 1
)");
}

TEST(UnrollLoop, SymbolicMinIsAddedNotFolded) {
  ExpectUnroll(R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32"), m: T.int32):
    for i in T.unroll(m, m + 2):
        A[i] = 0
)",
               R"(
@T.prim_func
def f(A: T.Buffer((n,), "int32"), m: T.int32):
    A[m] = 0
    A[m + 1] = 0
)");
}

// The text format scopes a LetStmt or an allocation to the end of its block, so the copies are
// wrapped in an `if` to be written unambiguously; the next test checks the unwrapped shape.
TEST(UnrollLoop, LetInsideIsRenamedPerCopy) {
  ExpectUnroll(R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32"), n: T.int32):
    for i in T.unroll(2):
        if n > 0:
            x: T.int32 = i * 2
            A[x] = T.Let(y + x, where={y: x + 1})
)",
               R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32"), n: T.int32):
    if n > 0:
        x: T.int32 = 0 * 2
        A[x] = T.Let(y + x, where={y: x + 1})
    if n > 0:
        x_1: T.int32 = 1 * 2
        A[x_1] = T.Let(y_1 + x_1, where={y_1: x_1 + 1})
)");
}

TEST(UnrollLoop, CopiesAreSiblingsBindingDistinctVariables) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in T.unroll(3):
        x: T.int32 = i * 2
        A[x] = x
)");
  PrimFunc out = transform::UnrollLoop(in);
  const auto* seq = out->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr) << AsText(out);
  ASSERT_EQ(seq->seq.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const auto* let = seq->seq[k].as<LetStmtNode>();
    ASSERT_NE(let, nullptr);
    const auto* value = let->value.as<MulNode>();
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(value->a.as<IntImmNode>()->value, k);
    const auto* store = let->body.as<BufferStoreNode>();
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(store->value.same_as(let->var));
    if (k > 0) {
      EXPECT_FALSE(let->var.same_as(seq->seq[k - 1].as<LetStmtNode>()->var));
    }
  }
  EXPECT_EQ(testing::VerifyText(out), "");
}

TEST(UnrollLoop, NestedUnrollMultipliesOut) {
  ExpectUnroll(R"(
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in T.unroll(2):
        for j in T.unroll(2):
            A[i * 2 + j] = 0
)",
               R"(
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    A[0 * 2 + 0] = 0
    A[0 * 2 + 1] = 0
    A[1 * 2 + 0] = 0
    A[1 * 2 + 1] = 0
)");
}

TEST(UnrollLoop, InnerSerialLoopAndAllocationAreRenamed) {
  ExpectUnroll(R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), n: T.int32):
    for i in T.unroll(2):
        if n > 0:
            t_data = T.allocate([4], "float32", "local")
            t = T.decl_buffer((4,), "float32", data=t_data, scope="local")
            for k in range(4):
                t[k] = A[i * 4 + k]
            A[i] = t[0]
)",
               R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), n: T.int32):
    if n > 0:
        t_data = T.allocate([4], "float32", "local")
        t = T.decl_buffer((4,), "float32", data=t_data, scope="local")
        for k in range(4):
            t[k] = A[0 * 4 + k]
        A[0] = t[0]
    if n > 0:
        t_data_1 = T.allocate([4], "float32", "local")
        t_1 = T.decl_buffer((4,), "float32", data=t_data_1, scope="local")
        for k_1 in range(4):
            t_1[k_1] = A[1 * 4 + k_1]
        A[1] = t_1[0]
)");
}

TEST(UnrollLoop, ExtentOneLoopsBecomeTheirBody) {
  ExpectUnroll(R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in range(1):
        A[i] = i
    for j in range(5, 6):
        for k in T.unroll(1):
            A[j + k] = 1
)",
               R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    A[0] = 0
    A[5 + 0] = 1
)");
}

TEST(UnrollLoop, ZeroExtentLeavesANoOp) {
  ExpectUnroll(R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in T.unroll(0):
        A[i] = i
)",
               R"(
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    T.evaluate(0)
)");
}

TEST(UnrollLoop, LargeSymbolicAndOtherLoopsStay) {
  ExpectUnchanged(Unroll, R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32"), n: T.int32):
    for i in T.unroll(17):
        A[i] = 0
    for i in T.unroll(n):
        A[i] = 0
    for i in range(4):
        A[i] = 0
    for i in T.parallel(1):
        A[i] = 0
)");
}

TEST(UnrollLoop, LimitIsInclusive) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32")):
    for i in T.unroll(16):
        A[i] = 0
)");
  PrimFunc out = transform::UnrollLoop(in);
  const auto* seq = out->body.as<SeqStmtNode>();
  ASSERT_NE(seq, nullptr) << AsText(out);
  EXPECT_EQ(seq->seq.size(), 16u);
  EXPECT_EQ(testing::VerifyText(out), "");
}

}  // namespace
}  // namespace tessel
