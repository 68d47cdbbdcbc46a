# int8 x int8 dot products accumulated in int32 (the usual quantized GEMV), then requantized to uint8.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def int8_dot_accumulate(A: T.Buffer((64, 256), "int8"), x: T.Buffer((256,), "int8"), acc: T.Buffer((64,), "int32"), out: T.Buffer((64,), "uint8")):
    T.func_attr({"global_symbol": "int8_dot_accumulate", "tir.noalias": True})
    for i in range(64):
        for k in range(256):
            with T.block("acc"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk], x[vk])
                T.writes(acc[vi])
                with T.init():
                    acc[vi] = 0
                acc[vi] = acc[vi] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", x[vk])
    for i in range(64):
        with T.block("out"):
            vi = T.axis.remap("S", [i])
            T.reads(acc[vi])
            T.writes(out[vi])
            out[vi] = T.Cast("uint8", T.max(T.min(T.shift_right(acc[vi], 8) + 128, 255), 0))
