# Every loop kind: serial (range and T.serial with a start and annotations), parallel, unrolled,
# vectorized, and thread-bound.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def loop_kinds(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "loop_kinds"})
    for i in T.parallel(64):
        for j_0 in T.unroll(16):
            for j_1 in T.vectorized(4):
                B[i, j_0 * 4 + j_1] = A[i, j_0 * 4 + j_1] + T.float32(1)
    for i in T.serial(1, 63, annotations={"pragma_unroll_explicit": 0, "software_pipeline_stage": [0, 1]}):
        for j in range(1, 63):
            C[i, j] = B[i - 1, j] + B[i + 1, j]
    for t in T.thread_binding(64, thread="threadIdx.x"):
        for k in T.serial(64):
            C[t, k] = C[t, k] * T.float32(0.5)
    for i in T.parallel(64, annotations={"pragma_parallel_barrier_when_finish": 1}):
        C[i, 0] = T.float32(0)
