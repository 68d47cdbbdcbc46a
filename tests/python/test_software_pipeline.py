"""SoftwarePipeline and VerifyPipeline (include/tessel/transform/software_pipeline.h,
verify_pipeline.h): a loop annotated {"tessel.pipeline_stages": S} runs its copies S - 1 tiles
ahead. On the CPU: a tiled matmul through the C backend (plain copies, the same stage indexing) and
through the Metal execution harness (threads, barriers, three thread orders) against NumPy; the
CUDA source and NVRTC's PTX for sm_80 and sm_90 carry cp.async of the right sizes and
wait_group(S - 2); the checker accepts what the pass emits and rejects broken pipelines."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm_ffi

import metal_emu
import tessel
from conftest import have_cuda_compiler, without_aligned_variants

get = tvm_ffi.get_global_func

# A CPU matmul over 16x16 output tiles: A and B staged through "shared" tiles of BK columns/rows,
# the last tile of K zero-filled (T.if_then_else for A, an if/else for B). M, N, K symbolic; M
# and N multiples of 16.
CPU_MM = """
@T.prim_func
def mm(A: T.Buffer((M, K), "DT"), B: T.Buffer((K, N), "DT"), C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "mm", "tir.noalias": True})
    for i0 in range(M // 16):
        for j0 in range(N // 16):
            acc_data = T.allocate([256], "float32", "local")
            acc = T.decl_buffer((256,), "float32", data=acc_data, scope="local")
            OUTER_ALLOC
            for x in range(256):
                acc[x] = T.float32(0)
            for ko in T.serial((K + BK - 1) // BK, annotations={"tessel.pipeline_stages": STAGES}):
                INNER_ALLOC
                for r in range(16):
                    for c in T.vectorized(BK):
                        As[r * BK + c] = T.if_then_else(ko * BK + c < K, A[i0 * 16 + r, ko * BK + c], T.DT(0))
                for r in range(BK):
                    if ko * BK + r < K:
                        for c in T.vectorized(16):
                            Bs[r * 16 + c] = B[ko * BK + r, j0 * 16 + c]
                    else:
                        for c in T.vectorized(16):
                            Bs[r * 16 + c] = T.DT(0)
                for r, c, kk in T.grid(16, 16, BK):
                    acc[r * 16 + c] = acc[r * 16 + c] + T.Cast("float32", As[r * BK + kk]) * T.Cast("float32", Bs[kk * 16 + c])
            for r, c in T.grid(16, 16):
                C[i0 * 16 + r, j0 * 16 + c] = acc[r * 16 + c]
"""

TILES = """As_data = T.allocate([16 * BK], "DT", "shared")
IND    As = T.decl_buffer((16 * BK,), "DT", data=As_data, scope="shared")
IND    Bs_data = T.allocate([BK * 16], "DT", "shared")
IND    Bs = T.decl_buffer((BK * 16,), "DT", data=Bs_data, scope="shared")"""


def cpu_mm(dtype="float32", stages=2, bk=8, inner=False):
    """The tiles are allocated around the pipelined loop, or (inner) inside its body."""
    outer_alloc = "" if inner else TILES.replace("IND", " " * 8)
    inner_alloc = TILES.replace("IND", " " * 12) if inner else ""
    text = CPU_MM.replace("OUTER_ALLOC", outer_alloc).replace("INNER_ALLOC", inner_alloc)
    return text.replace("DT", dtype).replace("STAGES", str(stages)).replace("BK", str(bk))


# The GPU matmul: 64x64 tiles, 256 threads of 4x4 outputs, BK-wide slices of K; each thread copies
# vectors of 16 bytes, guarded per vector when a row is a whole number of vectors (else per lane).
# The tiles are dynamic shared memory: at S = 4, 64 KiB pass the 48 KiB a static array may have.
GPU_MM = """
@T.prim_func
def mm(A: T.Buffer((M, K), "DT"), B: T.Buffer((K, N), "DT"), C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "mm", "tir.noalias": True})
    for by in T.thread_binding((M + 63) // 64, thread="blockIdx.y"):
        for bx in T.thread_binding((N + 63) // 64, thread="blockIdx.x"):
            As_data = T.allocate([64 * BK], "DT", "shared.dyn")
            As = T.decl_buffer((64 * BK,), "DT", data=As_data, scope="shared.dyn")
            Bs_data = T.allocate([BK * 64], "DT", "shared.dyn")
            Bs = T.decl_buffer((BK * 64,), "DT", data=Bs_data, scope="shared.dyn")
            for tx in T.thread_binding(256, thread="threadIdx.x"):
                acc_data = T.allocate([16], "float32", "local")
                acc = T.decl_buffer((16,), "float32", data=acc_data, scope="local")
                for x in T.unroll(16):
                    acc[x] = T.float32(0)
                for ko in T.serial((K + BK - 1) // BK, annotations={"tessel.pipeline_stages": STAGES}):
                    for it in range(64 * BK // VA // 256):
                        for c in T.vectorized(VA):
                            As[(it * 256 + tx) // (BK // VA) * BK + (it * 256 + tx) % (BK // VA) * VA + c] = T.if_then_else(
                                by * 64 + (it * 256 + tx) // (BK // VA) < M and ko * BK + (it * 256 + tx) % (BK // VA) * VA + KLANE < K,
                                A[by * 64 + (it * 256 + tx) // (BK // VA), ko * BK + (it * 256 + tx) % (BK // VA) * VA + c], T.DT(0))
                    for it in range(64 * BK // VA // 256):
                        for c in T.vectorized(VA):
                            Bs[(it * 256 + tx) // (64 // VA) * 64 + (it * 256 + tx) % (64 // VA) * VA + c] = T.if_then_else(
                                ko * BK + (it * 256 + tx) // (64 // VA) < K and bx * 64 + (it * 256 + tx) % (64 // VA) * VA + NLANE < N,
                                B[ko * BK + (it * 256 + tx) // (64 // VA), bx * 64 + (it * 256 + tx) % (64 // VA) * VA + c], T.DT(0))
                    for kk in range(BK):
                        for i in T.unroll(4):
                            for j in T.unroll(4):
                                acc[i * 4 + j] = acc[i * 4 + j] + T.Cast("float32", As[(tx // 16 * 4 + i) * BK + kk]) * T.Cast("float32", Bs[kk * 64 + tx % 16 * 4 + j])
                for i in T.unroll(4):
                    for j in T.unroll(4):
                        if by * 64 + tx // 16 * 4 + i < M and bx * 64 + tx % 16 * 4 + j < N:
                            C[by * 64 + tx // 16 * 4 + i, bx * 64 + tx % 16 * 4 + j] = acc[i * 4 + j]
"""


def gpu_mm(m, n, k, dtype="float32", stages=3, bk=32, template=GPU_MM):
    """GPU_MM (or a variant of it) for constant shapes (so that the analyzer can prove the 16-byte
    alignment of every row); stages=1 is the unpipelined loop."""
    va = 16 // np.dtype(dtype).itemsize
    text = template.replace("KLANE", "0" if k % va == 0 else "c")
    text = text.replace("NLANE", "0" if n % va == 0 else "c")
    text = text.replace("DT", dtype).replace("STAGES", str(stages)).replace("BK", str(bk))
    text = text.replace("VA", str(va))
    return text.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))


def as_module(text):
    mod = tessel.parse(text)
    return mod if hasattr(mod, "functions") else tessel.ir.IRModule({"main": mod})


def lower(text, target="c"):
    return get("tessel.codegen.Lower")(as_module(text), target)


def lower_through_pipelining(text, target):
    """The lowering pipeline of `target` up to and including its SoftwarePipeline pass."""
    names = [str(n) for n in get("tessel.codegen.LowerPipeline")(target)]
    last = next(i for i, n in enumerate(names) if n.startswith("SoftwarePipeline"))
    passes = [get("tessel.transform.GetPass")(n) for n in names[: last + 1]]
    seq = get("tessel.transform.Sequential")(passes, "upto")
    return get("tessel.transform.RunPass")(seq, as_module(text))


def verify(mod):
    return [str(p) for p in get("tessel.transform.VerifyPipeline")(mod)]


def matmul_c(text, m, n, k, dtype):
    rng = np.random.default_rng(m * 131 + n * 7 + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = np.full((m, n), np.nan, "float32")
    tessel.build(text)["mm"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
    want = a.astype("float32") @ b.astype("float32")
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3 if dtype == "float32" else 1e-2)


# ---- the C backend: the same stage indexing, plain copies ----

# (M, N, K): ragged K (37 = 4 tiles of 8 + 5), K a multiple of the tile, K < BK * (S - 1) (fewer
# tiles than the prologue loads), K = 0 (no tile at all).
SHAPES = [(32, 48, 37), (16, 32, 64), (16, 16, 5), (16, 16, 12), (16, 16, 0)]


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("inner", [False, True], ids=["tiles_outside", "tiles_inside"])
def test_cpu_matmul_matches_numpy(stages, dtype, inner):
    text = cpu_mm(dtype, stages, 8, inner)
    for m, n, k in SHAPES:
        matmul_c(text, m, n, k, dtype)


def test_cpu_lowered_form_has_prologue_stages_and_guard():
    low = str(lower(cpu_mm("float32", 3, 8)))
    # S stages of 128 elements, the allocation annotated with its stride.
    assert 'T.allocate([384], "float32", "shared", annotations={"tessel.pipeline_stage_elems": 128})' in low
    # The loop reads stage ko % 3 and fills stage (ko + 2) % 3 while the tile exists.
    assert 'for ko in T.serial((K + 7) // 8, annotations={"tessel.pipelined": 3}):' in low
    assert "if ko + 2 < (K + 7) // 8:" in low
    assert "As[(ko + 2) % 3 * 128 + " in low and "As[ko % 3 * 128 + " in low
    # Prologue: tiles 0 and 1, each only when it exists; no barrier, wait or commit on the CPU.
    assert "if K + 7 >= 8:" in low and "if K + 7 >= 16:" in low
    for gpu_only in ("tvm_storage_sync", "cp_async"):
        assert gpu_only not in low
    assert verify(lower_through_pipelining(cpu_mm("float32", 3, 8), "c")) == []


def test_one_stage_leaves_the_loop_alone():
    low = str(lower(cpu_mm("float32", 1, 8)))
    assert "pipelined" not in low and "pipeline_stage_elems" not in low
    assert "for ko in range((K + 7) // 8):" in low
    matmul_c(cpu_mm("float32", 1, 8), 32, 16, 21, "float32")


# ---- Metal: threads and barriers through the execution harness ----


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
@pytest.mark.parametrize("m,n,k,dtype,stages", [
    (64, 64, 96, "float32", 3), (100, 70, 77, "float32", 2), (72, 136, 200, "float16", 4),
    (64, 64, 16, "float32", 4),  # one tile, three prologue slots
])
def test_metal_matmul_in_every_thread_order(m, n, k, dtype, stages):
    bk = 16 if dtype == "float32" else 32  # Metal allows 32 KiB of threadgroup memory
    text = gpu_mm(m, n, k, dtype, stages, bk)
    mod = tessel.build(text, target="metal")
    rng = np.random.default_rng(k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    want = a.astype("float32") @ b.astype("float32")
    for order, seed in metal_emu.ORDERS:
        c = np.full((m, n), np.nan, "float32")
        with metal_emu.installed(order, seed):
            mod["mm"](*[metal_emu.as_metal(x) for x in (a, b, c)])
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-2, err_msg=order)
    assert verify(lower_through_pipelining(text, "metal")) == []


# ---- CUDA: cp.async in the source and in NVRTC's PTX ----

needs_nvrtc = pytest.mark.skipif(not have_cuda_compiler(), reason="no NVRTC or nvcc")


def cuda_and_ptx(text, arch):
    """The general kernels' source (without the aligned variants) and the PTX of them all."""
    mod = tessel.build(text, target=f"cuda -arch={arch}")
    src = mod.get_source("cuda")
    return without_aligned_variants(src), get("tessel.codegen.CompileCUDAToPTX")(src, arch)


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_cuda_copies_are_16_byte_cp_async_waited_with_s_minus_2(arch, stages):
    src, ptx = cuda_and_ptx(gpu_mm(256, 256, 256, "float32", stages), arch)
    sizes = set(re.findall(r"cp\.async\.(?:ca|cg)\.shared\.global \[%r\d+\], \[%rd\d+\], (\d+)", ptx))
    assert sizes == {"16"}, sizes
    assert f"cp.async.wait_group {stages - 2};" in ptx
    assert "cp.async.commit_group;" in ptx
    # One barrier a k-tile and one after the loop: InjectSharedBarriers adds none of its own.
    assert src.count("__syncthreads()") == 2, src
    assert src.count(f"tsl_cp_async_wait_group<{stages - 2}>()") == 1


@needs_nvrtc
def test_cuda_ragged_half_copies_zero_fill_the_edge():
    # K = 1000: a whole number of 8-half vectors, not of 32-wide tiles. Each vector is one 16-byte
    # cp.async when in range, else zero-filled by a plain store before the barrier; the copy tests
    # the base of A at run time (a caller's buffer is held to element alignment only) and falls
    # back to a plain vector copy.
    src, ptx = cuda_and_ptx(gpu_mm(200, 136, 1000, "float16", 3), "sm_80")
    assert set(re.findall(r"cp\.async\.\w+\.shared\.global \[%r\d+\], \[%rd\d+\], (\d+)", ptx)) == {"16"}
    assert "cp.async.wait_group 1;" in ptx
    assert re.search(r"if \(\(tsl_add_i32\(tsl_mul_i32\(blockIdx_y, 64\).*< 200\)\) \{\n"
                     r"\s+if \(\(tsl_floormod_u64\(tsl_bitcast<uint64_t>\(A\), UINT64_C\(16\)\) == "
                     r"UINT64_C\(0\)\)\) \{\n\s+tsl_cp_async<16>", src)
    assert re.search(r"\} else \{\n\s+const uint4 tsl_v\d+ = tsl_wide_load<uint4>\(A \+ ", src)


# B's guarded copy in the form the tile lowering writes for a ragged edge: `if c: copy else: zeros
# into the same elements` (ZEROS = As puts the zeros elsewhere: then it is not that form).
B_GUARD = """                        for c in T.vectorized(VA):
                            Bs[(it * 256 + tx) // (64 // VA) * 64 + (it * 256 + tx) % (64 // VA) * VA + c] = T.if_then_else(
                                ko * BK + (it * 256 + tx) // (64 // VA) < K and bx * 64 + (it * 256 + tx) % (64 // VA) * VA + NLANE < N,
                                B[ko * BK + (it * 256 + tx) // (64 // VA), bx * 64 + (it * 256 + tx) % (64 // VA) * VA + c], T.DT(0))
"""
B_IF_ELSE = """                        if ko * BK + (it * 256 + tx) // (64 // VA) < K and bx * 64 + (it * 256 + tx) % (64 // VA) * VA < N:
                            for c in T.vectorized(VA):
                                Bs[(it * 256 + tx) // (64 // VA) * 64 + (it * 256 + tx) % (64 // VA) * VA + c] = B[ko * BK + (it * 256 + tx) // (64 // VA), bx * 64 + (it * 256 + tx) % (64 // VA) * VA + c]
                        else:
                            for c in T.vectorized(VA):
                                ZEROS[(it * 256 + tx) // (64 // VA) * 64 + (it * 256 + tx) % (64 // VA) * VA + c] = T.DT(0)
"""


def gpu_mm_if_else(m, n, k, dtype, zeros="Bs"):
    assert GPU_MM.count(B_GUARD) == 1
    return gpu_mm(m, n, k, dtype, template=GPU_MM.replace(B_GUARD, B_IF_ELSE.replace("ZEROS", zeros)))


@needs_nvrtc
def test_cuda_if_else_zero_guards_become_zero_filling_cp_async():
    # K = 1000, N = 136: B's vectors are whole, in or out. Each becomes one cp.async whose
    # src-size is 0 where the guard fails (the zeros land with the group): no branch.
    text = gpu_mm_if_else(200, 136, 1000, "float16")
    lowered = str(lower_through_pipelining(text, "cuda -arch=sm_80"))
    assert len(re.findall(r"T\.ptx_cp_async\(T\.address_of\(Bs\[.*\]\), T\.address_of\(B_1\[.*\]\), "
                          r"16, .* \* 32 \+ threadIdx_x // 8 < 1000 and .* < 136\)", lowered)) == 3
    assert verify(lower(text, "cuda -arch=sm_80")) == []
    src, ptx = cuda_and_ptx(text, "sm_80")
    assert "tsl_cp_async_zfill<16>(" in src
    assert re.search(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16, %r\d+;", ptx)
    # Zeros into other elements than the copy's: not a zero fill of it.
    lowered = str(lower_through_pipelining(gpu_mm_if_else(200, 136, 1000, "float16", "As"),
                                           "cuda -arch=sm_80"))
    assert not re.search(r"T\.ptx_cp_async\([^\n]*, 16, ", lowered), lowered


@needs_nvrtc
def test_cuda_unaligned_rows_use_4_byte_copies():
    # K = 77 floats a row: no 16-byte vector is provably aligned, so each lane is a 4-byte
    # cp.async under its own guard.
    src, ptx = cuda_and_ptx(gpu_mm(100, 70, 77, "float32", 2), "sm_80")
    assert "cp.async.ca.shared.global" in ptx and "cp.async.wait_group 0;" in ptx
    assert "tsl_cp_async<4>" in src and "tsl_cp_async<16>" not in src


@needs_nvrtc
def test_cuda_before_sm_80_pipelines_with_plain_copies():
    src = without_aligned_variants(tessel.build(gpu_mm(256, 256, 256, "float32", 3),
                                                target="cuda -arch=sm_75").get_source("cuda"))
    assert "cp_async" not in src and src.count("__syncthreads()") == 2
    assert "tsl_floormod_i32(tsl_add_i32(ko, 2), 3)" in src


def test_lowering_pipelines_name_the_pass():
    cuda = [str(n) for n in get("tessel.codegen.LowerPipeline")("cuda -arch=sm_90")]
    assert cuda[cuda.index("InjectSharedBarriers") + 1] == "SoftwarePipelineAsync"
    old = [str(n) for n in get("tessel.codegen.LowerPipeline")("cuda -arch=sm_75")]
    assert old[old.index("InjectSharedBarriers") + 1] == "SoftwarePipeline"
    c = [str(n) for n in get("tessel.codegen.LowerPipeline")("c")]
    assert c[c.index("VectorizeLoop") - 1] == "SoftwarePipeline"


# ---- the checker ----


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("shape", [(256, 256, 256), (200, 136, 1000), (100, 70, 77)])
def test_checker_accepts_the_pass_output(stages, shape):
    text = gpu_mm(*shape, "float16" if shape[2] == 1000 else "float32", stages)
    assert verify(lower_through_pipelining(text, "cuda -arch=sm_80")) == []
    # and the fully lowered kernel (vectors, unrolled loops, split into host and device)
    assert verify(lower(text, "cuda -arch=sm_80")) == []


def test_checker_covers_symbolic_trip_counts():
    for stages in (2, 3, 4):
        mod = lower_through_pipelining(cpu_mm("float32", stages, 8), "c")
        assert verify(mod) == []


def pipelined_text(stages=3):
    return str(lower_through_pipelining(gpu_mm(256, 256, 256, "float32", stages), "cuda -arch=sm_80"))


# Each mutation of the pass's output, and what the checker says.
BROKEN = [
    ("T.ptx_cp_async_wait_group(1)", "T.ptx_cp_async_wait_group(2)",
     r"iteration ko = 0 \(of 8\) reads stage 0 of As before its copy landed: the cp.async in the "
     r"prologue \(trip count 8\) is in group 0, and the waits so far retire only groups < 0"),
    ('T.ptx_cp_async_wait_group(1)\n                        T.tvm_storage_sync("shared")',
     "T.ptx_cp_async_wait_group(1)",
     r"reads stage 0 of As with no block barrier after the cp.async in the prologue .* was waited "
     r"for"),
    ('T.ptx_cp_async_wait_group(1)\n                        T.tvm_storage_sync("shared")',
     "T.ptx_cp_async_wait_group(1)",
     r"iteration ko = 1 \(of 8\) overwrites stage 0 of As that iteration ko = 0 \(of 8\) read with "
     r"no block barrier in between"),
    # The producer fills the stage the consumer reads in the same iteration.
    ("As[(ko + 2) % 3 * 2048", "As[ko % 3 * 2048",
     r"iteration ko = 0 \(of 8\) reads stage 0 of As before its copy landed: the cp.async in "
     r"iteration ko = 0 \(of 8\) is in group 2"),
    # A commit dropped from the loop: the copies of iteration 0 stay in an open group.
    ("T.ptx_cp_async_commit_group()\n                        for kk", "for kk",
     r"the cp.async in iteration ko = 0 \(of 8\) is not committed yet"),
]


@pytest.mark.parametrize("old,new,message", BROKEN)
def test_checker_rejects_a_broken_pipeline(old, new, message):
    text = pipelined_text()
    assert old in text, (old, text)
    problems = verify(tessel.parse(text.replace(old, new, 1)))
    assert problems, "the checker accepted a broken pipeline"
    assert any(re.search(message, p) for p in problems), "\n".join(problems)


def test_the_verify_pass_raises_with_the_first_violation():
    bad = tessel.parse(pipelined_text().replace("T.ptx_cp_async_wait_group(1)", "T.ptx_cp_async_wait_group(2)"))
    with pytest.raises(ValueError, match=r"VerifyPipeline: function 'mm', pipelined loop 'ko': "):
        get("tessel.transform.RunPass")(get("tessel.transform.GetPass")("VerifyPipeline"), bad)


# A hand-written two-stage ring: stage s of S_s is elements [64 s, 64 s + 64).
HAND = """
@T.prim_func
def ring(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "ring", "tir.noalias": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 16):
        s_data = T.allocate([128], "float32", "shared", annotations={"tessel.pipeline_stage_elems": 64})
        s = T.decl_buffer((128,), "float32", data=s_data, scope="shared")
        T.ptx_cp_async(T.address_of(s[threadIdx_x * 4]), T.address_of(A[threadIdx_x * 4]), 16)
        T.ptx_cp_async_commit_group()
        for k in T.serial(16, annotations={"tessel.pipelined": 2}):
            T.ptx_cp_async_wait_group(WAIT)
            T.tvm_storage_sync("shared")
            if k + 1 < 16:
                T.ptx_cp_async(T.address_of(s[(k + 1) % 2 * 64 + threadIdx_x * 4]), T.address_of(A[k * 64 + threadIdx_x * 4 + 64]), 16)
            T.ptx_cp_async_commit_group()
            for i in range(4):
                B[k * 64 + i * 16 + threadIdx_x] = s[k % 2 * 64 + 63 - i * 16 - threadIdx_x]
        T.tvm_storage_sync("shared")
"""


def test_checker_on_hand_written_ir():
    assert verify(tessel.parse(HAND.replace("WAIT", "0"))) == []
    problems = verify(tessel.parse(HAND.replace("WAIT", "1")))
    assert any("reads stage 0 of s before its copy landed" in p for p in problems), problems


CLAMPED = """
@T.prim_func
def clamped(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"), n: T.int32):
    T.func_attr({"global_symbol": "clamped", "tir.noalias": True})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 16):
        s_data = T.allocate([128], "float32", "shared", annotations={"tessel.pipeline_stage_elems": 64})
        s = T.decl_buffer((128,), "float32", data=s_data, scope="shared")
        for k in T.serial(n, annotations={"tessel.pipelined": 2}):
            T.tvm_storage_sync("shared")
            s[STAGE * 64 + threadIdx_x] = A[k * 16 + threadIdx_x]
            T.tvm_storage_sync("shared")
            B[k * 16 + threadIdx_x] = s[STAGE * 64 + 15 - threadIdx_x]
"""


def test_checker_proves_stages_repeat_for_symbolic_trip_counts():
    # Plain stores with a barrier on each side are right for every n; the stage (k + 1) % 2
    # repeats every 2 iterations, so the counts run cover all n. min(k, 1) does not repeat: the
    # counts run are still right, but nothing is claimed past them.
    assert verify(tessel.parse(CLAMPED.replace("STAGE", "(k + 1) % 2"))) == []
    problems = verify(tessel.parse(CLAMPED.replace("STAGE", "T.min(k, 1)")))
    assert len(problems) == 2 and all(re.search(
        r"the stage of s in '.*' is T.min\(k, 1\), not proved to repeat every 2 iterations, so "
        r"trip counts past those checked are not covered", p) for p in problems), problems


def test_checker_asks_for_decidable_sync_points():
    text = HAND.replace("WAIT", "0").replace(
        "            T.ptx_cp_async_commit_group()\n            for i",
        "            if threadIdx_x < 8:\n                T.ptx_cp_async_commit_group()\n            for i")
    problems = verify(tessel.parse(text))
    assert any("under a condition the check cannot decide" in p for p in problems), problems


# ---- what the pass refuses ----


@pytest.mark.parametrize("old,new,message", [
    ('annotations={"tessel.pipeline_stages": 3}',
     'annotations={"tessel.pipeline_stages": 3, "tessel.pipeline_warp_split": 1}',
     r"tessel.pipeline_warp_split: a producer/consumer warp split is not supported yet"),
    ('annotations={"tessel.pipeline_stages": 3}', 'annotations={"tessel.pipeline_stages": 0}',
     r"tessel.pipeline_stages must be an integer >= 1"),
    ("acc[r * 16 + c] = acc[r * 16 + c] + T.Cast",
     "As[0] = T.float32(1)\n                    acc[r * 16 + c] = acc[r * 16 + c] + T.Cast",
     r"the consumer part writes As, which the producer part fills"),
])
def test_refused_annotations_and_bodies(old, new, message):
    text = cpu_mm("float32", 3, 8)
    assert old in text
    with pytest.raises(ValueError, match=r"SoftwarePipeline: function 'mm', loop 'ko': " + message):
        lower(text.replace(old, new))


@needs_nvrtc
def test_more_stages_than_wait_group_counts_are_refused_for_cp_async():
    with pytest.raises(ValueError, match=r"at most 9 stages with cp.async: .* 10 stages need "
                                         r"wait_group\(8\)"):
        tessel.build(gpu_mm(256, 256, 512, "float16", 10), target="cuda -arch=sm_80")
    # Plain copies have no such limit.
    assert verify(lower_through_pipelining(cpu_mm("float32", 10, 8), "c")) == []


def test_a_consumer_writing_what_the_copies_read_is_refused():
    text = cpu_mm("float32", 3, 8).replace(
        "                    acc[r * 16 + c] = acc[r * 16 + c] + T.Cast",
        "                    A[0, 0] = T.float32(0)\n                    acc[r * 16 + c] = acc[r * 16 + c] + T.Cast")
    with pytest.raises(ValueError, match=r"the consumer part writes A, which the producer part reads"):
        lower(text)


def test_a_body_without_copies_is_refused():
    text = cpu_mm("float32", 3, 8).replace(
        "                for r in range(16):\n                    for c in T.vectorized(8):",
        "                for x in range(256):\n                    acc[x] = acc[x] + T.float32(0)\n"
        "                for r in range(16):\n                    for c in T.vectorized(8):")
    with pytest.raises(ValueError, match=r"does not start with copies into shared memory"):
        lower(text)


def test_a_staged_buffer_used_after_the_loop_is_refused():
    text = cpu_mm("float32", 2, 8).replace(
        "                C[i0 * 16 + r, j0 * 16 + c] = acc[r * 16 + c]",
        "                C[i0 * 16 + r, j0 * 16 + c] = acc[r * 16 + c] + As[0]")
    with pytest.raises(ValueError, match=r"buffer As_data is staged by the loop but also used outside it"):
        lower(text)


@pytest.mark.parametrize("shape,dtype", [((256, 256, 256), "float32"), ((200, 136, 1000), "float16"),
                                         ((100, 70, 77), "float32")])
def test_pipelined_output_is_well_formed_and_parses_back(shape, dtype):
    # Each copy of the producer binds its own loop variables, and so does each branch of a split
    # vector loop.
    mod = lower_through_pipelining(gpu_mm(*shape, dtype, 3), "cuda -arch=sm_80")
    assert list(get("tessel.transform.VerifyWellFormed")(mod)) == []
    tessel.ir.assert_structural_equal(tessel.parse(str(mod)), mod, map_free_vars=True)
    c = lower_through_pipelining(cpu_mm(dtype, 4, 8, True), "c")
    assert list(get("tessel.transform.VerifyWellFormed")(c)) == []
