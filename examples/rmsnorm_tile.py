# RMSNorm written with tile operations (issue 16): y = x / sqrt(mean(x^2) + 1e-6) * w over each
# 4096-wide row of X, float16 in and out, float32 math. A block takes one row: T.copy loads it into
# a fragment of the row's own type (each thread 16-byte vectors of the row, two float16 to a
# register), T.reduce_sum of the squares goes by warp shuffles and one shared value per warp. The
# lowering folds each T.Parallel into the T.reduce or T.copy right after it: the squares are
# summed as they are computed, never held whole, and each output vector is stored as soon as it is
# computed. The weights are read where they are used. Other row lengths, rows per block, thread
# counts and dtypes (float32, bfloat16) are the same text with those numbers replaced
# (bench/tile_reductions.py and tests/python/test_tile_reductions.py make them).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def rmsnorm_tile(X: T.Buffer((M, 4096), "float16"), W: T.Buffer((4096,), "float16"),
                 Y: T.Buffer((M, 4096), "float16")):
    T.func_attr({"global_symbol": "rmsnorm_tile", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 1), threads=128) as bx:
        x = T.alloc_fragment((1, 4096), "float16")
        sq = T.alloc_fragment((1, 4096), "float32")
        ss = T.alloc_fragment((1,), "float32")
        T.copy(X[bx * 1, 0], x)
        for i, j in T.Parallel(1, 4096):
            sq[i, j] = T.Cast("float32", x[i, j]) * T.Cast("float32", x[i, j])
        T.reduce_sum(sq, ss, dim=1)
        for i, j in T.Parallel(1, 4096):
            x[i, j] = T.Cast("float16", T.Cast("float32", x[i, j])
                             * T.rsqrt(ss[i] / T.float32(4096) + T.float32(1e-6))
                             * T.Cast("float32", W[j]))
        T.copy(x, Y[bx * 1, 0])
