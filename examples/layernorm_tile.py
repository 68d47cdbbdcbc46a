# LayerNorm written with tile operations (issue 16): y = (x - mean) / sqrt(var + 1e-5) * w + b over
# each 4096-wide row of X, float16 in and out, float32 math. A block takes one row: T.copy loads it
# into a fragment of the row's own type (each thread 16-byte vectors of the row, two float16 to a
# register); the mean, then the variance of the centred row (two passes over the registers, not
# E[x^2] - mean^2) come from T.reduce_sum by warp shuffles and one shared value per warp. The
# lowering folds each T.Parallel into the T.reduce or T.copy right after it: the squared deviations
# are summed as they are computed, never held whole, and each output vector is stored as soon as
# it is computed. The weights are read where they are used. Other row lengths, rows per block,
# thread counts and dtypes (float32, bfloat16) are the same text with those numbers replaced
# (bench/tile_reductions.py and tests/python/test_tile_reductions.py make them).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def layernorm_tile(X: T.Buffer((M, 4096), "float16"), W: T.Buffer((4096,), "float16"),
                   B: T.Buffer((4096,), "float16"), Y: T.Buffer((M, 4096), "float16")):
    T.func_attr({"global_symbol": "layernorm_tile", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 1), threads=128) as bx:
        x = T.alloc_fragment((1, 4096), "float16")
        sq = T.alloc_fragment((1, 4096), "float32")
        mean = T.alloc_fragment((1,), "float32")
        var = T.alloc_fragment((1,), "float32")
        T.copy(X[bx * 1, 0], x)
        T.reduce_sum(x, mean, dim=1)
        for i, j in T.Parallel(1, 4096):
            sq[i, j] = ((T.Cast("float32", x[i, j]) - mean[i] / T.float32(4096))
                        * (T.Cast("float32", x[i, j]) - mean[i] / T.float32(4096)))
        T.reduce_sum(sq, var, dim=1)
        for i, j in T.Parallel(1, 4096):
            x[i, j] = T.Cast("float16", (T.Cast("float32", x[i, j]) - mean[i] / T.float32(4096))
                             * T.rsqrt(var[i] / T.float32(4096) + T.float32(1e-5))
                             * T.Cast("float32", W[j]) + T.Cast("float32", B[j]))
        T.copy(x, Y[bx * 1, 0])
