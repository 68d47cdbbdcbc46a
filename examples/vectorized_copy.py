# Vectorized copy with an add: 4-lane Ramp loads and stores, written both as T.Ramp and as a slice.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def vectorized_copy(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    T.func_attr({"global_symbol": "vectorized_copy", "tir.noalias": True})
    for i in range(1024):
        B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] + T.Broadcast(T.float32(1), 4)
    for i in range(1024):
        B[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4]
