# A copy over a symbolic (n, m) shape whose block predicate bounds the flat index by the element
# count, as a bound check over the fused loop would. i * m + j < n * m holds for every i < n,
# j < m only if i * m + j does not wrap: the host wrapper checks n * m <= 2147483647, and with
# that fact lowering drops the predicate (docs/transform.md, "Host-checked facts").
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def symbolic_flat_guard(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    T.func_attr({"global_symbol": "symbolic_flat_guard", "tir.noalias": True})
    for i in range(n):
        for j in range(m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(i * m + j < n * m)
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.float32(1)
