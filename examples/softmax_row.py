# Row softmax over symbolic sizes: per row, a max reduction, an exp-sum reduction, then
# normalization; rows are spread over the CPU's threads, intermediates live in buffers allocated by
# the root block.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def softmax_row(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    T.func_attr({"global_symbol": "softmax_row", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        row_max = T.alloc_buffer((n,), "float32")
        row_sum = T.alloc_buffer((n,), "float32")
        for i in T.parallel(n):
            for k in range(m):
                with T.block("row_max"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk])
                    T.writes(row_max[vi])
                    with T.init():
                        row_max[vi] = T.float32("-inf")
                    row_max[vi] = T.max(row_max[vi], A[vi, vk])
            for k in range(m):
                with T.block("row_sum"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk], row_max[vi])
                    T.writes(row_sum[vi])
                    with T.init():
                        row_sum[vi] = T.float32(0)
                    row_sum[vi] = row_sum[vi] + T.exp(A[vi, vk] - row_max[vi])
            for j in range(m):
                with T.block("normalize"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj], row_max[vi], row_sum[vi])
                    T.writes(B[vi, vj])
                    B[vi, vj] = T.exp(A[vi, vj] - row_max[vi]) / row_sum[vi]
