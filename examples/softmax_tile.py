# Row softmax written with tile operations (issue 16): y = exp(x - max) / sum(exp(x - max)) over
# each 4096-wide row of X, float16 in and out, float32 math. A block takes one row: T.copy loads it
# into a fragment of the row's own type (each thread 16-byte vectors of the row, two float16 to a
# register), T.reduce_max and T.reduce_sum reduce by warp shuffles and one shared value per warp,
# and the output is computed from the row as loaded. The lowering folds each T.Parallel into the
# T.reduce or T.copy right after it, so `e` is summed as it is computed and never held whole, and
# each output vector is stored as soon as it is computed: at rows of 32768 and 512 threads a
# thread holds 64 elements in 64 registers. exp(t) is written exp2(t * log2(e)), as Triton's
# tl.exp and FlashAttention compute it. Other row lengths, rows per block, thread counts and dtypes
# (float32, bfloat16) are the same text with those numbers replaced (bench/tile_reductions.py and
# tests/python/test_tile_reductions.py make them).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def softmax_tile(X: T.Buffer((M, 4096), "float16"), Y: T.Buffer((M, 4096), "float16")):
    T.func_attr({"global_symbol": "softmax_tile", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 1), threads=128) as bx:
        x = T.alloc_fragment((1, 4096), "float16")
        e = T.alloc_fragment((1, 4096), "float32")
        row_max = T.alloc_fragment((1,), "float32")
        row_sum = T.alloc_fragment((1,), "float32")
        T.copy(X[bx * 1, 0], x)
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(1, 4096):
            e[i, j] = T.exp2((T.Cast("float32", x[i, j]) - row_max[i]) * T.float32(1.4426950408889634))
        T.reduce_sum(e, row_sum, dim=1)
        for i, j in T.Parallel(1, 4096):
            x[i, j] = T.Cast("float16", T.exp2((T.Cast("float32", x[i, j]) - row_max[i])
                                               * T.float32(1.4426950408889634))
                             * (T.float32(1) / row_sum[i]))
        T.copy(x, Y[bx * 1, 0])
