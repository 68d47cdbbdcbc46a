# SiLU (x * sigmoid(x)) with the sigmoid spelled out through T.exp, next to the T.sigmoid intrinsic.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def silu_sigmoid(X: T.Buffer((64, 512), "float32"), Y: T.Buffer((64, 512), "float32"), G: T.Buffer((64, 512), "float32")):
    T.func_attr({"global_symbol": "silu_sigmoid", "tir.noalias": True})
    for i in range(64):
        for j in range(512):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = X[vi, vj] / (T.float32(1) + T.exp(T.float32(0) - X[vi, vj]))
    for i in range(64):
        for j in range(512):
            with T.block("G"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(X[vi, vj])
                T.writes(G[vi, vj])
                G[vi, vj] = T.sigmoid(X[vi, vj])
