# Y = softmax(A @ B.T) row by row, in one kernel, written with tile operations: no library call
# fuses a matmul with the softmax of its rows. A block computes 64 full rows of the product into a
# float32 fragment (N <= 256 columns: the whole row in one tile), reduces each row's maximum and
# sum in registers and shared memory, and writes the normalized rows, so the M x N product is never
# stored. Columns past N are masked to -inf before the reductions; rows past M are not written.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def gemm_softmax(A: T.Buffer((M, K), "float16"), B: T.Buffer((N, K), "float16"),
                 Y: T.Buffer((M, N), "float16")):
    T.func_attr({"global_symbol": "gemm_softmax", "tir.noalias": True})
    assert N <= 256, "a row of the product is one 256-column tile; N must be at most 256"
    with T.Kernel(T.ceildiv(M, 64), threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((256, 32), "float16")
        S_f = T.alloc_fragment((64, 256), "float32")
        row_max = T.alloc_fragment((64,), "float32")
        row_sum = T.alloc_fragment((64,), "float32")
        T.clear(S_f)
        for ko in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
            T.copy(A[bx * 64, ko * 32], A_s)
            T.copy(B[0, ko * 32], B_s)
            T.gemm(A_s, B_s, S_f, transpose_B=True)
        for i, j in T.Parallel(64, 256):
            S_f[i, j] = T.if_then_else(j < N, S_f[i, j], T.float32("-inf"))
        T.reduce_max(S_f, row_max, dim=1)
        for i, j in T.Parallel(64, 256):
            S_f[i, j] = T.exp(S_f[i, j] - row_max[i])
        T.reduce_sum(S_f, row_sum, dim=1)
        for i, j in T.Parallel(64, 256):
            S_f[i, j] = S_f[i, j] / row_sum[i]
        T.copy(S_f, Y[bx * 64, 0])
