# Tiled GPU matmul over symbolic sizes (each a multiple of 32): a 32x32 thread block computes a
# 32x32 tile of C, staging 32x32 tiles of A and B through shared memory along k.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def matmul_gpu(A: T.Buffer((m, k), "float32"), B: T.Buffer((k, n), "float32"), C: T.Buffer((m, n), "float32")):
    T.func_attr({"global_symbol": "matmul_gpu", "target": "cuda", "tir.noalias": True})
    for by in T.thread_binding(m // 32, thread="blockIdx.y"):
        for bx in T.thread_binding(n // 32, thread="blockIdx.x"):
            As_data = T.allocate([1024], "float32", "shared")
            As = T.decl_buffer((32, 32), "float32", data=As_data, scope="shared")
            Bs_data = T.allocate([1024], "float32", "shared")
            Bs = T.decl_buffer((32, 32), "float32", data=Bs_data, scope="shared")
            acc_data = T.allocate([1], "float32", "local")
            acc = T.decl_buffer((1,), "float32", data=acc_data, scope="local")
            for ty in T.thread_binding(32, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    acc[0] = T.float32(0)
                    for ko in range(k // 32):
                        As[ty, tx] = A[by * 32 + ty, ko * 32 + tx]
                        Bs[ty, tx] = B[ko * 32 + ty, bx * 32 + tx]
                        for ki in range(32):
                            acc[0] = acc[0] + As[ty, ki] * Bs[ki, tx]
                    C[by * 32 + ty, bx * 32 + tx] = acc[0]
