# Sum over the last axis: B[i] = sum_k A[i, k].
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def reduce_sum(A: T.Buffer((256, 1024), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "reduce_sum", "tir.noalias": True})
    for i in range(256):
        for k in range(1024):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
