# A module of two functions; one calls the other through T.call_global.
from __future__ import annotations

from tessel.script import ir as I
from tessel.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def clamp_index(i: T.int32, n: T.int32):
        T.func_attr({"global_symbol": "clamp_index"})
        T.ret(T.max(T.min(i, n - 1), 0))

    @T.prim_func
    def gather_clamped(A: T.Buffer((n,), "float32"), idx: T.Buffer((64,), "int32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "gather_clamped"})
        for i in range(64):
            B[i] = A[T.call_global("clamp_index", "int32", idx[i], n)]
