# Programmatic dependent launch: the producer lets the next kernel on the stream start once its
# stores are issued (T.pdl_trigger); the consumer waits for the producer's memory (T.pdl_sync)
# before reading what it wrote.
from __future__ import annotations

from tessel.script import ir as I
from tessel.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def pdl_consumer(B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "pdl_consumer", "target": "cuda", "tir.noalias": True})
        for bx in T.thread_binding((n + 127) // 128, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                T.pdl_sync()
                if bx * 128 + tx < n:
                    C[bx * 128 + tx] = B[bx * 128 + tx] + T.float32(1)

    @T.prim_func
    def pdl_producer(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "pdl_producer", "target": "cuda", "tir.noalias": True})
        for bx in T.thread_binding((n + 127) // 128, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                if bx * 128 + tx < n:
                    B[bx * 128 + tx] = A[bx * 128 + tx] * T.float32(2)
                T.pdl_trigger()
