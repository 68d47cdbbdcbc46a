# Collatz step counts: a while loop over a one-element local buffer, guarded by an assert.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def while_collatz(A: T.Buffer((256,), "int32"), S: T.Buffer((256,), "int32")):
    T.func_attr({"global_symbol": "while_collatz"})
    for i in range(256):
        assert A[i] > 0, "collatz: inputs must be positive"
        x_data = T.allocate([1], "int32", "local")
        x = T.decl_buffer((1,), "int32", data=x_data, scope="local")
        x[0] = A[i]
        S[i] = 0
        while x[0] != 1:
            if x[0] % 2 == 0:
                x[0] = x[0] // 2
            else:
                x[0] = x[0] * 3 + 1
            S[i] = S[i] + 1
