# Element-wise vector add, C = A + B, over a symbolic length n: 8-wide chunks spread over the CPU's
# threads and vectorized, then a scalar tail for the n % 8 elements left over.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def vector_add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "vector_add", "tir.noalias": True})
    for io in T.parallel(n // 8):
        for ii in T.vectorized(8):
            with T.block("C"):
                vi = T.axis.spatial(n, io * 8 + ii)
                T.reads(A[vi], B[vi])
                T.writes(C[vi])
                C[vi] = A[vi] + B[vi]
    for i in range(n % 8):
        with T.block("C_tail"):
            vi = T.axis.spatial(n, n // 8 * 8 + i)
            T.reads(A[vi], B[vi])
            T.writes(C[vi])
            C[vi] = A[vi] + B[vi]
