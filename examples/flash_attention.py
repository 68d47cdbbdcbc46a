# FlashAttention forward written with tile operations (issue 16): O = softmax(Q K^T / sqrt(64)) V
# per batch and head, float16 in and out, float32 scores and accumulation, never materializing the
# S x S scores. A block takes 128 query rows; for each 128-key tile it computes the scores into a
# fragment, keeps the running row maximum and sum (online softmax: the previous output is rescaled
# by exp2(old max - new max)), and accumulates P V. Keys past S are masked to -inf; query rows past S
# read zeros and are not written, so S need not divide the tiles. The causal form masks key j > i
# and stops the key loop at the block's last row (CAUSAL_* in tests/python/test_tile_attention.py);
# head dim 128, bfloat16 and 192 query rows on 384 threads (three consumer warpgroups, the faster
# shape at head dim 64) are the same text with the numbers and dtype replaced. The row maxima are
# of the raw scores; the exponentials are exp2 of the scores scaled by log2(e) / sqrt(64), written
# as s * c - m * c so that each is one fused multiply-add (m * c is one product a row).
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def flash_attention(Q: T.Buffer((B, H, S, 64), "float16"), K: T.Buffer((B, H, S, 64), "float16"),
                    V: T.Buffer((B, H, S, 64), "float16"), O: T.Buffer((B, H, S, 64), "float16")):
    T.func_attr({"global_symbol": "flash_attention", "tir.noalias": True})
    with T.Kernel(T.ceildiv(S, 128), H, B, threads=256) as (bx, by, bz):
        Q_s = T.alloc_shared((128, 64), "float16")
        K_s = T.alloc_shared((128, 64), "float16")
        V_s = T.alloc_shared((128, 64), "float16")
        S_f = T.alloc_fragment((128, 128), "float32")
        P_f = T.alloc_fragment((128, 128), "float16")
        O_f = T.alloc_fragment((128, 64), "float32")
        m = T.alloc_fragment((128,), "float32")
        m_prev = T.alloc_fragment((128,), "float32")
        rescale = T.alloc_fragment((128,), "float32")
        row_sum = T.alloc_fragment((128,), "float32")
        l = T.alloc_fragment((128,), "float32")
        T.copy(Q[bz, by, bx * 128, 0], Q_s)
        T.fill(O_f, T.float32(0))
        T.fill(l, T.float32(0))
        T.fill(m, T.float32("-inf"))
        for k in T.Pipelined(T.ceildiv(S, 128), num_stages=2):
            T.copy(K[bz, by, k * 128, 0], K_s)
            T.gemm(Q_s, K_s, S_f, transpose_B=True, clear_accum=True)
            for i, j in T.Parallel(128, 128):
                S_f[i, j] = T.if_then_else(k * 128 + j < S, S_f[i, j], T.float32("-inf"))
            T.copy(m, m_prev)
            T.reduce_max(S_f, m, dim=1, clear=False)
            for i in T.Parallel(128):
                rescale[i] = T.exp2((m_prev[i] - m[i]) * T.float32(0.18033688011112042))
            for i, j in T.Parallel(128, 128):
                S_f[i, j] = T.exp2(S_f[i, j] * T.float32(0.18033688011112042) -
                                   m[i] * T.float32(0.18033688011112042))
            T.reduce_sum(S_f, row_sum, dim=1)
            for i in T.Parallel(128):
                l[i] = l[i] * rescale[i] + row_sum[i]
            for i, j in T.Parallel(128, 64):
                O_f[i, j] = O_f[i, j] * rescale[i]
            T.copy(S_f, P_f)
            T.copy(V[bz, by, k * 128, 0], V_s)
            T.gemm(P_f, V_s, O_f)
        for i, j in T.Parallel(128, 64):
            O_f[i, j] = O_f[i, j] / l[i]
        T.copy(O_f, O[bz, by, bx * 128, 0])
