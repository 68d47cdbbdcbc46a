# Symmetric int8 quantization and dequantization: q = clamp(round(x / scale), -128, 127).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def quantize_int8(X: T.Buffer((1024,), "float32"), scale: T.float32, Q: T.Buffer((1024,), "int8"), D: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "quantize_int8", "tir.noalias": True})
    for i in range(1024):
        with T.block("Q"):
            vi = T.axis.remap("S", [i])
            T.reads(X[vi])
            T.writes(Q[vi])
            Q[vi] = T.Cast("int8", T.max(T.min(T.round(X[vi] / scale), T.float32(127)), T.float32(-128)))
    for i in range(1024):
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            T.reads(Q[vi])
            T.writes(D[vi])
            D[vi] = T.Cast("float32", T.Cast("int32", Q[vi])) * scale
