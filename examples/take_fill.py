# take / gather along axis 0 with out-of-bounds mode "fill": B[i, j] = A[indices[i], j] when
# 0 <= indices[i] < n, else fill_value. The fill value is a parameter of the tensor's own dtype
# (int32 here), not a float NaN forced onto an integer tensor.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def take_fill(A: T.Buffer((n, m), "int32"), indices: T.Buffer((k,), "int64"), fill_value: T.int32, B: T.Buffer((k, m), "int32")):
    T.func_attr({"global_symbol": "take_fill", "tir.noalias": True})
    for i in T.parallel(k):
        for j in range(m):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[0:n, vj], indices[vi])
                T.writes(B[vi, vj])
                B[vi, vj] = T.if_then_else(0 <= indices[vi] and indices[vi] < T.Cast("int64", n), A[indices[vi], vj], fill_value)
