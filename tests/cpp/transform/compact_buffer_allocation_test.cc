// CompactBufferAllocation on lowered text: the allocations it shrinks and moves into a loop, and
// the ones it must leave where they are because a value crosses iterations or the layout is fixed.
#include <gtest/gtest.h>
#include <tessel/transform/compact_buffer_allocation.h>

#include <string>

#include "expect_pass.h"

namespace tessel {
namespace transform {
namespace {

using namespace ir;  // NOLINT(build/namespaces)

PrimFunc Compact(const PrimFunc& f) { return CompactBufferAllocation(f); }

TEST(CompactBufferAllocation, RowBufferShrinksIntoTheLoopOverRows) {
  testing::ExpectPass(Compact, R"(
@T.prim_func
def f(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.allocate([16, 8], "float32", "local")
    B_1 = T.decl_buffer((16, 8), "float32", data=B, scope="local")
    for i in range(16):
        for j in range(8):
            B_1[i, j] = A[i, j] * T.float32(2)
        for j in range(8):
            C[i, j] = B_1[i, j] + T.float32(1)
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    for i in range(16):
        B = T.allocate([1, 8], "float32", "local")
        B_1 = T.decl_buffer((1, 8), "float32", data=B, scope="local")
        for j in range(8):
            B_1[0, j] = A[i, j] * T.float32(2)
        for j in range(8):
            C[i, j] = B_1[0, j] + T.float32(1)
)");
}

// A tile of a 2-D buffer at (i0, j0): shifted by the tile's origin in both dimensions.
TEST(CompactBufferAllocation, TileIsShiftedByItsOrigin) {
  testing::ExpectPass(Compact, R"(
@T.prim_func
def f(A: T.Buffer((32, 32), "float32")):
    X = T.allocate([32, 32], "float32", "local")
    X_1 = T.decl_buffer((32, 32), "float32", data=X, scope="local")
    for i0 in range(4):
        for j0 in range(2):
            for a in range(8):
                for b in range(16):
                    X_1[i0 * 8 + a, j0 * 16 + b] = T.float32(1)
            for a in range(8):
                for b in range(16):
                    A[i0 * 8 + a, j0 * 16 + b] = X_1[i0 * 8 + a, j0 * 16 + b]
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((32, 32), "float32")):
    for i0 in range(4):
        for j0 in range(2):
            X = T.allocate([8, 16], "float32", "local")
            X_1 = T.decl_buffer((8, 16), "float32", data=X, scope="local")
            for a in range(8):
                for b in range(16):
                    X_1[a, b] = T.float32(1)
            for a in range(8):
                for b in range(16):
                    A[i0 * 8 + a, j0 * 16 + b] = X_1[a, b]
)");
}

// Iteration k reads X[k], which iteration k - 1 wrote: the buffer must outlive the iterations.
TEST(CompactBufferAllocation, SerialLoopCarryingAValueKeepsTheAllocationOutside) {
  testing::ExpectUnchanged(Compact, R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    X = T.allocate([9], "float32", "local")
    X_1 = T.decl_buffer((9,), "float32", data=X, scope="local")
    X_1[0] = T.float32(0)
    for k in range(8):
        X_1[k + 1] = X_1[k] + A[k]
        B[k] = X_1[k + 1]
)");
  // The same slab in every iteration: kept outside too, though each iteration rewrites it.
  testing::ExpectUnchanged(Compact, R"(
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    X = T.allocate([8], "float32", "local")
    X_1 = T.decl_buffer((8,), "float32", data=X, scope="local")
    for i in range(4):
        for j in range(8):
            X_1[j] = A[i, j]
        for j in range(8):
            B[i, j] = X_1[7 - j]
)");
}

// Distinct iterations of a parallel loop may not share the buffer's contents, so it moves in
// even though every iteration uses the same elements.
TEST(CompactBufferAllocation, ParallelLoopTakesTheAllocation) {
  testing::ExpectPass(Compact, R"(
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    X = T.allocate([8], "float32", "local")
    X_1 = T.decl_buffer((8,), "float32", data=X, scope="local")
    for i in T.parallel(4):
        for j in range(8):
            X_1[j] = A[i, j]
        for j in range(8):
            B[i, j] = X_1[7 - j]
)",
                      R"(
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i in T.parallel(4):
        X = T.allocate([8], "float32", "local")
        X_1 = T.decl_buffer((8,), "float32", data=X, scope="local")
        for j in range(8):
            X_1[j] = A[i, j]
        for j in range(8):
            B[i, j] = X_1[7 - j]
)");
}

TEST(CompactBufferAllocation, GlobalStridedAndVectorizedAreLeftAlone) {
  // Global scope.
  testing::ExpectUnchanged(Compact, R"(
@T.prim_func
def f(A: T.Buffer((16, 8), "float32")):
    B = T.allocate([16, 8], "float32", "global")
    B_1 = T.decl_buffer((16, 8), "float32", data=B)
    for i in range(16):
        for j in range(8):
            B_1[i, j] = A[i, j]
        for j in range(8):
            A[i, j] = B_1[i, j]
)");
  // Declared strides (what storage_align lowers to).
  testing::ExpectUnchanged(Compact, R"(
@T.prim_func
def f(A: T.Buffer((16, 8), "float32")):
    B = T.allocate([263], "float32", "local")
    B_1 = T.decl_buffer((16, 8), "float32", data=B, strides=(17, 1), scope="local")
    for i in range(16):
        for j in range(8):
            B_1[i, j] = A[i, j]
        for j in range(8):
            A[i, j] = B_1[i, j]
)");
  // A vectorized loop is never entered; the whole buffer is what it uses.
  testing::ExpectUnchanged(Compact, R"(
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    X = T.allocate([4], "float32", "local")
    X_1 = T.decl_buffer((4,), "float32", data=X, scope="local")
    for i in T.vectorized(4):
        X_1[i] = A[i]
        A[i] = X_1[i] * T.float32(2)
)");
}

}  // namespace
}  // namespace transform
}  // namespace tessel
