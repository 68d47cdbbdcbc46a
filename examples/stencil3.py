# A 3-point stencil over the interior [1, 127): an iter var whose domain does not start at 0.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def stencil3(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "stencil3", "tir.noalias": True})
    for i in range(126):
        with T.block("B"):
            vi = T.axis.spatial((1, 127), i + 1)
            T.reads(A[vi - 1:vi + 2])
            T.writes(B[vi])
            B[vi] = (A[vi - 1] + A[vi] + A[vi + 1]) / T.float32(3)
