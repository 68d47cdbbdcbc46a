// LowerCrossThreadReduction: text-format before/expected pairs, the forms it leaves to LowerBlocks
// to refuse, and the lowered IR through the GPU passes (well-formed, barriers already complete).
#include <gtest/gtest.h>
#include <tessel/ir/builtin.h>
#include <tessel/ir/functor.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/flatten_buffer.h>
#include <tessel/transform/inject_shared_barriers.h>
#include <tessel/transform/lower_blocks.h>
#include <tessel/transform/lower_cross_thread_reduction.h>
#include <tessel/transform/lower_thread_binding.h>
#include <tessel/transform/simplify.h>

#include <string>

#include "../ir/expect_error.h"
#include "expect_pass.h"

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

PrimFunc Lower(const PrimFunc& f) { return LowerCrossThreadReduction(f); }

TEST(LowerCrossThreadReduction, SumWithIdentityInitOverThreadIdxX) {
  // Four threads, two halving steps; the init 0 is the identity, so the total is stored as is.
  testing::ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(4, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(4, thread="threadIdx.x"):
            B_red = T.allocate([4], "float32", "shared")
            B_red_1 = T.decl_buffer((4,), "float32", data=B_red, scope="shared")
            B_red_1[k] = A[i, k]
            T.tvm_storage_sync("shared")
            if k < 2:
                B_red_1[k] = B_red_1[k] + B_red_1[k + 2]
            T.tvm_storage_sync("shared")
            if k < 1:
                B_red_1[k] = B_red_1[k] + B_red_1[k + 1]
            T.tvm_storage_sync("shared")
            if k == 0:
                B[i] = B_red_1[0]
            T.tvm_storage_sync("shared")
)");
}

TEST(LowerCrossThreadReduction, MaxWithoutInitPredicateAndSpatialThreadIdxY) {
  // threadIdx.y is spatial: each of its 6 rows has its own 5 slots. Five threads (not a power of
  // two) halve as 5 -> 3 -> 2 -> 1, the partner guarded by r < n - h. The predicate's false side
  // contributes -inf; without an init the old B is combined with the total.
  testing::ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((4, 6, 5), "float32"), B: T.Buffer((4, 6), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for ty in T.thread_binding(6, thread="threadIdx.y"):
            for tx in T.thread_binding(5, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSR", [i, ty, tx])
                    T.where(tx < 4)
                    B[vi, vj] = T.max(B[vi, vj], A[vi, vj, vk])
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((4, 6, 5), "float32"), B: T.Buffer((4, 6), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for ty in T.thread_binding(6, thread="threadIdx.y"):
            for tx in T.thread_binding(5, thread="threadIdx.x"):
                B_red = T.allocate([30], "float32", "shared")
                B_red_1 = T.decl_buffer((30,), "float32", data=B_red, scope="shared")
                if tx < 4:
                    B_red_1[ty * 5 + tx] = A[i, ty, tx]
                else:
                    B_red_1[ty * 5 + tx] = T.float32("-inf")
                T.tvm_storage_sync("shared")
                if tx < 2:
                    B_red_1[ty * 5 + tx] = T.max(B_red_1[ty * 5 + tx], B_red_1[ty * 5 + tx + 3])
                T.tvm_storage_sync("shared")
                if tx < 1:
                    B_red_1[ty * 5 + tx] = T.max(B_red_1[ty * 5 + tx], B_red_1[ty * 5 + tx + 2])
                T.tvm_storage_sync("shared")
                if tx < 1:
                    B_red_1[ty * 5 + tx] = T.max(B_red_1[ty * 5 + tx], B_red_1[ty * 5 + tx + 1])
                T.tvm_storage_sync("shared")
                if tx == 0:
                    B[i, ty] = T.max(B[i, ty], B_red_1[ty * 5])
                T.tvm_storage_sync("shared")
)");
}

TEST(LowerCrossThreadReduction, IntProductOverTwoThreadAxesWithNonIdentityInit) {
  // Both thread axes reduce: one group of 6 slots, flattened ty * 3 + tx. The init 2 is not the
  // identity of *, so it is combined with the total; the operand order B[0] on the right is fine.
  testing::ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((2, 3), "int32"), B: T.Buffer((1,), "int32")):
    for ty in T.thread_binding(2, thread="threadIdx.y"):
        for tx in T.thread_binding(3, thread="threadIdx.x"):
            with T.block("P"):
                vy, vx = T.axis.remap("RR", [ty, tx])
                with T.init():
                    B[0] = 2
                B[0] = A[vy, vx] * B[0]
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((2, 3), "int32"), B: T.Buffer((1,), "int32")):
    for ty in T.thread_binding(2, thread="threadIdx.y"):
        for tx in T.thread_binding(3, thread="threadIdx.x"):
            P_red = T.allocate([6], "int32", "shared")
            P_red_1 = T.decl_buffer((6,), "int32", data=P_red, scope="shared")
            P_red_1[ty * 3 + tx] = A[ty, tx]
            T.tvm_storage_sync("shared")
            if ty * 3 + tx < 3:
                P_red_1[ty * 3 + tx] = P_red_1[ty * 3 + tx] * P_red_1[ty * 3 + tx + 3]
            T.tvm_storage_sync("shared")
            if ty * 3 + tx < 1:
                P_red_1[ty * 3 + tx] = P_red_1[ty * 3 + tx] * P_red_1[ty * 3 + tx + 2]
            T.tvm_storage_sync("shared")
            if ty * 3 + tx < 1:
                P_red_1[ty * 3 + tx] = P_red_1[ty * 3 + tx] * P_red_1[ty * 3 + tx + 1]
            T.tvm_storage_sync("shared")
            if ty * 3 + tx == 0:
                B[0] = 2 * P_red_1[0]
            T.tvm_storage_sync("shared")
)");
}

TEST(LowerCrossThreadReduction, IntMinUsesTheDtypeHighestValue) {
  testing::ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((2,), "int8"), B: T.Buffer((1,), "int8")):
    for tx in T.thread_binding(2, thread="threadIdx.x"):
        with T.block("M"):
            vx = T.axis.reduce(2, tx)
            T.where(tx < 1)
            with T.init():
                B[0] = T.int8(127)
            B[0] = T.min(B[0], A[vx])
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((2,), "int8"), B: T.Buffer((1,), "int8")):
    for tx in T.thread_binding(2, thread="threadIdx.x"):
        M_red = T.allocate([2], "int8", "shared")
        M_red_1 = T.decl_buffer((2,), "int8", data=M_red, scope="shared")
        if tx < 1:
            M_red_1[tx] = A[tx]
        else:
            M_red_1[tx] = T.int8(127)
        T.tvm_storage_sync("shared")
        if tx < 1:
            M_red_1[tx] = T.min(M_red_1[tx], M_red_1[tx + 1])
        T.tvm_storage_sync("shared")
        if tx == 0:
            B[0] = M_red_1[0]
        T.tvm_storage_sync("shared")
)");
}

TEST(LowerCrossThreadReduction, SerialPartPerThreadIsReducedLocallyFirst) {
  // vk over threadIdx.x and a serial loop inside it: each thread sums its four elements (the
  // predicate inside the serial loop) into a local accumulator, then the threads all-reduce.
  testing::ExpectPass(Lower, R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k0 in T.thread_binding(2, thread="threadIdx.x"):
            for k1 in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vk = T.axis.reduce(128, k0 * 4 + k1)
                    T.where(k0 * 4 + k1 < 7)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k0 in T.thread_binding(2, thread="threadIdx.x"):
            B_red = T.allocate([2], "float32", "shared")
            B_red_1 = T.decl_buffer((2,), "float32", data=B_red, scope="shared")
            B_acc = T.allocate([1], "float32", "local")
            B_acc_1 = T.decl_buffer((1,), "float32", data=B_acc, scope="local")
            B_acc_1[0] = T.float32(0)
            for k1 in range(4):
                if k0 * 4 + k1 < 7:
                    B_acc_1[0] = B_acc_1[0] + A[i, k0 * 4 + k1]
            B_red_1[k0] = B_acc_1[0]
            T.tvm_storage_sync("shared")
            if k0 < 1:
                B_red_1[k0] = B_red_1[k0] + B_red_1[k0 + 1]
            T.tvm_storage_sync("shared")
            if k0 == 0:
                B[i] = B_red_1[0]
            T.tvm_storage_sync("shared")
)");
}

TEST(LowerCrossThreadReduction, FunctionsWithoutThreadReductionsAreUnchanged) {
  // No thread loop at all; a spatial axis over threads with a serial reduction inside.
  testing::ExpectUnchanged(Lower, R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 128):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
)");
  testing::ExpectUnchanged(Lower, R"(
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
}

// Unsupported forms are left as they are, and LowerBlocks refuses them as before.
TEST(LowerCrossThreadReduction, UnsupportedFormsAreLeftForLowerBlocksToRefuse) {
  const char* bodies[] = {
      // not one of + * max min
      "B[vi] = B[vi] - A[vi, vk]",
      // the value reads the accumulator's buffer
      "B[vi] = B[vi] + B[vi] * A[vi, vk]",
      // the index depends on the reduce iterator
      "B[vk % 8] = B[vk % 8] + A[vi, vk]",
  };
  for (const char* body : bodies) {
    PrimFunc f = testing::ParseFunc(std::string(R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                )") + body + "\n");
    PrimFunc got = LowerCrossThreadReduction(f);
    EXPECT_TRUE(got.same_as(f)) << body << "\n" << AsText(got);
    testing::ExpectError(
        [&] { LowerBlocks(got); }, "ValueError",
        {"block \"B\"", "reduction iterator 'vk'", "threadIdx.x", "LowerCrossThreadReduction"});
  }
  // A threadIdx.y axis the kernel launches that does not enclose the block.
  PrimFunc other_axis = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8, 4), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]
        for j in T.thread_binding(4, thread="threadIdx.y"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.float32(0)
)");
  EXPECT_TRUE(LowerCrossThreadReduction(other_axis).same_as(other_axis));
  // A reduce iterator over a serial loop around the thread loop (one all-reduce per iteration
  // would need the init once), and one over a thread loop of symbolic extent.
  const char* nests[] = {
      R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k1 in range(4):
            for k0 in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vk = T.axis.reduce(128, k0 * 4 + k1)
                    B[vi] = B[vi] + A[vi, vk]
)",
      R"(
@T.prim_func
def f(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(n, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]
)"};
  for (const char* text : nests) {
    PrimFunc f = testing::ParseFunc(text);
    PrimFunc got = LowerCrossThreadReduction(f);
    EXPECT_TRUE(got.same_as(f)) << AsText(got);
    testing::ExpectError([&] { LowerBlocks(got); }, "ValueError",
                         {"block \"B\"", "reduction iterator 'vk'", "threadIdx.x"});
  }
}

int CountBarriers(const Stmt& s) {
  int n = 0;
  PostOrderVisit(s, [&](const ObjectRef& o) {
    if (const auto* call = o.as<CallNode>()) n += call->op.same_as(builtin::tvm_storage_sync());
  });
  return n;
}

TEST(LowerCrossThreadReduction, LowersThroughTheGpuPassesWellFormedAndFullySynchronized) {
  // TVM's shared-memory softmax: two reductions into shared buffers in one blockIdx loop.
  PrimFunc f = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((16, 64), "float32"), C: T.Buffer((16, 64), "float32")):
    M = T.alloc_buffer((16,), scope="shared")
    E = T.alloc_buffer((16, 64), scope="shared")
    S = T.alloc_buffer((16,), scope="shared")
    for i0 in T.thread_binding(16, thread="blockIdx.x"):
        for ax0 in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("max"):
                v_i0, v_k = T.axis.remap("SR", [i0, ax0])
                with T.init():
                    M[v_i0] = T.float32(-340282346638528859811704183484516925440.0)
                M[v_i0] = T.max(M[v_i0], A[v_i0, v_k])
        for ax0 in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("exp"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, ax0])
                E[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - M[v_i0])
        for ax0 in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("sum"):
                v_i0, v_k = T.axis.remap("SR", [i0, ax0])
                with T.init():
                    S[v_i0] = T.float32(0)
                S[v_i0] = S[v_i0] + E[v_i0, v_k]
        for i1 in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("norm"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                C[v_i0, v_i1] = E[v_i0, v_i1] / S[v_i0]
)");
  PrimFunc lowered = LowerCrossThreadReduction(f);
  ASSERT_FALSE(lowered.same_as(f));
  EXPECT_EQ(testing::VerifyText(lowered), "") << AsText(lowered);
  // 64 threads: a barrier after the stores, six halving steps, one after the final write.
  EXPECT_EQ(CountBarriers(lowered->body), 2 * 8) << AsText(lowered);
  PrimFunc gpu = LowerThreadBinding(Simplify(FlattenBuffer(LowerBlocks(lowered))));
  EXPECT_EQ(testing::VerifyText(gpu), "") << AsText(gpu);
  // Only the barrier between the exp stores and the sum's reads is the injector's to add.
  PrimFunc synced = InjectSharedBarriers(gpu);
  EXPECT_EQ(CountBarriers(synced->body), 2 * 8 + 1) << AsText(synced);
  EXPECT_EQ(testing::VerifyText(synced), "") << AsText(synced);
}

}  // namespace
}  // namespace transform
}  // namespace tessel
