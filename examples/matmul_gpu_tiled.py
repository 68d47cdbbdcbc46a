# Tiled GPU matmul: 32x32 output tiles per thread block, one thread per output element, the K loop
# staged through shared memory one 32-wide slice at a time.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def matmul_gpu_tiled(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"global_symbol": "matmul_gpu_tiled", "target": "cuda", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        A_shared = T.alloc_buffer((1024, 1024), "float32", scope="shared")
        B_shared = T.alloc_buffer((1024, 1024), "float32", scope="shared")
        for by in T.thread_binding(32, thread="blockIdx.y"):
            for bx in T.thread_binding(32, thread="blockIdx.x"):
                for ty in T.thread_binding(32, thread="threadIdx.y"):
                    for tx in T.thread_binding(32, thread="threadIdx.x"):
                        for k_0 in range(32):
                            with T.block("A_shared"):
                                v0 = T.axis.spatial(1024, by * 32 + ty)
                                v1 = T.axis.spatial(1024, k_0 * 32 + tx)
                                T.reads(A[v0, v1])
                                T.writes(A_shared[v0, v1])
                                A_shared[v0, v1] = A[v0, v1]
                            with T.block("B_shared"):
                                v0 = T.axis.spatial(1024, k_0 * 32 + ty)
                                v1 = T.axis.spatial(1024, bx * 32 + tx)
                                T.reads(B[v0, v1])
                                T.writes(B_shared[v0, v1])
                                B_shared[v0, v1] = B[v0, v1]
                            for k_1 in range(32):
                                with T.block("C"):
                                    vi = T.axis.spatial(1024, by * 32 + ty)
                                    vj = T.axis.spatial(1024, bx * 32 + tx)
                                    vk = T.axis.reduce(1024, k_0 * 32 + k_1)
                                    T.reads(A_shared[vi, vk], B_shared[vk, vj])
                                    T.writes(C[vi, vj])
                                    with T.init():
                                        C[vi, vj] = T.float32(0)
                                    C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
