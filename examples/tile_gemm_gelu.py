# C = gelu(A @ B.T + bias) in float16 (float32 accumulation, GELU's tanh form as
# torch.nn.functional.gelu(approximate="tanh")): examples/tile_gemm_hopper.py with an epilogue
# over the accumulator fragment. The T.Parallel loop runs on each thread's own elements of C_f,
# wherever layout inference put them (on sm_90a: the wgmma accumulator), so the bias and the GELU
# cost no extra pass over memory.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def tile_gemm_gelu(A: T.Buffer((M, K), "float16"), B: T.Buffer((N, K), "float16"),
                   bias: T.Buffer((N,), "float16"), C: T.Buffer((M, N), "float16")):
    T.func_attr({"global_symbol": "tile_gemm_gelu", "tir.noalias": True})
    with T.Kernel(T.ceildiv(N, 256), T.ceildiv(M, 128), threads=256) as (bx, by):
        A_s = T.alloc_shared((128, 64), "float16")
        B_s = T.alloc_shared((256, 64), "float16")
        C_f = T.alloc_fragment((128, 256), "float32")
        T.clear(C_f)
        for ko in T.Pipelined(T.ceildiv(K, 64), num_stages=3):
            T.copy(A[by * 128, ko * 64], A_s)
            T.copy(B[bx * 256, ko * 64], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=True)
        for i, j in T.Parallel(128, 256):
            x: T.float32 = C_f[i, j] + T.Cast("float32", bias[T.min(bx * 256 + j, N - 1)])
            C_f[i, j] = T.float32(0.5) * x * (T.float32(1) + T.tanh(
                T.float32(0.7978845608028654) * (x + T.float32(0.044715) * x * x * x)))
        T.copy(C_f, C[by * 128, bx * 256])
