# A lowered GPU kernel: thread axes launched with T.attr("thread_extent"), plus pragma attributes on
# a string node and on None.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def attr_thread_extent(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    T.func_attr({"global_symbol": "attr_thread_extent", "target": "cuda", "tir.is_global_func": True})
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 32):
        with T.attr(threadIdx_x, "thread_extent", 128):
            with T.attr("default", "pragma_auto_unroll_max_step", 16):
                with T.attr(None, "pragma_comment", 0):
                    B[blockIdx_x * 128 + threadIdx_x] = A[blockIdx_x * 128 + threadIdx_x] + T.float32(1)
