# Leaky ReLU with T.Select (both sides evaluated: a value choice, not control flow).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def leaky_relu_select(A: T.Buffer((2048,), "float32"), B: T.Buffer((2048,), "float32")):
    T.func_attr({"global_symbol": "leaky_relu_select", "tir.noalias": True})
    for i in range(2048):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = T.Select(A[vi] > T.float32(0), A[vi], A[vi] * T.float32(0.01))
