# GPU vector add over a symbolic length: each thread adds 4 consecutive elements with one 16-byte
# load per input and one 16-byte store (float4), 256 threads per block; the thread that holds the
# last partial group of 4 falls back to guarded scalar adds.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def vector_add_gpu(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "vector_add_gpu", "target": "cuda", "tir.noalias": True})
    for bx in T.thread_binding((n + 1023) // 1024, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            if (bx * 256 + tx) * 4 + 4 <= n:
                for v in T.vectorized(4):
                    C[(bx * 256 + tx) * 4 + v] = A[(bx * 256 + tx) * 4 + v] + B[(bx * 256 + tx) * 4 + v]
            else:
                for v in range(4):
                    if (bx * 256 + tx) * 4 + v < n:
                        C[(bx * 256 + tx) * 4 + v] = A[(bx * 256 + tx) * 4 + v] + B[(bx * 256 + tx) * 4 + v]
