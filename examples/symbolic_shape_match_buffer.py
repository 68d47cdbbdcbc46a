# Row scaling over symbolic shapes in the spelling TVM prints: handle parameters, `n = T.int32()`
# declarations and T.match_buffer at the top of the body.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def symbolic_shape_match_buffer(a: T.handle, s_handle: T.handle, b: T.handle):
    T.func_attr({"global_symbol": "symbolic_shape_match_buffer", "tir.noalias": True})
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m))
    s = T.match_buffer(s_handle, (n,))
    B = T.match_buffer(b, (n, m))
    for i in range(n):
        for j in range(m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], s[vi])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * s[vi]
