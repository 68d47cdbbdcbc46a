// FlattenBuffer: text-format before/expected pairs compared structurally (layouts: compact,
// strided, offset; vector indices; allocations), idempotence, and the error on blocks.
#include <gtest/gtest.h>
#include <tessel/ir/parser.h>
#include <tessel/ir/printer.h>
#include <tessel/transform/flatten_buffer.h>
#include <tessel/transform/lower_blocks.h>
#include <tessel/transform/pass.h>
#include <tessel/transform/verify_well_formed.h>
#include <tvm/ffi/extra/structural_equal.h>

#include <string>

#include "../ir/expect_error.h"
#include "expect_pass.h"

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

// FlattenBuffer(before) equals expected structurally, is well-formed, and is a fixed point.
void ExpectFlatten(const std::string& before, const std::string& expected) {
  PrimFunc in = testing::ParseFunc(before), want = testing::ParseFunc(expected);
  ASSERT_EQ(testing::VerifyText(in), "") << AsText(in);
  PrimFunc got = FlattenBuffer(in);
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(got, want, /*map_free_vars=*/true))
      << "got:\n"
      << AsText(got) << "\nexpected:\n"
      << AsText(want);
  EXPECT_EQ(testing::VerifyText(got), "") << AsText(got);
  EXPECT_TRUE(FlattenBuffer(got).same_as(got)) << AsText(got);
  // The host wrapper still sees the N-D parameter buffers.
  EXPECT_TRUE(got->buffer_map.same_as(in->buffer_map));
}

TEST(FlattenBuffer, CompactParameterBufferIsRowMajor) {
  ExpectFlatten(R"(
@T.prim_func
def f(A: T.Buffer((16, 4), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(16):
        for j in range(4):
            A[i, j] = B[j]
)",
                R"(
@T.prim_func
def f(A: T.Buffer((16, 4), "float32"), B: T.Buffer((4,), "float32")):
    A_1 = T.decl_buffer((64,), data=A.data)
    for i in range(16):
        for j in range(4):
            A_1[i * 4 + j] = B[j]
)");
}

TEST(FlattenBuffer, SymbolicShapeThreeDimensions) {
  ExpectFlatten(R"(
@T.prim_func
def f(A: T.Buffer((n, m, 3), "float32")):
    for i in range(n):
        for j in range(m):
            A[i, j, 2] = T.float32(0)
)",
                R"(
@T.prim_func
def f(A: T.Buffer((n, m, 3), "float32")):
    A_1 = T.decl_buffer((m * n * 3,), data=A.data)
    for i in range(n):
        for j in range(m):
            A_1[i * (3 * m) + j * 3 + 2] = T.float32(0)
)");
}

TEST(FlattenBuffer, DeclaredStridesAndElemOffset) {
  ExpectFlatten(R"(
@T.prim_func
def f(A: T.Buffer((16, 4), "float32", strides=(s, 2), elem_offset=off), B: T.Buffer((8,), "float32", elem_offset=off2)):
    for i in range(16):
        for j in range(4):
            A[i, j] = B[j]
)",
                R"(
@T.prim_func
def f(A: T.Buffer((16, 4), "float32", strides=(s, 2), elem_offset=off), B: T.Buffer((8,), "float32", elem_offset=off2)):
    A_1 = T.decl_buffer((s * 15 + off + 7,), data=A.data)
    B_1 = T.decl_buffer((off2 + 8,), data=B.data)
    for i in range(16):
        for j in range(4):
            A_1[off + i * s + j * 2] = B_1[off2 + j]
)");
}

TEST(FlattenBuffer, RampIndexStaysAVector) {
  ExpectFlatten(R"(
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 8), "float32", strides=(16, 2))):
    for i in range(8):
        A[i, 0:4] = B[i, T.Ramp(1, 1, 4)]
)",
                R"(
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 8), "float32", strides=(16, 2))):
    A_1 = T.decl_buffer((32,), data=A.data)
    B_1 = T.decl_buffer((127,), data=B.data)
    for i in range(8):
        A_1[T.Ramp(i * 4, 1, 4)] = B_1[T.Ramp(i * 16 + 2, 2, 4)]
)");
}

TEST(FlattenBuffer, GatherIndexAddsTheBroadcastRest) {
  ExpectFlatten(R"(
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), I: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    for i in range(8):
        B[0:4] = A[i, I[0:4]]
)",
                R"(
@T.prim_func
def f(A: T.Buffer((8, 4), "float32"), I: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    A_1 = T.decl_buffer((32,), data=A.data)
    for i in range(8):
        B[0:4] = A_1[T.Broadcast(i * 4, 4) + I[0:4]]
)");
}

TEST(FlattenBuffer, AllocateGetsOneExtentAndItsBufferIsDeclaredFlat) {
  ExpectFlatten(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    t_data = T.allocate([4, n], "float32", "local")
    t = T.decl_buffer((4, n), "float32", data=t_data, scope="local")
    for i in range(4):
        t[i, 0] = A[i]
    A[0] = t[3, 0]
)",
                R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32"), n: T.int32):
    t_data = T.allocate([4 * n], "float32", "local")
    t = T.decl_buffer((n * 4,), "float32", data=t_data, scope="local")
    for i in range(4):
        t[i * n] = A[i]
    A[0] = t[3 * n]
)");
}

TEST(FlattenBuffer, FlatFunctionIsReturnedUnchanged) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    t_data = T.allocate([4], "float32", "local")
    t = T.decl_buffer((4,), "float32", data=t_data, scope="local")
    for i in range(16):
        t[i % 4] = A[i]
        A[i] = t[0]
)");
  EXPECT_TRUE(FlattenBuffer(in).same_as(in));
  IRModule mod({{"f", in}});
  EXPECT_TRUE(FlattenBuffer(mod).same_as(mod));
  EXPECT_TRUE(FlattenBufferPass()(mod).same_as(mod));
}

TEST(FlattenBuffer, BlocksMustBeLoweredFirst) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def f(A: T.Buffer((16, 16), "float32")):
    for i in range(16):
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads()
                T.writes(A[vi, vj])
                A[vi, vj] = T.float32(0)
)");
  testing::ExpectError([&] { FlattenBuffer(in); }, "ValueError",
                       {"FlattenBuffer: run LowerBlocks first: block \"C\" found"});
}

TEST(FlattenBuffer, AfterLowerBlocksMatmul) {
  PrimFunc in = testing::ParseFunc(R"(
@T.prim_func
def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(8):
            for k in range(8):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  PrimFunc want = testing::ParseFunc(R"(
@T.prim_func
def matmul(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    A_1 = T.decl_buffer((64,), data=A.data)
    B_1 = T.decl_buffer((64,), data=B.data)
    C_1 = T.decl_buffer((64,), data=C.data)
    for i in range(8):
        for j in range(8):
            C_1[i * 8 + j] = T.float32(0)
            for k in range(8):
                C_1[i * 8 + j] = C_1[i * 8 + j] + A_1[i * 8 + k] * B_1[k * 8 + j]
)");
  PrimFunc got = FlattenBuffer(LowerBlocks(in));
  EXPECT_TRUE(tvm::ffi::StructuralEqual::Equal(got, want, /*map_free_vars=*/true))
      << "got:\n"
      << AsText(got) << "\nexpected:\n"
      << AsText(want);
  EXPECT_EQ(testing::VerifyText(got), "");
}

}  // namespace
}  // namespace transform
}  // namespace tessel
