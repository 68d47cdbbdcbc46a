# A cooperative kernel: every block writes its slice of A, the whole grid meets at T.grid_sync(),
# then each block reads the slice its neighbour wrote.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def grid_sync(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    T.func_attr({"global_symbol": "grid_sync", "target": "cuda", "tir.noalias": True})
    for bx in T.thread_binding(32, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            A[bx * 128 + tx] = T.Cast("float32", bx * 128 + tx)
            T.grid_sync()
            B[bx * 128 + tx] = A[(bx + 1) % 32 * 128 + tx]
