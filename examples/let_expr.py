# Expression-level Let: bind a value once and use it several times inside one expression.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def let_expr(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "let_expr", "tir.noalias": True})
    for i in range(256):
        B[i] = T.Let(x * x + x, where={x: A[i] + T.float32(1)})
