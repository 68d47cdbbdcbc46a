# Interleave two 4-lane vectors into one 8-lane vector with T.Shuffle.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def shuffle_interleave(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), C: T.Buffer((512,), "float32")):
    T.func_attr({"global_symbol": "shuffle_interleave", "tir.noalias": True})
    for i in range(64):
        C[i * 8:i * 8 + 8] = T.Shuffle([A[i * 4:i * 4 + 4], B[i * 4:i * 4 + 4]], [0, 4, 1, 5, 2, 6, 3, 7])
