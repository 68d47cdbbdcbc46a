# take / gather along axis 0, out-of-bounds mode "clip" (indices clamped into [0, n)): B[i, j] = A[clamp(indices[i]), j].
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def take_gather(A: T.Buffer((n, m), "float32"), indices: T.Buffer((k,), "int32"), B: T.Buffer((k, m), "float32")):
    T.func_attr({"global_symbol": "take_gather", "tir.noalias": True})
    for i in T.parallel(k):
        for j in range(m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[0:n, vj], indices[vi])
                T.writes(B[vi, vj])
                B[vi, vj] = A[T.min(T.max(indices[vi], 0), n - 1), vj]
