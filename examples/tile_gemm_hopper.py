# C = A @ B.T in float16 (float32 accumulation) written with tile operations: the tile-level form
# of examples/gemm_hopper.py. Built for CUDA sm_90a, layout inference gives A_s and B_s the
# 128-byte swizzle and C_f the wgmma accumulator layout, and the T.Pipelined loop becomes a
# warp-specialized pipeline: a producer warpgroup issues the two T.copy as TMA loads into a ring
# of 3 stages, the kernel's 256 threads (two warpgroups) run T.gemm as wgmma m64n256k16
# (docs/tile.md). When TMA cannot describe A or B (a row of K elements that is not a multiple of
# 16 bytes) the same program runs through the SIMT lowering instead. On the CPU it is loops.
# T.copy reads zeros past the edges of A and B and writes only inside C: any M, N, K.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def tile_gemm_hopper(A: T.Buffer((M, K), "float16"), B: T.Buffer((N, K), "float16"),
                     C: T.Buffer((M, N), "float16")):
    T.func_attr({"global_symbol": "tile_gemm_hopper", "tir.noalias": True})
    with T.Kernel(T.ceildiv(N, 256), T.ceildiv(M, 128), threads=256) as (bx, by):
        A_s = T.alloc_shared((128, 64), "float16")
        B_s = T.alloc_shared((256, 64), "float16")
        C_f = T.alloc_fragment((128, 256), "float32")
        T.clear(C_f)
        for ko in T.Pipelined(T.ceildiv(K, 64), num_stages=3):
            T.copy(A[by * 128, ko * 64], A_s)
            T.copy(B[bx * 256, ko * 64], B_s)
            T.gemm(A_s, B_s, C_f, transpose_B=True)
        T.copy(C_f, C[by * 128, bx * 256])
