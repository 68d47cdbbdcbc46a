# Row sums of a symbolic (n, 8) matrix over a fused loop, in the form TVM's fuse + split leave: the
# flat index is ko * 8 + ki, its row (ko * 8 + ki) // 8, and a predicate keeps it below n * 8. The
# host wrapper checks that A's n * 8 elements fit int32, so lowering knows n <= 268435455: the
# predicate is always true and the row is ko (docs/transform.md, "Host-checked facts").
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def symbolic_fused_rows(A: T.Buffer((n, 8), "float32"), B: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "symbolic_fused_rows", "tir.noalias": True})
    for ko in range(n):
        for ki in range(8):
            with T.block("B"):
                vi = T.axis.spatial(n, (ko * 8 + ki) // 8)
                vk = T.axis.reduce(8, (ko * 8 + ki) % 8)
                T.where(ko * 8 + ki < n * 8)
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
