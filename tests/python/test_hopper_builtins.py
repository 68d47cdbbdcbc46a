"""The Hopper PTX builtins (include/tessel/ir/builtin_hopper.h): they print and parse, the CUDA
generator writes them as inline PTX that NVRTC compiles for sm_90a (ptxas checks every
instruction) and whose PTX names the instruction, the sm_90a-only ones are refused for sm_90, and
operands PTX needs as immediates are checked. On a GPU: a cp.async + mbarrier exchange between
threads, and one m64n64k16 wgmma from shared-memory descriptors, against torch."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm_ffi

import tessel
from tessel import ir

WGMMA = """
@T.prim_func
def wgmma_tile(A: T.Buffer((64, 16), "float16"), Bt: T.Buffer((64, 16), "float16"),
               C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "wgmma_tile", "target": "cuda", "tir.noalias": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        a_data = T.allocate([1024], "float16", "shared")
        a_s = T.decl_buffer((1024,), "float16", data=a_data, scope="shared")
        b_data = T.allocate([1024], "float16", "shared")
        b_s = T.decl_buffer((1024,), "float16", data=b_data, scope="shared")
        acc_data = T.allocate([32], "float32", "local")
        acc = T.decl_buffer((32,), "float32", data=acc_data, scope="local")
        # Core matrices of 8 rows x 16 bytes, 128 bytes each: (m // 8, k // 8) at
        # ((m // 8) * 2 + k // 8) * 64 elements; K-adjacent ones 128 bytes apart (leading byte
        # offset), M-adjacent ones 256 (stride byte offset).
        for i in T.unroll(8):
            a_s[((threadIdx_x * 8 + i) // 128 * 2 + (threadIdx_x * 8 + i) % 16 // 8) * 64
                + (threadIdx_x * 8 + i) // 16 % 8 * 8 + (threadIdx_x * 8 + i) % 8] = A[
                (threadIdx_x * 8 + i) // 16, (threadIdx_x * 8 + i) % 16]
            b_s[((threadIdx_x * 8 + i) // 128 * 2 + (threadIdx_x * 8 + i) % 16 // 8) * 64
                + (threadIdx_x * 8 + i) // 16 % 8 * 8 + (threadIdx_x * 8 + i) % 8] = Bt[
                (threadIdx_x * 8 + i) // 16, (threadIdx_x * 8 + i) % 16]
        for r in T.unroll(32):
            acc[r] = T.float32(0)
        T.ptx_fence_proxy_async()
        T.tvm_storage_sync("shared")
        T.ptx_wgmma_fence()
        T.ptx_wgmma_mma_async(T.address_of(acc[0]),
                              T.ptx_wgmma_desc(T.address_of(a_s[0]), 128, 256, 0, dtype="uint64"),
                              T.ptx_wgmma_desc(T.address_of(b_s[0]), 128, 256, 0, dtype="uint64"),
                              1, "m64n64k16", "f16", 0, 0)
        T.ptx_wgmma_commit_group()
        T.ptx_wgmma_wait_group(0)
        for j in T.unroll(8):
            for h in T.unroll(2):
                for c in T.unroll(2):
                    C[threadIdx_x // 32 * 16 + threadIdx_x % 32 // 4 + 8 * h,
                      8 * j + 2 * (threadIdx_x % 4) + c] = acc[4 * j + 2 * h + c]
"""

EXCHANGE = """
@T.prim_func
def exchange(A: T.Buffer((512,), "float32"), B: T.Buffer((512,), "float32")):
    T.func_attr({"global_symbol": "exchange", "target": "cuda", "tir.noalias": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        s_data = T.allocate([512], "float32", "shared")
        s = T.decl_buffer((512,), "float32", data=s_data, scope="shared")
        bar_data = T.allocate([1], "uint64", "shared")
        bar = T.decl_buffer((1,), "uint64", data=bar_data, scope="shared")
        if threadIdx_x == 0:
            T.ptx_mbarrier_init(T.address_of(bar[0]), 128)
            T.ptx_fence_mbarrier_init()
        T.tvm_storage_sync("shared")
        T.ptx_cp_async(T.address_of(s[threadIdx_x * 4]), T.address_of(A[threadIdx_x * 4]), 16)
        T.ptx_cp_async_commit_group()
        T.ptx_cp_async_wait_group(0)
        T.ptx_mbarrier_arrive(T.address_of(bar[0]))
        T.ptx_mbarrier_wait(T.address_of(bar[0]), 0)
        for i in range(4):
            B[threadIdx_x * 4 + i] = s[(threadIdx_x * 4 + 4 + i) % 512]
"""

MISC = """
@T.prim_func
def misc(A: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "misc", "target": "cuda"})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 256):
        if threadIdx_x < 128:
            T.ptx_setmaxnreg_dec(40)
            T.ptx_named_barrier_arrive(1, 256)
        else:
            T.ptx_setmaxnreg_inc(232)
            T.ptx_named_barrier_sync(1, 256)
        if T.ptx_elect_one_sync(dtype="bool"):
            A[threadIdx_x] = T.float32(1)
"""


# A first hand-written Hopper GEMM, C = A @ W.T (W is [N, K], K contiguous, as nn.Linear keeps
# it): 128x128 tiles, two consumer warpgroups of m64n128k16 wgmma, a STAGES-deep cp.async ring of
# K-major core matrices (8 rows x 16 bytes, no swizzle), one wgmma group in flight per k-tile.
# Sizes must be multiples of the tiles; a step toward the examples of issue 15, not one of them.
GEMM = """
@T.prim_func
def gemm(A: T.Buffer((M, K), "float16"), W: T.Buffer((N, K), "float16"),
         C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "gemm", "target": "cuda", "tir.noalias": True})
    for bn in T.thread_binding(N // 128, thread="blockIdx.x"):
        for bm in T.thread_binding(M // 128, thread="blockIdx.y"):
            smem_data = T.allocate([STAGES * 16384], "float16", "shared.dyn")
            smem = T.decl_buffer((STAGES * 16384,), "float16", data=smem_data, scope="shared.dyn")
            for tx in T.thread_binding(256, thread="threadIdx.x"):
                acc_data = T.allocate([64], "float32", "local")
                acc = T.decl_buffer((64,), "float32", data=acc_data, scope="local")
                for r in T.unroll(64):
                    acc[r] = T.float32(0)
                for s in T.unroll(STAGES - 1):
                    for c in T.unroll(4):
                        T.ptx_cp_async(
                            T.address_of(smem[s * 16384 + ((c * 256 + tx) // 64 * 8 + (c * 256 + tx) // 8 % 8) * 64 + (c * 256 + tx) % 8 * 8]),
                            T.address_of(A[bm * 128 + (c * 256 + tx) // 64 * 8 + (c * 256 + tx) % 8, s * 64 + (c * 256 + tx) // 8 % 8 * 8]), 16)
                        T.ptx_cp_async(
                            T.address_of(smem[s * 16384 + 8192 + ((c * 256 + tx) // 64 * 8 + (c * 256 + tx) // 8 % 8) * 64 + (c * 256 + tx) % 8 * 8]),
                            T.address_of(W[bn * 128 + (c * 256 + tx) // 64 * 8 + (c * 256 + tx) % 8, s * 64 + (c * 256 + tx) // 8 % 8 * 8]), 16)
                    T.ptx_cp_async_commit_group()
                for kt in range(K // 64):
                    T.ptx_cp_async_wait_group(STAGES - 2)
                    T.tvm_storage_sync("shared")
                    T.ptx_fence_proxy_async()
                    T.ptx_wgmma_fence()
                    for ks in T.unroll(4):
                        T.ptx_wgmma_mma_async(
                            T.address_of(acc[0]),
                            T.ptx_wgmma_desc(T.address_of(smem[kt % STAGES * 16384 + tx // 128 * 4096 + ks * 128]), 128, 1024, 0, dtype="uint64"),
                            T.ptx_wgmma_desc(T.address_of(smem[kt % STAGES * 16384 + 8192 + ks * 128]), 128, 1024, 0, dtype="uint64"),
                            1, "m64n128k16", "f16", 0, 0)
                    T.ptx_wgmma_commit_group()
                    if kt + STAGES - 1 < K // 64:
                        for c in T.unroll(4):
                            T.ptx_cp_async(
                                T.address_of(smem[(kt + STAGES - 1) % STAGES * 16384 + ((c * 256 + tx) // 64 * 8 + (c * 256 + tx) // 8 % 8) * 64 + (c * 256 + tx) % 8 * 8]),
                                T.address_of(A[bm * 128 + (c * 256 + tx) // 64 * 8 + (c * 256 + tx) % 8, (kt + STAGES - 1) * 64 + (c * 256 + tx) // 8 % 8 * 8]), 16)
                            T.ptx_cp_async(
                                T.address_of(smem[(kt + STAGES - 1) % STAGES * 16384 + 8192 + ((c * 256 + tx) // 64 * 8 + (c * 256 + tx) // 8 % 8) * 64 + (c * 256 + tx) % 8 * 8]),
                                T.address_of(W[bn * 128 + (c * 256 + tx) // 64 * 8 + (c * 256 + tx) % 8, (kt + STAGES - 1) * 64 + (c * 256 + tx) // 8 % 8 * 8]), 16)
                    T.ptx_cp_async_commit_group()
                    T.ptx_wgmma_wait_group(0)
                for j in T.unroll(16):
                    for h in T.unroll(2):
                        for c in T.unroll(2):
                            C[bm * 128 + tx // 128 * 64 + tx % 128 // 32 * 16 + tx % 32 // 4 + 8 * h,
                              bn * 128 + 8 * j + 2 * (tx % 4) + c] = acc[4 * j + 2 * h + c]
"""


# The same GEMM with 128-byte swizzled tiles (16-byte chunk c of row r stored at chunk c ^ (r % 8)
# of the row, one 8-row x 128-byte atom per 1 KB: the descriptor's stride byte offset) and one
# wgmma group kept in flight: loads for k-tile kt + STAGES - 2 go into the slot of kt - 2, whose
# wgmma every thread has waited for before the barrier at the top of iteration kt.
GEMM_SW128 = """
@T.prim_func
def gemm(A: T.Buffer((M, K), "float16"), W: T.Buffer((N, K), "float16"),
         C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "gemm", "target": "cuda", "tir.noalias": True})
    for bn in T.thread_binding(N // 128, thread="blockIdx.x"):
        for bm in T.thread_binding(M // 128, thread="blockIdx.y"):
            smem_data = T.allocate([STAGES * 16384], "float16", "shared.dyn")
            smem = T.decl_buffer((STAGES * 16384,), "float16", data=smem_data, scope="shared.dyn")
            for tx in T.thread_binding(256, thread="threadIdx.x"):
                acc_data = T.allocate([64], "float32", "local")
                acc = T.decl_buffer((64,), "float32", data=acc_data, scope="local")
                for r in T.unroll(64):
                    acc[r] = T.float32(0)
                for s in T.unroll(STAGES - 2):
                    for c in T.unroll(4):
                        T.ptx_cp_async(
                            T.address_of(smem[s * 16384 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                            T.address_of(A[bm * 128 + c * 32 + tx // 8, s * 64 + tx % 8 * 8]), 16)
                        T.ptx_cp_async(
                            T.address_of(smem[s * 16384 + 8192 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                            T.address_of(W[bn * 128 + c * 32 + tx // 8, s * 64 + tx % 8 * 8]), 16)
                    T.ptx_cp_async_commit_group()
                for kt in range(K // 64):
                    T.ptx_cp_async_wait_group(STAGES - 3)
                    T.ptx_fence_proxy_async()
                    T.tvm_storage_sync("shared")
                    T.ptx_wgmma_fence()
                    for ks in T.unroll(4):
                        T.ptx_wgmma_mma_async(
                            T.address_of(acc[0]),
                            T.ptx_wgmma_desc(T.address_of(smem[kt % STAGES * 16384 + tx // 128 * 4096 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                            T.ptx_wgmma_desc(T.address_of(smem[kt % STAGES * 16384 + 8192 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                            1, "m64n128k16", "f16", 0, 0)
                    T.ptx_wgmma_commit_group()
                    if kt + STAGES - 2 < K // 64:
                        for c in T.unroll(4):
                            T.ptx_cp_async(
                                T.address_of(smem[(kt + STAGES - 2) % STAGES * 16384 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                                T.address_of(A[bm * 128 + c * 32 + tx // 8, (kt + STAGES - 2) * 64 + tx % 8 * 8]), 16)
                            T.ptx_cp_async(
                                T.address_of(smem[(kt + STAGES - 2) % STAGES * 16384 + 8192 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                                T.address_of(W[bn * 128 + c * 32 + tx // 8, (kt + STAGES - 2) * 64 + tx % 8 * 8]), 16)
                    T.ptx_cp_async_commit_group()
                    T.ptx_wgmma_wait_group(1)
                T.ptx_wgmma_wait_group(0)
                for j in T.unroll(16):
                    for h in T.unroll(2):
                        for c in T.unroll(2):
                            C[bm * 128 + tx // 128 * 64 + tx % 128 // 32 * 16 + tx % 32 // 4 + 8 * h,
                              bn * 128 + 8 * j + 2 * (tx % 4) + c] = acc[4 * j + 2 * h + c]
"""


# The swizzled GEMM on 128x256 tiles: wgmma m64n256k16 (128 accumulators per thread), 48 KB per
# stage.
GEMM_SW128_N256 = """
@T.prim_func
def gemm(A: T.Buffer((M, K), "float16"), W: T.Buffer((N, K), "float16"),
         C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "gemm", "target": "cuda", "tir.noalias": True})
    for bn in T.thread_binding(N // 256, thread="blockIdx.x"):
        for bm in T.thread_binding(M // 128, thread="blockIdx.y"):
            smem_data = T.allocate([STAGES * 24576], "float16", "shared.dyn")
            smem = T.decl_buffer((STAGES * 24576,), "float16", data=smem_data, scope="shared.dyn")
            for tx in T.thread_binding(256, thread="threadIdx.x"):
                acc_data = T.allocate([128], "float32", "local")
                acc = T.decl_buffer((128,), "float32", data=acc_data, scope="local")
                for r in T.unroll(128):
                    acc[r] = T.float32(0)
                for s in T.unroll(STAGES - 2):
                    for c in T.unroll(4):
                        T.ptx_cp_async(
                            T.address_of(smem[s * 24576 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                            T.address_of(A[bm * 128 + c * 32 + tx // 8, s * 64 + tx % 8 * 8]), 16)
                    for c in T.unroll(8):
                        T.ptx_cp_async(
                            T.address_of(smem[s * 24576 + 8192 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                            T.address_of(W[bn * 256 + c * 32 + tx // 8, s * 64 + tx % 8 * 8]), 16)
                    T.ptx_cp_async_commit_group()
                for kt in range(K // 64):
                    T.ptx_cp_async_wait_group(STAGES - 3)
                    T.ptx_fence_proxy_async()
                    T.tvm_storage_sync("shared")
                    T.ptx_wgmma_fence()
                    for ks in T.unroll(4):
                        T.ptx_wgmma_mma_async(
                            T.address_of(acc[0]),
                            T.ptx_wgmma_desc(T.address_of(smem[kt % STAGES * 24576 + tx // 128 * 4096 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                            T.ptx_wgmma_desc(T.address_of(smem[kt % STAGES * 24576 + 8192 + ks * 16]), 16, 1024, 128, dtype="uint64"),
                            1, "m64n256k16", "f16", 0, 0)
                    T.ptx_wgmma_commit_group()
                    if kt + STAGES - 2 < K // 64:
                        for c in T.unroll(4):
                            T.ptx_cp_async(
                                T.address_of(smem[(kt + STAGES - 2) % STAGES * 24576 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                                T.address_of(A[bm * 128 + c * 32 + tx // 8, (kt + STAGES - 2) * 64 + tx % 8 * 8]), 16)
                        for c in T.unroll(8):
                            T.ptx_cp_async(
                                T.address_of(smem[(kt + STAGES - 2) % STAGES * 24576 + 8192 + (c * 32 + tx // 8) * 64 + T.bitwise_xor(tx % 8, tx // 8 % 8) * 8]),
                                T.address_of(W[bn * 256 + c * 32 + tx // 8, (kt + STAGES - 2) * 64 + tx % 8 * 8]), 16)
                    T.ptx_cp_async_commit_group()
                    T.ptx_wgmma_wait_group(1)
                T.ptx_wgmma_wait_group(0)
                for j in T.unroll(32):
                    for h in T.unroll(2):
                        for c in T.unroll(2):
                            C[bm * 128 + tx // 128 * 64 + tx % 128 // 32 * 16 + tx % 32 // 4 + 8 * h,
                              bn * 256 + 8 * j + 2 * (tx % 4) + c] = acc[4 * j + 2 * h + c]
"""


def gemm_text(m, n, k, stages=3, text=None, dtype="float16"):
    # Operands PTX takes as immediates must be literals in the IR, so the stage arithmetic is
    # done here.
    text = text or GEMM
    if dtype == "bfloat16":
        text = text.replace('"float16"', '"bfloat16"').replace('"f16", 0, 0)', '"bf16", 0, 0)')
    for d in (1, 2, 3):
        text = text.replace(f"STAGES - {d}", str(stages - d))
    return (text.replace("STAGES", str(stages)).replace("(M, K)", f"({m}, {k})")
            .replace("(N, K)", f"({n}, {k})").replace("(M, N)", f"({m}, {n})")
            .replace("N // 128", str(n // 128)).replace("N // 256", str(n // 256)).replace("M // 128", str(m // 128))
            .replace("K // 64", str(k // 64)))


def test_gemm_ptx_pipelines_cp_async_into_wgmma():
    ptx = ptx_of(build(gemm_text(256, 256, 256)))
    for inst in ["cp.async.cg.shared.global", "cp.async.wait_group 1",
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"]:
        assert inst in ptx, inst


def ptx_of(mod):
    return tvm_ffi.get_global_func("tessel.codegen.CompileCUDAToPTX")(mod.get_source("cuda"),
                                                                      "sm_90a")


def build(text, arch="sm_90a"):
    return tessel.build(text, target=f"cuda -arch={arch}")


@pytest.mark.parametrize("text", [WGMMA, EXCHANGE, MISC])
def test_builtins_print_and_parse_back(text):
    f = tessel.parse(text)
    ir.assert_structural_equal(tessel.parse(str(f)), f, map_free_vars=True)


def test_wgmma_compiles_for_sm_90a_and_its_ptx_has_the_instructions():
    mod = build(WGMMA)
    ptx = ptx_of(mod)
    for inst in ["wgmma.fence.sync.aligned", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
                 "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0",
                 "fence.proxy.async.shared::cta"]:
        assert inst in ptx, inst


def test_exchange_ptx_has_cp_async_and_mbarriers():
    ptx = ptx_of(build(EXCHANGE))
    for inst in ["cp.async.cg.shared.global", "cp.async.commit_group", "cp.async.wait_group 0",
                 "mbarrier.init.shared::cta.b64", "mbarrier.arrive.shared::cta.b64",
                 "mbarrier.try_wait.parity.shared::cta.b64", "fence.mbarrier_init.release.cluster"]:
        assert inst in ptx, inst


def test_misc_ptx_has_setmaxnreg_named_barriers_and_elect():
    ptx = ptx_of(build(MISC))
    for inst in ["setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232",
                 "bar.arrive", "bar.sync", "elect.sync"]:
        assert inst in ptx, inst


@pytest.mark.parametrize("text,what", [(WGMMA, "ptx_wgmma_"), (MISC, "ptx_setmaxnreg_")])
def test_sm_90a_builtins_are_refused_for_sm_90(text, what):
    with pytest.raises(ValueError, match=r"calls " + what + r".*only sm_90a has; the target is "
                                         r"sm_90 \(use -arch=sm_90a\)"):
        build(text, "sm_90")


def test_exchange_builds_for_sm_90_and_is_refused_for_sm_80():
    assert "cp.async.cg.shared.global" in build(EXCHANGE, "sm_90").get_source("cuda")
    with pytest.raises(ValueError, match=r"kernel exchange_kernel calls ptx_mbarrier_\w+, which "
                                         r"needs sm_90 or newer; the target is sm_80"):
        build(EXCHANGE, "sm_80")


@pytest.mark.parametrize("old,new,message", [
    ('"m64n64k16"', '"m64n60k16"', r'shape "m64n60k16" \(expected m64n<N>k16, N a multiple of 8'),
    ('"f16", 0, 0)', '"f32", 0, 0)', r'input dtype "f32" \(expected f16 or bf16\)'),
    ('"f16", 0, 0)', '"f16", threadIdx_x, 0)', r"trans_a must be a literal constant"),
    ("T.ptx_wgmma_wait_group(0)", "T.ptx_wgmma_wait_group(threadIdx_x)",
     r"the group count must be a literal constant"),
    ("128, 256, 0, dtype", "128, 256, 16, dtype", r"the swizzle 16 \(0, 32, 64 or 128 bytes\)"),
])
def test_bad_immediates_are_refused_with_the_line(old, new, message):
    # The verifier refuses them before lowering, at the call's line and column.
    assert old in WGMMA
    with pytest.raises(ValueError, match=r"VerifyWellFormed: <string>:\d+:\d+: \[hopper_builtin\] "
                                         r"in function 'wgmma_tile': ptx_wgmma_\w+: " + message):
        build(WGMMA.replace(old, new, 1))


@pytest.mark.parametrize("old,new,message", [
    ("T.ptx_setmaxnreg_dec(40)", "T.ptx_setmaxnreg_dec(20)", r"ptx_setmaxnreg_dec: the register count 20 \(a multiple of 8 in \[24, 256\]\)"),
    ("T.ptx_named_barrier_arrive(1, 256)", "T.ptx_named_barrier_arrive(0, 256)",
     r"barrier id 0 \(1..15; 0 is the one __syncthreads uses\)"),
    ("T.ptx_named_barrier_sync(1, 256)", "T.ptx_named_barrier_sync(1, 100)",
     r"thread count 100 \(a multiple of 32\)"),
])
def test_bad_operands_of_misc_are_refused(old, new, message):
    with pytest.raises(ValueError, match=message):
        build(MISC.replace(old, new, 1))


CVT_PACK = """
@T.prim_func
def cvt_pack(A: T.Buffer((512,), "float32"), P: T.Buffer((256,), "uint32")):
    T.func_attr({"global_symbol": "cvt_pack", "target": "cuda", "tir.noalias": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 256):
        P[threadIdx_x] = T.ptx_cvt_pack("f16", A[threadIdx_x * 2], A[threadIdx_x * 2 + 1], dtype="uint32")
"""


def test_cvt_pack_round_trips_and_is_one_conversion_for_two():
    text = tessel.as_text(tessel.parse(CVT_PACK))
    assert 'T.ptx_cvt_pack("f16", A[threadIdx_x * 2], A[threadIdx_x * 2 + 1], dtype="uint32")' in text
    assert tessel.as_text(tessel.parse(text)) == text
    for t in ("f16", "bf16"):
        ptx = ptx_of(build(CVT_PACK.replace('"f16"', f'"{t}"'), "sm_80"))
        assert f"cvt.rn.{t}x2.f32" in ptx
    with pytest.raises(ValueError, match=r"ptx_cvt_pack: type 'f32' \(f16 or bf16\)"):
        build(CVT_PACK.replace('"f16"', '"f32"'))
    with pytest.raises(ValueError, match=r"ptx_cvt_pack: operand 1 must be float32, not int32"):
        build(CVT_PACK.replace("A[threadIdx_x * 2],", "threadIdx_x,"))
    with pytest.raises(ValueError, match=r"calls ptx_cvt_pack, which needs sm_80 or newer"):
        build(CVT_PACK, "sm_75")


def test_cp_async_size_is_checked():
    with pytest.raises(ValueError, match=r"ptx_cp_async: the byte count 12 \(4, 8 or 16\)"):
        build(EXCHANGE.replace("* 4]), 16)", "* 4]), 12)"))


# The fourth operand of ptx_cp_async: where it is false, src-size 0 (nothing read, zeros written).
ZFILL = EXCHANGE.replace("* 4]), 16)", "* 4]), 16, threadIdx_x < 64)")


def test_cp_async_zero_fill_round_trips_and_passes_src_size():
    f = tessel.parse(ZFILL)
    ir.assert_structural_equal(tessel.parse(str(f)), f, map_free_vars=True)
    mod = build(ZFILL)
    assert "tsl_cp_async_zfill<16>(" in mod.get_source("cuda")
    ptx = ptx_of(mod)
    assert re.search(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16, %r\d+;", ptx), ptx


@pytest.mark.parametrize("old, new, message", [
    ("16, threadIdx_x < 64)", "16, threadIdx_x < 64, 1)",
     r"ptx_cp_async: takes \(dst, src, bytes\) or \(dst, src, bytes, in_bounds\), not 5 operands"),
    ("16, threadIdx_x < 64)", "16, threadIdx_x)",
     r"ptx_cp_async: in_bounds must be a boolean, not int32"),
])
def test_cp_async_zero_fill_operands_are_checked(old, new, message):
    with pytest.raises(ValueError, match=message):
        build(ZFILL.replace(old, new))


# ---- on the GPU ----

torch = None
try:
    import torch as _torch  # noqa: F401

    torch = _torch if _torch.cuda.is_available() else None
except ImportError:
    pass

needs_h100 = pytest.mark.skipif(
    torch is None or torch.cuda.get_device_capability() < (9, 0),
    reason="needs PyTorch and an sm_90 GPU (the device machine runs these)")


@needs_h100
def test_exchange_on_the_gpu():
    a = torch.randn(512, device="cuda")
    b = torch.zeros(512, device="cuda")
    build(EXCHANGE)["exchange"](a, b)
    torch.testing.assert_close(b, torch.roll(a, -4), rtol=0, atol=0)


@needs_h100
def test_cp_async_zero_fill_on_the_gpu():
    a = torch.randn(512, device="cuda")
    b = torch.full((512,), float("nan"), device="cuda")
    build(ZFILL)["exchange"](a, b)
    kept = torch.where(torch.arange(512, device="cuda") < 256, a, torch.zeros_like(a))
    torch.testing.assert_close(b, torch.roll(kept, -4), rtol=0, atol=0)


@needs_h100
def test_wgmma_tile_on_the_gpu():
    a = torch.randn(64, 16, device="cuda").half()
    bt = torch.randn(64, 16, device="cuda").half()
    c = torch.full((64, 64), float("nan"), device="cuda")
    build(WGMMA)["wgmma_tile"](a, bt, c)
    torch.testing.assert_close(c, a.float() @ bt.float().T, rtol=1e-3, atol=1e-3)


def test_swizzled_gemm_ptx_keeps_one_wgmma_group_in_flight():
    ptx = ptx_of(build(gemm_text(256, 256, 256, 4, GEMM_SW128)))
    for inst in ["wgmma.wait_group.sync.aligned 1", "wgmma.wait_group.sync.aligned 0",
                 "cp.async.wait_group 1"]:
        assert inst in ptx, inst


@needs_h100
@pytest.mark.parametrize("m,n,k", [(128, 128, 64), (256, 384, 512), (1024, 1024, 1024)])
@pytest.mark.parametrize("variant", ["plain", "sw128", "sw128_n256"])
def test_gemm_on_the_gpu(m, n, k, variant):
    a = torch.randn(m, k, device="cuda").half()
    w = torch.randn(n, k, device="cuda").half()
    c = torch.full((m, n), float("nan"), device="cuda")
    if variant == "sw128_n256" and n % 256:
        n = 2 * n
        w = torch.randn(n, k, device="cuda").half()
        c = torch.full((m, n), float("nan"), device="cuda")
    text = {"plain": gemm_text(m, n, k), "sw128": gemm_text(m, n, k, 4, GEMM_SW128),
            "sw128_n256": gemm_text(m, n, k, 4, GEMM_SW128_N256)}[variant]
    build(text)["gemm"](a, w, c)
    torch.testing.assert_close(c, a.float() @ w.float().T, rtol=2e-3, atol=2e-2)


def test_a_value_where_a_pointer_belongs_is_refused():
    text = EXCHANGE.replace("T.ptx_mbarrier_arrive(T.address_of(bar[0]))",
                            "T.ptx_mbarrier_arrive(bar[0])")
    with pytest.raises(ValueError, match=r"\[hopper_builtin\] in function 'exchange': "
                                         r"ptx_mbarrier_arrive: the barrier must be a pointer "
                                         r"\(T.address_of\(buf\[i\]\) or a buffer's data\), not uint64"):
        build(text)


def test_wide_tile_gemm_ptx_uses_n256():
    ptx = ptx_of(build(gemm_text(256, 512, 256, 4, GEMM_SW128_N256)))
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16" in ptx


def test_bf16_gemm_ptx_uses_bf16_wgmma():
    ptx = ptx_of(build(gemm_text(256, 512, 256, 4, GEMM_SW128_N256, "bfloat16")))
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" in ptx


@needs_h100
@pytest.mark.parametrize("m,n,k", [(256, 512, 256), (1024, 1024, 1024)])
def test_bf16_gemm_on_the_gpu(m, n, k):
    a = torch.randn(m, k, device="cuda").bfloat16()
    w = torch.randn(n, k, device="cuda").bfloat16()
    c = torch.full((m, n), float("nan"), device="cuda")
    build(gemm_text(m, n, k, 4, GEMM_SW128_N256, "bfloat16"))["gemm"](a, w, c)
    torch.testing.assert_close(c, a.float() @ w.float().T, rtol=1e-2, atol=5e-2)


LDST_MATRIX = """
@T.prim_func
def ldst(A: T.Buffer((256,), "float16"), B: T.Buffer((256,), "float16")):
    T.func_attr({"global_symbol": "ldst", "target": "cuda"})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 32):
        s_data = T.allocate([256], "float16", "shared")
        s = T.decl_buffer((256,), "float16", data=s_data, scope="shared")
        t_data = T.allocate([256], "float16", "shared")
        t = T.decl_buffer((256,), "float16", data=t_data, scope="shared")
        r_data = T.allocate([8], "float16", "local")
        r = T.decl_buffer((8,), "float16", data=r_data, scope="local")
        for i in range(8):
            s[threadIdx_x * 8 + i] = A[threadIdx_x * 8 + i]
        T.tvm_storage_sync("shared")
        T.ptx_ldmatrix("float16", T.bool(TRANS), 4, ".b16", r.data, 0, s.data, threadIdx_x * 8)
        T.ptx_stmatrix(TRANS, 4, t.data, threadIdx_x * 8, r.data, 0)
        T.tvm_storage_sync("shared")
        for i in range(8):
            B[threadIdx_x * 8 + i] = t[threadIdx_x * 8 + i]
"""


@pytest.mark.parametrize("trans", [0, 1])
def test_ldmatrix_and_stmatrix_ptx(trans):
    text = LDST_MATRIX.replace("T.bool(TRANS)", "T.bool(%s)" % bool(trans)).replace("TRANS", str(trans))
    ptx = ptx_of(build(text))
    suffix = ".trans" if trans else ""
    assert f"ldmatrix.sync.aligned.m8n8.x4{suffix}.shared.b16" in ptx
    assert f"stmatrix.sync.aligned.m8n8.x4{suffix}.shared.b16" in ptx


def test_stmatrix_is_refused_below_sm_90():
    text = LDST_MATRIX.replace("T.bool(TRANS)", "T.bool(False)").replace("TRANS", "0")
    with pytest.raises(ValueError, match=r"calls ptx_stmatrix, which needs sm_90 or newer; the "
                                         r"target is sm_80"):
        build(text, "sm_80")


@needs_h100
@pytest.mark.parametrize("trans", [0, 1])
def test_ldmatrix_then_stmatrix_is_the_identity_on_the_gpu(trans):
    # stmatrix stores the fragment ldmatrix loaded, with the same addresses and transposition.
    text = LDST_MATRIX.replace("T.bool(TRANS)", "T.bool(%s)" % bool(trans)).replace("TRANS", str(trans))
    a = torch.randn(256, device="cuda").half()
    b = torch.zeros(256, device="cuda").half()
    build(text)["ldst"](a, b)
    torch.testing.assert_close(b, a, rtol=0, atol=0)


@pytest.mark.parametrize("text,kernel,builtin", [(WGMMA, "wgmma_tile_kernel", "ptx_fence_proxy_async"),
                                                 (EXCHANGE, "exchange_kernel", "ptx_mbarrier_init")])
def test_metal_refuses_the_ptx_builtins_by_name(text, kernel, builtin):
    with pytest.raises(ValueError, match=kernel + r": target metal: " + builtin +
                       r" is a CUDA PTX builtin; Metal has no equivalent"):
        tessel.build(text, target="metal")


def logical_layout(text):
    """`text` with the hand-written swizzle replaced by the tessel.swizzle_bytes annotation: the
    program indexes its tiles logically and SwizzleLayout stores them swizzled."""
    return (text.replace("T.bitwise_xor(tx % 8, tx // 8 % 8) * 8", "tx % 8 * 8")
            .replace('"float16", "shared.dyn")',
                     '"float16", "shared.dyn", annotations={"tessel.swizzle_bytes": 128})'))


def copy_addresses(text):
    """The shared-memory element each cp.async of the lowered kernel writes, as Python source in
    the kernel's variables, in program order (read from the printed kernel)."""
    parsed = tessel.parse(text)
    mod = tvm_ffi.get_global_func("tessel.codegen.Lower")(ir.IRModule({"main": parsed}),
                                                          "cuda -arch=sm_90a")
    printed = str(mod)
    out, at = [], 0
    while (at := printed.find("T.ptx_cp_async(T.address_of(", at)) >= 0:
        start = printed.index("[", at) + 1
        depth, end = 1, start
        while depth:
            depth += {"[": 1, "]": -1}.get(printed[end], 0)
            end += 1
        out.append(printed[start:end - 1])
        at = end
    return out


def test_the_swizzle_annotation_gives_the_addresses_of_the_hand_written_gemm():
    # The hand-written form is the one that ran on the H200; the annotation must put every copy
    # at the very same shared-memory element, for every thread, stage and k-tile.
    text = gemm_text(256, 512, 256, 4, GEMM_SW128_N256)
    hand, logical = copy_addresses(text), copy_addresses(logical_layout(text))
    assert len(hand) == len(logical) == 36  # two prologue stages and the loop body, 12 copies each
    for h, g in zip(hand, logical):
        for tx in range(256):
            for kt in range(4):
                env = {"threadIdx_x": tx, "kt": kt}
                assert eval(h, {}, env) == eval(g, {}, env), (h, g, tx, kt)  # noqa: S307
