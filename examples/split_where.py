# A loop over symbolic n split by 16, with the tail guarded by the block predicate T.where.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def split_where(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "split_where", "tir.noalias": True})
    for io in range((n + 15) // 16):
        for ii in range(16):
            with T.block("B"):
                vi = T.axis.spatial(n, io * 16 + ii)
                T.where(io * 16 + ii < n)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(2)
