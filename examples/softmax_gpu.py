# Row softmax on the GPU over symbolic sizes: one thread block per row, 256 threads striding over
# the row; the row max and the exp-sum are tree reductions through shared memory. The barriers are
# left to InjectSharedBarriers.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def softmax_gpu(A: T.Buffer((n, m), "float32"), B: T.Buffer((n, m), "float32")):
    T.func_attr({"global_symbol": "softmax_gpu", "target": "cuda", "tir.noalias": True})
    for row in T.thread_binding(n, thread="blockIdx.x"):
        red_data = T.allocate([256], "float32", "shared")
        red = T.decl_buffer((256,), "float32", data=red_data, scope="shared")
        acc_data = T.allocate([2], "float32", "local")
        acc = T.decl_buffer((2,), "float32", data=acc_data, scope="local")
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            acc[0] = T.float32("-inf")
            for k in range((m + 255) // 256):
                if k * 256 + tx < m:
                    acc[0] = T.max(acc[0], A[row, k * 256 + tx])
            red[tx] = acc[0]
            for s in T.unroll(8):
                if tx < 128 >> s:
                    red[tx] = T.max(red[tx], red[tx + (128 >> s)])
            acc[1] = red[0]
            acc[0] = T.float32(0)
            for k in range((m + 255) // 256):
                if k * 256 + tx < m:
                    acc[0] = acc[0] + T.exp(A[row, k * 256 + tx] - acc[1])
            red[tx] = acc[0]
            for s in T.unroll(8):
                if tx < 128 >> s:
                    red[tx] = red[tx] + red[tx + (128 >> s)]
            acc[0] = red[0]
            for k in range((m + 255) // 256):
                if k * 256 + tx < m:
                    B[row, k * 256 + tx] = T.exp(A[row, k * 256 + tx] - acc[1]) / acc[0]
