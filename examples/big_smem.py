# 96 KB of dynamic shared memory (more than the 48 KB a launch gets without opting in): each block
# stages one 24576-float row, then writes it back reversed, so every thread reads what others
# stored.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def big_smem(A: T.Buffer((n, 24576), "float32"), B: T.Buffer((n, 24576), "float32")):
    T.func_attr({"global_symbol": "big_smem", "target": "cuda", "tir.noalias": True})
    for bx in T.thread_binding(n, thread="blockIdx.x"):
        row_data = T.allocate([24576], "float32", "shared.dyn")
        row = T.decl_buffer((24576,), "float32", data=row_data, scope="shared.dyn")
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            for i in range(96):
                row[i * 256 + tx] = A[bx, i * 256 + tx]
            for i in range(96):
                B[bx, i * 256 + tx] = row[24575 - (i * 256 + tx)]
