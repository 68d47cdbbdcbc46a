# Row softmax written with tile operations (issue 16): y = exp(x - max) / sum(exp(x - max)) over
# each 4096-wide row of X, float16 in and out, float32 math. A block takes one row: T.copy loads it
# into a float32 register fragment (each thread 16-byte vectors of the row), T.reduce_max and
# T.reduce_sum reduce it by warp shuffles and one shared value per warp, and T.copy writes it back.
# The row is read from memory once. Other row lengths, rows per block, thread counts and dtypes
# (float32, bfloat16) are the same text with those numbers replaced (bench/tile_reductions.py and
# tests/python/test_tile_reductions.py make them).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def softmax_tile(X: T.Buffer((M, 4096), "float16"), Y: T.Buffer((M, 4096), "float16")):
    T.func_attr({"global_symbol": "softmax_tile", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 1), threads=128) as bx:
        x = T.alloc_fragment((1, 4096), "float32")
        row_max = T.alloc_fragment((1,), "float32")
        row_sum = T.alloc_fragment((1,), "float32")
        T.copy(X[bx * 1, 0], x)
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(1, 4096):
            x[i, j] = T.exp(x[i, j] - row_max[i])
        T.reduce_sum(x, row_sum, dim=1)
        for i, j in T.Parallel(1, 4096):
            x[i, j] = x[i, j] * (T.float32(1) / row_sum[i])
        T.copy(x, Y[bx * 1, 0])
