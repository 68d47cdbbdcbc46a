# Matrix multiply C = A @ B over symbolic sizes, with a reduce axis and an init block; rows of C are
# spread over the CPU's threads.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def matmul(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"), C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    for i in T.parallel(M):
        for j in range(N):
            for k in range(K):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
