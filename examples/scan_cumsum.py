# Prefix sum as an ordered (scan) axis, with an opaque axis for the column; if_then_else reads the
# previous element only when there is one.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def scan_cumsum(A: T.Buffer((16, 1024), "float32"), B: T.Buffer((16, 1024), "float32")):
    T.func_attr({"global_symbol": "scan_cumsum"})
    for c in range(16):
        for i in range(1024):
            with T.block("B"):
                vc = T.axis.opaque(16, c)
                vi = T.axis.scan(1024, i)
                T.reads(A[vc, vi], B[vc, vi - 1])
                T.writes(B[vc, vi])
                B[vc, vi] = T.if_then_else(vi == 0, A[vc, vi], B[vc, vi - 1] + A[vc, vi])
