# De-interleave: even and odd elements of A into two arrays with stride-2 Ramp loads.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def strided_vector_load(A: T.Buffer((2048,), "float32"), Even: T.Buffer((1024,), "float32"), Odd: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "strided_vector_load", "tir.noalias": True})
    for i in range(128):
        Even[i * 8:i * 8 + 8] = A[T.Ramp(i * 16, 2, 8)]
        Odd[i * 8:i * 8 + 8] = A[T.Ramp(i * 16 + 1, 2, 8)]
