# C = A @ B written with tile operations (issue 16): 32x32 output tiles, A and B staged through
# shared tiles 16 deep in K, accumulated in a register fragment. T.copy reads zeros past the edges
# of A and B and writes only inside C, so no size needs to divide the tiles. It runs on the CPU
# (LowerTileOps lowers every tile operation to loops); GPU targets refuse it until their lowering
# (layout inference, wgmma, TMA) exists. docs/tile.md has the whole front end.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def tile_gemm(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"),
              C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "tile_gemm", "tir.noalias": True})
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
        A_s = T.alloc_shared((32, 16), "float32")
        B_s = T.alloc_shared((16, 32), "float32")
        C_f = T.alloc_fragment((32, 32), "float32")
        T.clear(C_f)
        for ko in T.Pipelined(T.ceildiv(K, 16), num_stages=2):
            T.copy(A[by * 32, ko * 16], A_s)
            T.copy(B[ko * 16, bx * 32], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * 32, bx * 32])
