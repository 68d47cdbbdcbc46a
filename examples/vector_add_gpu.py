# GPU vector add over a symbolic length: one thread per element, 256 threads per block, the last
# block guarded against running past n.
# from tvm.script import tir as T

@T.prim_func
def vector_add_gpu(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "vector_add_gpu", "target": "cuda", "tir.noalias": True})
    for bx in T.thread_binding((n + 255) // 256, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            if bx * 256 + tx < n:
                C[bx * 256 + tx] = A[bx * 256 + tx] + B[bx * 256 + tx]
