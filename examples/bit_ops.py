# Integer hashing and bit tricks: shifts, and/or/xor/not, popcount, and float bits through reinterpret.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def bit_ops(X: T.Buffer((1024,), "uint32"), H: T.Buffer((1024,), "uint32"), P: T.Buffer((1024,), "int32"), F: T.Buffer((1024,), "float32"), G: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "bit_ops", "tir.noalias": True})
    for i in range(1024):
        h: T.uint32 = X[i] ^ X[i] >> T.uint32(16)
        h2: T.uint32 = h * T.uint32(2246822507)
        H[i] = (h2 ^ h2 >> T.uint32(13)) & T.uint32(65535) | ~h2 << T.uint32(16)
        P[i] = T.popcount(X[i], dtype="int32")
        F[i] = T.reinterpret("float32", T.reinterpret("uint32", G[i]) & T.uint32(2147483647))
