# Argument checks with assert and scalar temporaries with LetStmt, as a lowered host function has them.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def assert_let_stmt(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), lo: T.int32, hi: T.int32):
    T.func_attr({"global_symbol": "assert_let_stmt"})
    assert 0 <= lo, "lo must be non-negative"
    assert lo <= hi and hi <= n, "expected lo <= hi <= n"
    count: T.int32 = hi - lo
    inv: T.float32 = T.float32(1) / T.Cast("float32", T.max(count, 1))
    for i in range(count):
        j: T.int32 = lo + i
        B[j] = A[j] * inv
