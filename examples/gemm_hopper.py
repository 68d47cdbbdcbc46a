# C = A @ W.T on Hopper (sm_90a), float16 in, float32 accumulate, float16 out, for any M, N, K
# (K a multiple of 8: TMA needs 16-byte row strides). The bfloat16 form is the same text with
# "float16" -> "bfloat16" and the wgmma type "f16" -> "bf16" (bench/hopper_gemm.py makes it).
#
# Shaped like the fastest Hopper GEMMs: persistent and warp-specialized.
# - 132 blocks (the H200's SMs) walk the 128x256 output tiles, grouped 8 tile-rows at a time so
#   that the blocks running together share rows of A and columns of W in L2.
# - Warpgroup 0 is the producer: one thread issues TMA loads of 128x64 A and 256x64 W boxes
#   (128-byte swizzle, out-of-range elements read as zeros) into a 4-stage ring, each stage
#   guarded by a "full" mbarrier (TMA bytes arrive on it) and an "empty" one (consumers release
#   it). It gives its registers away (setmaxnreg 40).
# - Warpgroups 1 and 2 are the consumers (setmaxnreg 232): each owns 64 rows of the tile, waits
#   for a stage, runs 4 wgmma m64n256k16 on it, keeps one wgmma group in flight, and releases the
#   stage of the previous k-step; then writes its 64x256 fragment to C with bounds checks.
# The producer runs ahead into the next tile while the consumers write the last one.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def gemm_hopper(A: T.Buffer((M, K), "float16"), W: T.Buffer((N, K), "float16"),
                C: T.Buffer((M, N), "float16")):
    T.func_attr({"global_symbol": "gemm_hopper", "target": "cuda", "tir.noalias": True})
    A_map: T.handle = T.tma_descriptor("float16", 128, A.data, M, K, K, 1, 128, 64)
    W_map: T.handle = T.tma_descriptor("float16", 128, W.data, N, K, K, 1, 256, 64)
    for bid in T.thread_binding(T.min((M + 127) // 128 * ((N + 255) // 256), 132), thread="blockIdx.x"):
        smem_data = T.allocate([98304], "float16", "shared.dyn")
        smem = T.decl_buffer((98304,), "float16", data=smem_data, scope="shared.dyn")
        bar_data = T.allocate([8], "uint64", "shared")
        bar = T.decl_buffer((8,), "uint64", data=bar_data, scope="shared")
        for tx in T.thread_binding(384, thread="threadIdx.x"):
            acc_data = T.allocate([128], "float32", "local")
            acc = T.decl_buffer((128,), "float32", data=acc_data, scope="local")
            tiles_m: T.int32 = (M + 127) // 128
            tiles_n: T.int32 = (N + 255) // 256
            k_tiles: T.int32 = (K + 63) // 64
            my_tiles: T.int32 = (tiles_m * tiles_n - bid + 131) // 132
            if tx == 0:
                for s in T.unroll(4):
                    T.ptx_mbarrier_init(T.address_of(bar[s]), 1)
                    T.ptx_mbarrier_init(T.address_of(bar[4 + s]), 8)
                T.ptx_fence_mbarrier_init()
            T.tvm_storage_sync("shared")
            if tx < 128:
                T.ptx_setmaxnreg_dec(40)
                if tx == 0:
                    for i in range(my_tiles):
                        t: T.int32 = bid + i * 132
                        rows: T.int32 = T.min(tiles_m - t // (8 * tiles_n) * 8, 8)
                        tm: T.int32 = t // (8 * tiles_n) * 8 + t % (8 * tiles_n) % rows
                        tn: T.int32 = t % (8 * tiles_n) // rows
                        for kt in range(k_tiles):
                            it: T.int32 = i * k_tiles + kt
                            T.ptx_mbarrier_wait(T.address_of(bar[4 + it % 4]), T.bitwise_xor(it // 4 % 2, 1))
                            T.ptx_mbarrier_arrive_expect_tx(T.address_of(bar[it % 4]), 49152)
                            T.ptx_tma_load(T.address_of(smem[it % 4 * 24576]), A_map, T.address_of(bar[it % 4]), tm * 128, kt * 64)
                            T.ptx_tma_load(T.address_of(smem[it % 4 * 24576 + 8192]), W_map, T.address_of(bar[it % 4]), tn * 256, kt * 64)
            else:
                T.ptx_setmaxnreg_inc(232)
                for i in range(my_tiles):
                    t: T.int32 = bid + i * 132
                    rows: T.int32 = T.min(tiles_m - t // (8 * tiles_n) * 8, 8)
                    tm: T.int32 = t // (8 * tiles_n) * 8 + t % (8 * tiles_n) % rows
                    tn: T.int32 = t % (8 * tiles_n) // rows
                    for kt in range(k_tiles):
                        it: T.int32 = i * k_tiles + kt
                        T.ptx_mbarrier_wait(T.address_of(bar[it % 4]), it // 4 % 2)
                        T.ptx_wgmma_fence()
                        for ks in T.unroll(4):
                            T.ptx_wgmma_mma_async(
                                T.address_of(acc[0]),
                                T.ptx_wgmma_desc(T.address_of(smem[it % 4 * 24576 + (tx // 128 - 1) * 4096 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                                T.ptx_wgmma_desc(T.address_of(smem[it % 4 * 24576 + 8192 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                                T.Select(kt > 0 or ks > 0, 1, 0), "m64n256k16", "f16", 0, 0)
                        T.ptx_wgmma_commit_group()
                        T.ptx_wgmma_wait_group(1)
                        if kt > 0 and tx % 32 == 0:
                            T.ptx_mbarrier_arrive(T.address_of(bar[4 + (it - 1) % 4]))
                    T.ptx_wgmma_wait_group(0)
                    if k_tiles > 0 and tx % 32 == 0:
                        T.ptx_mbarrier_arrive(T.address_of(bar[4 + (i * k_tiles + k_tiles - 1) % 4]))
                    if k_tiles == 0:
                        for r in T.unroll(128):
                            acc[r] = T.float32(0)
                    for j in T.unroll(32):
                        for h in T.unroll(2):
                            row: T.int32 = tm * 128 + (tx // 128 - 1) * 64 + tx % 128 // 32 * 16 + tx % 32 // 4 + 8 * h
                            col: T.int32 = tn * 256 + 8 * j + 2 * (tx % 4)
                            if row < M:
                                for c in T.unroll(2):
                                    if col + c < N:
                                        C[row, col + c] = T.Cast("float16", acc[4 * j + 2 * h + c])
