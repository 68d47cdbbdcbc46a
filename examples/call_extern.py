# Calls to external C functions: value-producing (call_extern / call_pure_extern) and as statements,
# plus T.evaluate of a plain value.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def call_extern(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "call_extern"})
    for i in range(256):
        B[i] = T.call_extern("float32", "expf", A[i])
        C[i] = T.call_pure_extern("float32", "fmaxf", T.call_pure_extern("float32", "fabsf", A[i]), T.float32(1e-06))
    T.call_extern("int32", "printf", "B[0] = %f\n", T.Cast("float64", B[0]))
    T.evaluate(0)
