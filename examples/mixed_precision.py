# Mixed precision: float16 / bfloat16 / float64 inputs, bool masks, NaN and infinity handling.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def mixed_precision(X: T.Buffer((1024,), "float16"), Y: T.Buffer((1024,), "bfloat16"), mask: T.Buffer((1024,), "bool"), Z: T.Buffer((1024,), "float32"), W: T.Buffer((1024,), "float64")):
    T.func_attr({"global_symbol": "mixed_precision", "tir.noalias": True})
    for i in range(1024):
        with T.block("Z"):
            vi = T.axis.remap("S", [i])
            T.reads(X[vi], Y[vi], mask[vi])
            T.writes(Z[vi])
            Z[vi] = T.Select(mask[vi] == T.bool(True), T.Cast("float32", X[vi] * T.float16(0.5)) + T.Cast("float32", Y[vi]), T.float32("nan"))
    for i in range(1024):
        with T.block("W"):
            vi = T.axis.remap("S", [i])
            T.reads(Z[vi])
            T.writes(W[vi])
            W[vi] = T.if_then_else(T.isnan(Z[vi]) or T.isinf(Z[vi]), T.float64(0), T.Cast("float64", Z[vi]) + T.float64(1e-09))
