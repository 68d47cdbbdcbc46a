# Row scaling over symbolic shapes: n and m are declared by the first buffer shape that uses them.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def symbolic_shape(A: T.Buffer((n, m), "float32"), s: T.Buffer((n,), "float32"), B: T.Buffer((n, m), "float32")):
    T.func_attr({"global_symbol": "symbolic_shape", "tir.noalias": True})
    for i in range(n):
        for j in range(m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], s[vi])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * s[vi]
