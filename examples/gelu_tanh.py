# GELU, tanh approximation: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def gelu_tanh(X: T.Buffer((4096,), "float32"), Y: T.Buffer((4096,), "float32")):
    T.func_attr({"global_symbol": "gelu_tanh", "tir.noalias": True})
    for i in range(4096):
        with T.block("Y"):
            vi = T.axis.remap("S", [i])
            T.reads(X[vi])
            T.writes(Y[vi])
            Y[vi] = T.float32(0.5) * X[vi] * (T.float32(1) + T.tanh(T.float32(0.7978845608028654) * (X[vi] + T.float32(0.044715) * X[vi] * X[vi] * X[vi])))
