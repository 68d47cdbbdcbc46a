# A block that binds a 16x16 sub-tile of A with T.match_buffer and carries block annotations.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def match_buffer_tile(A: T.Buffer((64, 64), "float32"), B: T.Buffer((4, 4), "float32")):
    T.func_attr({"global_symbol": "match_buffer_tile", "tir.noalias": True})
    for io in range(4):
        for jo in range(4):
            with T.block("tile"):
                vi, vj = T.axis.remap("SS", [io, jo])
                T.reads(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16])
                T.writes(B[vi, vj])
                T.block_attr({"meta_schedule.tile": 16, "note": "sum of one tile"})
                Asub = T.match_buffer(A[vi * 16:vi * 16 + 16, vj * 16:vj * 16 + 16], (16, 16), "float32", strides=(64, 1), elem_offset=vi * 1024 + vj * 16)
                B[vi, vj] = T.float32(0)
                for ii in range(16):
                    for jj in range(16):
                        B[vi, vj] = B[vi, vj] + Asub[ii, jj]
