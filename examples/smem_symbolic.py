# Shared memory sized by a symbolic parameter: each block stages a row of m floats in dynamic shared
# memory (m * 4 bytes, known only at launch) and writes it back reversed.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def smem_symbolic(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    T.func_attr({"global_symbol": "smem_symbolic", "target": "cuda", "tir.noalias": True})
    for bx in T.thread_binding(n, thread="blockIdx.x"):
        row_data = T.allocate([m], "float32", "shared.dyn")
        row = T.decl_buffer((m,), "float32", data=row_data, scope="shared.dyn")
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for i in range((m + 127) // 128):
                if i * 128 + tx < m:
                    row[i * 128 + tx] = A[bx, i * 128 + tx]
            for i in range((m + 127) // 128):
                if i * 128 + tx < m:
                    B[bx, i * 128 + tx] = row[m - 1 - (i * 128 + tx)]
