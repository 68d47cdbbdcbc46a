# int64 shapes, loops and flat indices: buffers too large for 32-bit index arithmetic.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def int64_indexing(A: T.Buffer((T.int64(65536), T.int64(65536)), "float16"), B: T.Buffer((T.int64(4294967296),), "float16"), C: T.Buffer((n,), "float32", index_dtype="int64")):
    T.func_attr({"global_symbol": "int64_indexing", "tir.noalias": True})
    for i in range(T.int64(65536)):
        for j in range(T.int64(65536)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi * T.int64(65536) + vj])
                B[vi * T.int64(65536) + vj] = A[vi, vj] * T.float16(2)
    for k in range(n):
        C[k] = T.Cast("float32", B[k % T.int64(4294967296)])
