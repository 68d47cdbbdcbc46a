// LowerThreadBinding: text before/expected pairs compared structurally, the errors, unchanged
// inputs (CPU functions, attributes already lowered), and the thread-tag reader.
#include <gtest/gtest.h>
#include <tessel/transform/lower_thread_binding.h>

#include <string>

#include "../ir/expect_error.h"
#include "expect_pass.h"

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)
using testing::ExpectPass;
using testing::ExpectUnchanged;
using testing::ParseFunc;

PrimFunc Lower(const PrimFunc& f) { return LowerThreadBinding(f); }

TEST(LowerThreadBinding, BlockAndThreadLoopsBecomeAttributes) {
  ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32")):
    for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            if bx * 64 + tx < n:
                A[bx * 64 + tx] = T.float32(0)
)",
             R"(
@T.prim_func
def f(A: T.Buffer((n,), "float32")):
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", (n + 63) // 64):
        with T.attr(threadIdx_x, "thread_extent", 64):
            if blockIdx_x * 64 + threadIdx_x < n:
                A[blockIdx_x * 64 + threadIdx_x] = T.float32(0)
)");
}

TEST(LowerThreadBinding, NonZeroMinIsAddedToTheThreadVariable) {
  ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(4, 36, thread="threadIdx.y"):
        A[tx] = T.float32(1)
)",
             R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    threadIdx_y = T.int32()
    with T.attr(threadIdx_y, "thread_extent", 32):
        A[threadIdx_y + 4] = T.float32(1)
)");
}

TEST(LowerThreadBinding, SiblingLoopsOfOneTagAreFine) {
  ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            A[bx * 32 + tx] = T.float32(1)
        for tx2 in T.thread_binding(32, thread="threadIdx.x"):
            A[bx * 32 + tx2] = A[bx * 32 + tx2] + T.float32(1)
)",
             R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    threadIdx_x_1 = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 2):
        with T.attr(threadIdx_x, "thread_extent", 32):
            A[blockIdx_x * 32 + threadIdx_x] = T.float32(1)
        with T.attr(threadIdx_x_1, "thread_extent", 32):
            A[blockIdx_x * 32 + threadIdx_x_1] = A[blockIdx_x * 32 + threadIdx_x_1] + T.float32(1)
)");
}

TEST(LowerThreadBinding, SameTagNestedOverAnotherExtentIsAnError) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for i in T.thread_binding(8, thread="threadIdx.x"):
        for j in T.thread_binding(4, thread="threadIdx.x"):
            A[i * 8 + j] = T.float32(1)
)");
  testing::ExpectError(
      [&] { LowerThreadBinding(f); }, "ValueError",
      {"LowerThreadBinding", "threadIdx.x", "bound twice", "'j' inside 'i'", "different extent"});
}

TEST(LowerThreadBinding, SameTagNestedOverTheSameExtentIsTheSameThread) {
  // TVM's cooperative fetch: a copy loop inside the thread loop binds the same thread again.
  ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), S: T.Buffer((64,), "float32")):
    for ty in T.thread_binding(8, thread="threadIdx.y"):
        for k in range(8):
            for ty2 in T.thread_binding(8, thread="threadIdx.y"):
                S[k * 8 + ty2] = A[k * 8 + ty2]
        A[ty] = S[ty]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), S: T.Buffer((64,), "float32")):
    threadIdx_y = T.int32()
    with T.attr(threadIdx_y, "thread_extent", 8):
        for k in range(8):
            S[k * 8 + threadIdx_y] = A[k * 8 + threadIdx_y]
        A[threadIdx_y] = S[threadIdx_y]
)");
}

TEST(LowerThreadBinding, LoopInsideAttributeOfTheSameTagIsTheSameThread) {
  ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    blockIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 8):
        for j in T.thread_binding(8, thread="blockIdx.x"):
            A[blockIdx_x * 8 + j] = T.float32(1)
)",
             R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    blockIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 8):
        A[blockIdx_x * 8 + blockIdx_x] = T.float32(1)
)");
  PrimFunc g = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    blockIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 8):
        for j in T.thread_binding(2, thread="blockIdx.x"):
            A[blockIdx_x * 8 + j] = T.float32(1)
)");
  testing::ExpectError([&] { LowerThreadBinding(g); }, "ValueError", {"blockIdx.x", "twice"});
}

TEST(LowerThreadBinding, UnknownTagIsAnError) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for i in T.thread_binding(64, thread="vthread"):
        A[i] = T.float32(1)
)");
  testing::ExpectError([&] { LowerThreadBinding(f); }, "ValueError", {"vthread", "'i'"});
}

TEST(LowerThreadBinding, CpuFunctionsAndLoweredKernelsAreReturnedAsIs) {
  ExpectUnchanged(Lower, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        A[i] = T.float32(1)
)");
  ExpectUnchanged(Lower, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        A[threadIdx_x] = T.float32(1)
)");
}

TEST(LowerThreadBinding, ModuleKeepsUntouchedModules) {
  IRModule mod({{"f", ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for i in range(64):
        A[i] = T.float32(1)
)")}});
  EXPECT_TRUE(LowerThreadBinding(mod).same_as(mod));
}

TEST(LowerThreadBinding, ThreadTagOfReadsTheName) {
  EXPECT_EQ(ThreadTagOf(Var("threadIdx_x")), "threadIdx.x");
  EXPECT_EQ(ThreadTagOf(Var("blockIdx.z")), "blockIdx.z");
  EXPECT_EQ(ThreadTagOf(Var("threadIdx_y_3")), "threadIdx.y");
  EXPECT_EQ(ThreadTagOf(Var("threadIdx_w")), std::nullopt);
  EXPECT_EQ(ThreadTagOf(Var("tx")), std::nullopt);
  EXPECT_EQ(ThreadTagOf(Var("blockIdx_xy")), std::nullopt);
}

}  // namespace
}  // namespace transform
}  // namespace tessel
