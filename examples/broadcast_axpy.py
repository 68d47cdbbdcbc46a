# Vector axpy, y = alpha * x + y, with the scalar alpha broadcast to 8 lanes.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def broadcast_axpy(alpha: T.float32, X: T.Buffer((1024,), "float32"), Y: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "broadcast_axpy", "tir.noalias": True})
    for i in range(128):
        Y[i * 8:i * 8 + 8] = T.Broadcast(alpha, 8) * X[i * 8:i * 8 + 8] + Y[i * 8:i * 8 + 8]
