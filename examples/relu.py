# ReLU over a 2-D tensor: B = max(A, 0).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def relu(A: T.Buffer((128, 256), "float32"), B: T.Buffer((128, 256), "float32")):
    T.func_attr({"global_symbol": "relu", "tir.noalias": True})
    for i in range(128):
        for j in range(256):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))
