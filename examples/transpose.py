# 2-D transpose, B[j, i] = A[i, j], tiled 32x32 so both sides are walked in blocks.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def transpose(A: T.Buffer((512, 256), "float32"), B: T.Buffer((256, 512), "float32")):
    T.func_attr({"global_symbol": "transpose", "tir.noalias": True})
    for io in range(16):
        for jo in range(8):
            for ii in range(32):
                for ji in range(32):
                    with T.block("B"):
                        vi = T.axis.spatial(512, io * 32 + ii)
                        vj = T.axis.spatial(256, jo * 32 + ji)
                        T.reads(A[vi, vj])
                        T.writes(B[vj, vi])
                        B[vj, vi] = A[vi, vj]
