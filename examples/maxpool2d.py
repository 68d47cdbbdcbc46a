# 2x2 max pooling with stride 2 (NCHW): two reduce axes, initialized to -inf.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def maxpool2d(X: T.Buffer((1, 8, 64, 64), "float32"), Y: T.Buffer((1, 8, 32, 32), "float32")):
    T.func_attr({"global_symbol": "maxpool2d", "tir.noalias": True})
    for b in range(1):
        for c in range(8):
            for h in range(32):
                for w in range(32):
                    for rh in range(2):
                        for rw in range(2):
                            with T.block("Y"):
                                vb, vc, vh, vw, vrh, vrw = T.axis.remap("SSSSRR", [b, c, h, w, rh, rw])
                                T.reads(X[vb, vc, vh * 2 + vrh, vw * 2 + vrw])
                                T.writes(Y[vb, vc, vh, vw])
                                with T.init():
                                    Y[vb, vc, vh, vw] = T.float32("-inf")
                                Y[vb, vc, vh, vw] = T.max(Y[vb, vc, vh, vw], X[vb, vc, vh * 2 + vrh, vw * 2 + vrw])
