# The four integer divisions: floor (// and %) and truncating (T.truncdiv, T.truncmod), on signed values.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def div_mod(A: T.Buffer((512,), "int32"), FD: T.Buffer((512,), "int32"), FM: T.Buffer((512,), "int32"), TD: T.Buffer((512,), "int32"), TM: T.Buffer((512,), "int32")):
    T.func_attr({"global_symbol": "div_mod", "tir.noalias": True})
    for i in range(512):
        FD[i] = A[i] // 7
        FM[i] = A[i] % 7
        TD[i] = T.truncdiv(A[i], 7)
        TM[i] = T.truncmod(A[i], 7)
        FD[i] = FD[i] + (i - 256) // (i % 5 + 1)
