# 1-D convolution (NCW layout, kernel 3, padding 1) with an explicit zero-padding stage.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def conv1d(X: T.Buffer((1, 16, 128), "float32"), W: T.Buffer((32, 16, 3), "float32"), Y: T.Buffer((1, 32, 128), "float32")):
    T.func_attr({"global_symbol": "conv1d", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        X_pad = T.alloc_buffer((1, 16, 130), "float32")
        for b in range(1):
            for c in range(16):
                for l in range(130):
                    with T.block("X_pad"):
                        vb, vc, vl = T.axis.remap("SSS", [b, c, l])
                        T.reads(X[vb, vc, vl - 1])
                        T.writes(X_pad[vb, vc, vl])
                        X_pad[vb, vc, vl] = T.if_then_else(1 <= vl and vl < 129, X[vb, vc, vl - 1], T.float32(0))
        for b in range(1):
            for co in range(32):
                for l in range(128):
                    for ci in range(16):
                        for k in range(3):
                            with T.block("Y"):
                                vb, vco, vl, vci, vk = T.axis.remap("SSSRR", [b, co, l, ci, k])
                                T.reads(X_pad[vb, vci, vl + vk], W[vco, vci, vk])
                                T.writes(Y[vb, vco, vl])
                                with T.init():
                                    Y[vb, vco, vl] = T.float32(0)
                                Y[vb, vco, vl] = Y[vb, vco, vl] + X_pad[vb, vci, vl + vk] * W[vco, vci, vk]
