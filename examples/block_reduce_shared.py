# A lowered shared-memory tree reduction per thread block, synchronized with tvm_storage_sync.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def block_reduce_shared(A: T.Buffer((32768,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "block_reduce_shared", "target": "cuda"})
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 256):
        red_data = T.allocate([128], "float32", "shared")
        red = T.decl_buffer((128,), "float32", data=red_data, scope="shared")
        with T.attr(threadIdx_x, "thread_extent", 128):
            red[threadIdx_x] = A[blockIdx_x * 128 + threadIdx_x]
            T.tvm_storage_sync("shared")
            for s in T.unroll(7):
                if threadIdx_x < 64 >> s:
                    red[threadIdx_x] = red[threadIdx_x] + red[threadIdx_x + (64 >> s)]
                T.tvm_storage_sync("shared")
            if threadIdx_x == 0:
                B[blockIdx_x] = red[0]
