// Internal to src/transform: a tile kernel specialized for tensors whose symbolic row lengths are
// whole 16-byte vectors, chosen on the host at run time.
//
// With a symbolic row length K, a 16-byte vector of a row may straddle the row's end and its
// address is aligned only when K is: the SIMT lowering then tests, per vector and at run time,
// both ends and the alignment, and moves the rest lane by lane (for the tile GEMM of
// examples/tile_gemm_hopper.py, a main loop of 1570 SASS instructions where constant shapes give
// 202). Triton specializes integer arguments divisible by 16 for the same reason; here the kernel
// is copied, the copy reads every such extent n as floordiv(n, v) * v (v: the elements of 16
// bytes), which every analyzer of every later pass sees as a multiple of v, and the host runs
// the copy when n % v == 0 and the general kernel otherwise.
#ifndef TESSEL_SRC_TRANSFORM_TILE_DIVISIBLE_H_
#define TESSEL_SRC_TRANSFORM_TILE_DIVISIBLE_H_

#include <tessel/ir/stmt.h>

namespace tessel {
namespace transform {
namespace tile_lowering {

// `kernel` (a T.Kernel loop) as `if (n % v == 0 && ...) <specialized> else <kernel>` over the
// symbolic innermost extents and strides n of the tensors it reads or writes; the specialized
// copy is annotated "tessel.tile_specialized" with the condition. `kernel` itself when it has
// none.
ir::Stmt SpecializeDivisible(const ir::ForNode* kernel);

}  // namespace tile_lowering
}  // namespace transform
}  // namespace tessel

#endif  // TESSEL_SRC_TRANSFORM_TILE_DIVISIBLE_H_
