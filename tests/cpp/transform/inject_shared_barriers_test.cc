// InjectSharedBarriers: where barriers go (write then read, write after read across loop
// iterations, existing barriers, thread-dependent branches split around the barrier), where they
// do not (registers, local buffers, global memory), and the errors.
#include <gtest/gtest.h>
#include <tessel/transform/inject_shared_barriers.h>

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

PrimFunc InjectOnce(const PrimFunc& f) { return InjectSharedBarriers(f); }

PrimFunc Inject(const PrimFunc& f) {
  PrimFunc out = InjectSharedBarriers(f);
  // A second run finds every hazard covered.
  EXPECT_TRUE(InjectSharedBarriers(out).same_as(out)) << AsText(out);
  return out;
}

TEST(InjectSharedBarriers, WriteThenReadOfAnotherThread) {
  ExpectPass(Inject, R"(
@T.prim_func
def f(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        S_data = T.allocate([128], "float32", "shared")
        S = T.decl_buffer((128,), "float32", data=S_data, scope="shared")
        S[threadIdx_x] = A[threadIdx_x]
        B[threadIdx_x] = S[127 - threadIdx_x]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        S_data = T.allocate([128], "float32", "shared")
        S = T.decl_buffer((128,), "float32", data=S_data, scope="shared")
        S[threadIdx_x] = A[threadIdx_x]
        T.tvm_storage_sync("shared")
        B[threadIdx_x] = S[127 - threadIdx_x]
)");
}

TEST(InjectSharedBarriers, LoopCarriedWriteAfterReadGetsABarrierAtTheEndOfTheBody) {
  // Tiled matmul shape: a barrier after the tile loads (RAW) and one at the end of each k step,
  // before the next step overwrites the tile that others may still read (WAR).
  ExpectPass(Inject, R"(
@T.prim_func
def f(A: T.Buffer((1024,), "float32"), C: T.Buffer((32,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 32):
        S_data = T.allocate([32], "float32", "shared.dyn")
        S = T.decl_buffer((32,), "float32", data=S_data, scope="shared.dyn")
        for k in range(32):
            S[threadIdx_x] = A[k * 32 + threadIdx_x]
            for j in range(32):
                C[threadIdx_x] = C[threadIdx_x] + S[j]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((1024,), "float32"), C: T.Buffer((32,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 32):
        S_data = T.allocate([32], "float32", "shared.dyn")
        S = T.decl_buffer((32,), "float32", data=S_data, scope="shared.dyn")
        for k in range(32):
            S[threadIdx_x] = A[k * 32 + threadIdx_x]
            T.tvm_storage_sync("shared")
            for j in range(32):
                C[threadIdx_x] = C[threadIdx_x] + S[j]
            T.tvm_storage_sync("shared")
)");
}

TEST(InjectSharedBarriers, ThreadOwnedWritesInALoopNeedNoBarrierBetweenIterations) {
  // Thread t writes only addresses equal to t modulo 64: no two threads store to one address, so
  // only the read after the loop needs a barrier.
  ExpectPass(Inject, R"(
@T.prim_func
def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([256], "float32", "shared.dyn")
        S = T.decl_buffer((256,), "float32", data=S_data, scope="shared.dyn")
        for i in range(4):
            S[i * 64 + threadIdx_x] = A[i * 64 + threadIdx_x]
        for i in range(4):
            B[i * 64 + threadIdx_x] = S[255 - i * 64 - threadIdx_x]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([256], "float32", "shared.dyn")
        S = T.decl_buffer((256,), "float32", data=S_data, scope="shared.dyn")
        for i in range(4):
            S[i * 64 + threadIdx_x] = A[i * 64 + threadIdx_x]
        T.tvm_storage_sync("shared")
        for i in range(4):
            B[i * 64 + threadIdx_x] = S[255 - i * 64 - threadIdx_x]
)");
}

TEST(InjectSharedBarriers, WritesThatTwoThreadsMayShareAreOrdered) {
  // Index i * 32 + threadIdx_x with 64 threads: thread 32 in step 0 and thread 0 in step 1 both
  // store S[32], so the steps are separated.
  ExpectPass(Inject, R"(
@T.prim_func
def f(A: T.Buffer((256,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([256], "float32", "shared")
        S = T.decl_buffer((256,), "float32", data=S_data, scope="shared")
        for i in range(4):
            S[i * 32 + threadIdx_x] = A[i]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((256,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([256], "float32", "shared")
        S = T.decl_buffer((256,), "float32", data=S_data, scope="shared")
        for i in range(4):
            S[i * 32 + threadIdx_x] = A[i]
            T.tvm_storage_sync("shared")
)");
}

TEST(InjectSharedBarriers, ReadThenOverwriteInSequence) {
  ExpectPass(Inject, R"(
@T.prim_func
def f(B: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        B[threadIdx_x] = S[0]
        S[threadIdx_x] = T.float32(1)
)",
             R"(
@T.prim_func
def f(B: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        B[threadIdx_x] = S[0]
        T.tvm_storage_sync("shared")
        S[threadIdx_x] = T.float32(1)
)");
}

TEST(InjectSharedBarriers, ThreadDependentIfIsSplitAroundTheBarrier) {
  ExpectPass(Inject, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        if threadIdx_x < 32:
            S[threadIdx_x] = A[threadIdx_x]
            B[threadIdx_x] = S[31 - threadIdx_x]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        if threadIdx_x < 32:
            S[threadIdx_x] = A[threadIdx_x]
        T.tvm_storage_sync("shared")
        if threadIdx_x < 32:
            B[threadIdx_x] = S[31 - threadIdx_x]
)");
}

TEST(InjectSharedBarriers, UniformIfKeepsTheBarrierInside) {
  ExpectPass(Inject, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), flag: T.int32):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        if flag > 0:
            S[threadIdx_x] = A[threadIdx_x]
            B[threadIdx_x] = S[63 - threadIdx_x]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), flag: T.int32):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        if flag > 0:
            S[threadIdx_x] = A[threadIdx_x]
            T.tvm_storage_sync("shared")
            B[threadIdx_x] = S[63 - threadIdx_x]
)");
}

TEST(InjectSharedBarriers, BranchWritesThenReadAfterTheBranch) {
  // The barrier lands after the thread-dependent if, not inside it.
  ExpectPass(Inject, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([1], "float32", "shared")
        S = T.decl_buffer((1,), "float32", data=S_data, scope="shared")
        if threadIdx_x == 0:
            S[0] = A[0]
        B[threadIdx_x] = S[0]
)",
             R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([1], "float32", "shared")
        S = T.decl_buffer((1,), "float32", data=S_data, scope="shared")
        if threadIdx_x == 0:
            S[0] = A[0]
        T.tvm_storage_sync("shared")
        B[threadIdx_x] = S[0]
)");
}

TEST(InjectSharedBarriers, ExistingBarriersCount) {
  ExpectUnchanged(InjectOnce, R"(
@T.prim_func
def f(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        S_data = T.allocate([128], "float32", "shared")
        S = T.decl_buffer((128,), "float32", data=S_data, scope="shared")
        S[threadIdx_x] = A[threadIdx_x]
        T.tvm_storage_sync("shared")
        B[threadIdx_x] = S[127 - threadIdx_x]
)");
}

TEST(InjectSharedBarriers, LocalAndGlobalMemoryNeedNoBarrier) {
  ExpectUnchanged(InjectOnce, R"(
@T.prim_func
def f(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        L_data = T.allocate([4], "float32", "local")
        L = T.decl_buffer((4,), "float32", data=L_data, scope="local")
        for k in range(4):
            L[k] = A[threadIdx_x]
            B[threadIdx_x] = L[3 - k]
        A[threadIdx_x] = B[127 - threadIdx_x]
)");
}

TEST(InjectSharedBarriers, CpuFunctionIsReturnedAsIs) {
  ExpectUnchanged(InjectOnce, R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    for i in range(64):
        A[i] = A[i] + T.float32(1)
)");
}

TEST(InjectSharedBarriers, BarrierNeededInLoopUnderThreadDependentIfIsAnError) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        if threadIdx_x < 32:
            for k in range(4):
                S[threadIdx_x] = A[k]
                A[threadIdx_x] = S[31 - threadIdx_x]
)");
  testing::ExpectError([&] { InjectSharedBarriers(f); }, "ValueError",
                       {"InjectSharedBarriers", "nested inside a loop", "threadIdx_x < 32"});
}

TEST(InjectSharedBarriers, ThreadDependentLoopBoundsWithBarrierIsAnError) {
  PrimFunc f = ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 64):
        S_data = T.allocate([64], "float32", "shared")
        S = T.decl_buffer((64,), "float32", data=S_data, scope="shared")
        for k in range(threadIdx_x):
            S[threadIdx_x] = A[k]
            A[threadIdx_x] = S[63 - threadIdx_x]
)");
  testing::ExpectError([&] { InjectSharedBarriers(f); }, "ValueError",
                       {"loop 'k'", "differ between threads"});
}

}  // namespace
}  // namespace transform
}  // namespace tessel
