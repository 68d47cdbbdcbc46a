# Statement-level control flow: if / elif / else, a branch hint with T.likely, and not / or.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def if_elif_else(A: T.Buffer((300,), "float32"), B: T.Buffer((300,), "float32"), n: T.int32):
    T.func_attr({"global_symbol": "if_elif_else"})
    for i in range(300):
        if T.likely(i < n):
            if i < 100:
                B[i] = A[i]
            elif i >= 100 and i < 200:
                B[i] = A[i] * T.float32(2)
            else:
                B[i] = A[i] * T.float32(3)
        if not (i < n) or i == 0:
            B[i] = T.float32(0)
