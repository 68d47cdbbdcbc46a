# C = A @ W.T on Hopper (sm_90a), float16 in, float32 accumulate, float16 out, for any M, N, K.
# TMA needs 16-byte row strides, so the fast kernel below runs when N and K are multiples of 8;
# other sizes (and K = 0) take a plain CUDA-core kernel (the host picks at launch). The bfloat16 form is the same text with
# "float16" -> "bfloat16" and the wgmma type "f16" -> "bf16" (bench/hopper_gemm.py makes it).
#
# Shaped like the fastest Hopper GEMMs: persistent and warp-specialized.
# - 132 blocks (the H200's SMs) walk the 128x256 output tiles, grouped 8 tile-rows at a time so
#   that the blocks running together share rows of A and columns of W in L2.
# - Warpgroup 0 is the producer: one thread issues TMA loads of 128x64 A and 256x64 W boxes
#   (128-byte swizzle, out-of-range elements read as zeros) into a 3-stage ring, each stage
#   guarded by a "full" mbarrier (TMA bytes arrive on it) and an "empty" one (consumers release
#   it). It gives its registers away (setmaxnreg 40).
# - Warpgroups 1 and 2 are the consumers (setmaxnreg 232): each owns 64 rows of the tile, waits
#   for a stage, runs 4 wgmma m64n256k16 on it, keeps one wgmma group in flight, and releases the
#   stage of the previous k-step. Its epilogue writes the 64x256 fragment, cast to float16, into
#   four 64x64 shared boxes (a tessel.swizzle_bytes buffer: indexed logically, stored with the
#   128-byte swizzle, which makes the stores conflict-free), and one thread TMA-stores them
#   (rows and columns past M and N are not written), waiting for its previous stores only when
#   it reuses their shared memory.
# The producer runs ahead into the next tile while the consumers write the last one.
# The fallback: 64x64 tiles, 16x16 threads with 4x4 outputs each, 32-wide K slabs staged in
# shared memory with zero fill at the edges.
from __future__ import annotations

from tessel.script import tir as T

@T.prim_func
def gemm_hopper(A: T.Buffer((M, K), "float16"), W: T.Buffer((N, K), "float16"),
                C: T.Buffer((M, N), "float16")):
    # The mbarriers and named barriers order every shared-memory access: no barriers to infer.
    T.func_attr({"global_symbol": "gemm_hopper", "target": "cuda", "tir.noalias": True,
                 "tessel.manual_shared_sync": True})
    A_map: T.handle = T.tma_descriptor("float16", 128, A.data, M, K, K, 1, 128, 64)
    W_map: T.handle = T.tma_descriptor("float16", 128, W.data, N, K, K, 1, 256, 64)
    C_map: T.handle = T.tma_descriptor("float16", 128, C.data, M, N, N, 1, 64, 64)
    if M > 0 and N > 0:
        if N % 8 == 0 and K % 8 == 0 and K > 0:
            for bid in T.thread_binding(T.min((M + 127) // 128 * ((N + 255) // 256), 132), thread="blockIdx.x"):
                # 3 stages of A (128x64) and W (256x64), written by TMA with its 128-byte swizzle
                # (the annotation says so; every address the kernel takes is an atom's start, or
                # a k16 step within row 0 of one, where the swizzle moves nothing).
                smem_data = T.allocate([73728], "float16", "shared.dyn", annotations={"tessel.swizzle_bytes": 128})
                smem = T.decl_buffer((73728,), "float16", data=smem_data, scope="shared.dyn")
                # Each consumer's 4 output boxes of 64x64, indexed logically; SwizzleLayout stores
                # them with the 128-byte swizzle that the TMA store of C_map reads.
                out_data = T.allocate([32768], "float16", "shared.dyn", annotations={"tessel.swizzle_bytes": 128})
                out = T.decl_buffer((32768,), "float16", data=out_data, scope="shared.dyn")
                bar_data = T.allocate([6], "uint64", "shared")
                bar = T.decl_buffer((6,), "uint64", data=bar_data, scope="shared")
                for tx in T.thread_binding(384, thread="threadIdx.x"):
                    acc_data = T.allocate([128], "float32", "local")
                    acc = T.decl_buffer((128,), "float32", data=acc_data, scope="local")
                    tiles_m: T.int32 = (M + 127) // 128
                    tiles_n: T.int32 = (N + 255) // 256
                    k_tiles: T.int32 = (K + 63) // 64
                    my_tiles: T.int32 = (tiles_m * tiles_n - bid + 131) // 132
                    if tx == 0:
                        for s in T.unroll(3):
                            T.ptx_mbarrier_init(T.address_of(bar[s]), 1)
                            T.ptx_mbarrier_init(T.address_of(bar[3 + s]), 8)
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
                                    T.ptx_mbarrier_wait(T.address_of(bar[3 + it % 3]), T.bitwise_xor(it // 3 % 2, 1))
                                    T.ptx_mbarrier_arrive_expect_tx(T.address_of(bar[it % 3]), 49152)
                                    T.ptx_tma_load(T.address_of(smem[it % 3 * 24576]), A_map, T.address_of(bar[it % 3]), tm * 128, kt * 64)
                                    T.ptx_tma_load(T.address_of(smem[it % 3 * 24576 + 8192]), W_map, T.address_of(bar[it % 3]), tn * 256, kt * 64)
                    else:
                        T.ptx_setmaxnreg_inc(232)
                        for i in range(my_tiles):
                            t: T.int32 = bid + i * 132
                            rows: T.int32 = T.min(tiles_m - t // (8 * tiles_n) * 8, 8)
                            tm: T.int32 = t // (8 * tiles_n) * 8 + t % (8 * tiles_n) % rows
                            tn: T.int32 = t % (8 * tiles_n) // rows
                            for kt in range(k_tiles):
                                it: T.int32 = i * k_tiles + kt
                                T.ptx_mbarrier_wait(T.address_of(bar[it % 3]), it // 3 % 2)
                                T.ptx_wgmma_fence()
                                for ks in T.unroll(4):
                                    T.ptx_wgmma_mma_async(
                                        T.address_of(acc[0]),
                                        T.ptx_wgmma_desc(T.address_of(smem[it % 3 * 24576 + (tx // 128 - 1) * 4096 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                                        T.ptx_wgmma_desc(T.address_of(smem[it % 3 * 24576 + 8192 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                                        T.Select(kt > 0 or ks > 0, 1, 0), "m64n256k16", "f16", 0, 0)
                                T.ptx_wgmma_commit_group()
                                T.ptx_wgmma_wait_group(1)
                                if kt > 0 and tx % 32 == 0:
                                    T.ptx_mbarrier_arrive(T.address_of(bar[3 + (it - 1) % 3]))
                            T.ptx_wgmma_wait_group(0)
                            if k_tiles > 0 and tx % 32 == 0:
                                T.ptx_mbarrier_arrive(T.address_of(bar[3 + (i * k_tiles + k_tiles - 1) % 3]))
                            if k_tiles == 0:
                                for r in T.unroll(128):
                                    acc[r] = T.float32(0)
                            # The previous tile's stores must have read the boxes before they are reused.
                            if tx % 128 == 0:
                                T.ptx_tma_store_wait_group(0)
                            T.ptx_named_barrier_sync(tx // 128, 128)
                            for j in T.unroll(32):
                                for h in T.unroll(2):
                                    for c in T.unroll(2):
                                        out[(tx // 128 - 1) * 16384 + j // 8 * 4096 + (tx % 128 // 32 * 16 + tx % 32 // 4 + 8 * h) * 64 + j % 8 * 8 + 2 * (tx % 4) + c] = T.Cast("float16", acc[4 * j + 2 * h + c])
                            T.ptx_fence_proxy_async()
                            T.ptx_named_barrier_sync(tx // 128, 128)
                            if tx % 128 == 0:
                                for b in T.unroll(4):
                                    T.ptx_tma_store(C_map, T.address_of(out[(tx // 128 - 1) * 16384 + b * 4096]), tm * 128 + (tx // 128 - 1) * 64, tn * 256 + b * 64)
                                T.ptx_tma_store_commit_group()
                        if tx % 128 == 0:
                            T.ptx_tma_store_wait_group(0)
        else:
            for bn in T.thread_binding((N + 63) // 64, thread="blockIdx.x"):
                for bm in T.thread_binding((M + 63) // 64, thread="blockIdx.y"):
                    a_data = T.allocate([2112], "float32", "shared")
                    a_s = T.decl_buffer((2112,), "float32", data=a_data, scope="shared")
                    w_data = T.allocate([2112], "float32", "shared")
                    w_s = T.decl_buffer((2112,), "float32", data=w_data, scope="shared")
                    for ty in T.thread_binding(16, thread="threadIdx.y"):
                        for tx in T.thread_binding(16, thread="threadIdx.x"):
                            sums_data = T.allocate([16], "float32", "local")
                            sums = T.decl_buffer((16,), "float32", data=sums_data, scope="local")
                            for r in T.unroll(16):
                                sums[r] = T.float32(0)
                            for k0 in range((K + 31) // 32):
                                for l in T.unroll(8):
                                    a_s[(l * 8 + ty // 2) * 33 + ty % 2 * 16 + tx] = T.if_then_else(bm * 64 + l * 8 + ty // 2 < M and k0 * 32 + ty % 2 * 16 + tx < K, T.Cast("float32", A[bm * 64 + l * 8 + ty // 2, k0 * 32 + ty % 2 * 16 + tx]), T.float32(0))
                                    w_s[(l * 8 + ty // 2) * 33 + ty % 2 * 16 + tx] = T.if_then_else(bn * 64 + l * 8 + ty // 2 < N and k0 * 32 + ty % 2 * 16 + tx < K, T.Cast("float32", W[bn * 64 + l * 8 + ty // 2, k0 * 32 + ty % 2 * 16 + tx]), T.float32(0))
                                T.tvm_storage_sync("shared")
                                for kk in range(32):
                                    for i in T.unroll(4):
                                        for j in T.unroll(4):
                                            sums[i * 4 + j] = sums[i * 4 + j] + a_s[(ty + 16 * i) * 33 + kk] * w_s[(tx + 16 * j) * 33 + kk]
                                T.tvm_storage_sync("shared")
                            for i in T.unroll(4):
                                for j in T.unroll(4):
                                    if bm * 64 + ty + 16 * i < M and bn * 64 + tx + 16 * j < N:
                                        C[bm * 64 + ty + 16 * i, bn * 64 + tx + 16 * j] = T.Cast("float16", sums[i * 4 + j])
