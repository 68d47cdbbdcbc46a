"""Tile programs (issue 16, first part): T.Kernel, T.alloc_shared / alloc_fragment, T.copy,
T.gemm, T.fill / T.clear, T.Pipelined and T.Parallel parse, print back, and run on the CPU through
LowerTileOps (include/tessel/transform/lower_tile_ops.h), checked against NumPy; what is wrong is
said with the line; GPU targets refuse tile programs by name until their lowering exists."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi

import tessel
from tessel import ir

# A GEMM in 14 lines of kernel code, as a TileLang user writes it.
GEMM = """
@T.prim_func
def gemm(A: T.Buffer((M, K), "DT"), B: T.Buffer((K, N), "DT"), C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "gemm", "tir.noalias": True})
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
        A_s = T.alloc_shared((32, 16), "DT")
        B_s = T.alloc_shared((16, 32), "DT")
        C_f = T.alloc_fragment((32, 32), "float32")
        T.clear(C_f)
        for ko in T.Pipelined(T.ceildiv(K, 16), num_stages=3):
            T.copy(A[by * 32, ko * 16], A_s)
            T.copy(B[ko * 16, bx * 32], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * 32, bx * 32])
"""

# C = relu(A @ W.T * 2): a transposed operand, slices, and an elementwise epilogue over the
# fragment with T.Parallel.
FUSED = """
@T.prim_func
def fused(A: T.Buffer((M, K), "float32"), W: T.Buffer((N, K), "float32"),
          C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "fused", "tir.noalias": True})
    with T.Kernel((N + 15) // 16, (M + 15) // 16, threads=64) as (bx, by):
        A_s = T.alloc_shared((16, 8), "float32")
        W_s = T.alloc_shared((16, 8), "float32")
        C_f = T.alloc_fragment((16, 16), "float32")
        T.fill(C_f, T.float32(0))
        for ko in range((K + 7) // 8):
            T.copy(A[by * 16:by * 16 + 16, ko * 8:ko * 8 + 8], A_s)
            T.copy(W[bx * 16, ko * 8], W_s)
            T.gemm(A_s, W_s, C_f, transpose_B=True)
        for i, j in T.Parallel(16, 16):
            C_f[i, j] = T.max(C_f[i, j] * T.float32(2), T.float32(0))
        T.copy(C_f, C[by * 16, bx * 16])
"""


def run(text, name, *arrays):
    mod = tessel.build(text, target="c")
    mod[name](*(tvm_ffi.from_dlpack(x) for x in arrays))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("m,n,k", [(64, 64, 32), (50, 70, 37), (1, 1, 1), (32, 96, 0), (33, 31, 17)])
def test_tile_gemm_matches_numpy(dtype, m, n, k):
    rng = np.random.default_rng(m * 7 + n + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = np.full((m, n), np.nan, "float32")
    run(GEMM.replace("DT", dtype), "gemm", a, b, c)
    np.testing.assert_allclose(c, a.astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("m,n,k", [(32, 48, 24), (20, 30, 13)])
def test_transposed_gemm_slices_and_parallel_epilogue(m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype("float32")
    w = rng.standard_normal((n, k)).astype("float32")
    c = np.full((m, n), np.nan, "float32")
    run(FUSED, "fused", a, w, c)
    np.testing.assert_allclose(c, np.maximum(a @ w.T * 2, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("text", [GEMM.replace("DT", "float16"), FUSED])
def test_tile_programs_print_and_parse_back(text):
    f = tessel.parse(text)
    printed = str(f)
    assert "T.tile_copy(T.tile_region(" in printed and "T.tile_gemm(" in printed
    ir.assert_structural_equal(tessel.parse(printed), f, map_free_vars=True)


def test_the_front_end_builds_the_documented_ir():
    printed = str(tessel.parse(GEMM.replace("DT", "float16")))
    # T.Kernel: blockIdx loops, the outermost carrying the thread count.
    assert 'thread="blockIdx.x", annotations={"tessel.tile_kernel": 128}' in printed
    assert 'thread="blockIdx.y"' in printed
    # Scopes of the allocations; T.Pipelined's stages for SoftwarePipeline.
    assert '"shared.dyn"' in printed and '"local.fragment"' in printed
    assert 'annotations={"tessel.pipeline_stages": 3}' in printed
    # A start takes the extents of the other operand.
    assert "T.tile_region(A[by * 32, ko * 16], 32, 16" in printed
    parallel = str(tessel.parse(FUSED))
    assert parallel.count('T.serial(16, annotations={"tessel.tile_parallel": True})') == 2


def test_lowering_guards_only_what_may_leave_the_tensor():
    low = str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"gemm": tessel.parse(GEMM.replace("DT", "float32"))}), "c"))
    assert "tile_copy" not in low and "tile_gemm" not in low and "T.thread_binding" not in low
    assert "T.if_then_else(" in low  # reads of A and B past M, N, K give 0
    assert "T.parallel(" in low      # the kernel's outer block loop


@pytest.mark.parametrize("old,new,message", [
    ("T.copy(A[by * 32, ko * 16], A_s)", "T.copy(A[by * 32, ko * 16], A_s[0, 0])",
     r"T.copy: both operands are starts"),
    ("T.copy(A[by * 32, ko * 16], A_s)", "T.copy(A[by * 32], A_s)",
     r"1 indices for buffer A of rank 2"),
    ("T.gemm(A_s, B_s, C_f)", "T.gemm(A_s, A_s, C_f)",
     r"tile_gemm: N of B and C: 16 and 32 differ"),
    ("as (bx, by):", "as bx:", r"T.Kernel has 2 grid dimensions and 1 block indices"),
    ("threads=128", "threads=2048", r"T.Kernel: threads = 2048 \(1 .. 1024\)"),
    ("T.clear(C_f)", "T.clear(C_f[0, 0])", r"T.clear needs a buffer or a region, not a start"),
    ("num_stages=3", "num_stages=0", r"num_stages = 0 \(at least 1\)"),
])
def test_bad_tile_programs_are_refused(old, new, message):
    text = GEMM.replace("DT", "float32")
    assert old in text
    with pytest.raises(ValueError, match=message):
        tessel.build(text.replace(old, new, 1), target="c")


def test_the_line_of_a_lowering_error_is_given():
    text = GEMM.replace("DT", "float32").replace("T.gemm(A_s, B_s, C_f)", "T.gemm(A_s, A_s, C_f)")
    with pytest.raises(ValueError, match=r"^<string>:13:13: LowerTileOps: function 'gemm': "
                                         r"tile_gemm: N of B and C"):
        tessel.build(text, target="c")


def test_the_line_of_a_front_end_error_is_given():
    text = GEMM.replace("DT", "float32").replace("T.copy(A[by * 32, ko * 16], A_s)",
                                                 "T.copy(A[by * 32, ko * 16], A_s[0, 0])")
    with pytest.raises(ValueError, match=r"<string>:11:\d+"):
        tessel.parse(text)



def test_ceildiv_is_the_floordiv_it_stands_for():
    f = tessel.parse("""
@T.prim_func
def f(A: T.Buffer((n,), "float32"), k: T.int32):
    for i in range(T.ceildiv(n, 32)):
        A[i] = T.Cast("float32", T.ceildiv(n, k))
""")
    printed = str(f)
    assert "range((n + 31) // 32)" in printed and "(n + k - 1) // k" in printed


# A row softmax over 64-wide rows: reductions over a fragment's axis and T.Parallel elementwise.
SOFTMAX = """
@T.prim_func
def softmax(X: T.Buffer((M, 64), "float32"), Y: T.Buffer((M, 64), "float32")):
    T.func_attr({"global_symbol": "softmax", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
        X_f = T.alloc_fragment((16, 64), "float32")
        row_max = T.alloc_fragment((16,), "float32")
        row_sum = T.alloc_fragment((16,), "float32")
        T.copy(X[bx * 16, 0], X_f)
        T.reduce_max(X_f, row_max, dim=1)
        for i, j in T.Parallel(16, 64):
            X_f[i, j] = T.exp(X_f[i, j] - row_max[i])
        T.reduce_sum(X_f, row_sum, dim=1)
        for i, j in T.Parallel(16, 64):
            X_f[i, j] = X_f[i, j] / row_sum[i]
        T.copy(X_f, Y[bx * 16, 0])
"""


@pytest.mark.parametrize("m", [16, 37, 1])
def test_tile_softmax_matches_numpy(m):
    x = (np.random.default_rng(m).standard_normal((m, 64)) * 4).astype("float32")
    y = np.full_like(x, np.nan)
    run(SOFTMAX, "softmax", x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_reduce_without_clear_combines_with_the_destination():
    text = """
@T.prim_func
def colmin(X: T.Buffer((8, 16), "int32"), Y: T.Buffer((16,), "int32")):
    T.func_attr({"global_symbol": "colmin", "tir.noalias": True})
    with T.Kernel(1, threads=32) as bx:
        X_f = T.alloc_fragment((8, 16), "int32")
        out = T.alloc_fragment((16,), "int32")
        T.fill(out, 5)
        T.copy(X, X_f)
        T.reduce_min(X_f, out, dim=0, clear=False)
        T.copy(out, Y)
"""
    x = np.random.default_rng(0).integers(-20, 40, (8, 16)).astype("int32")
    y = np.zeros(16, "int32")
    run(text, "colmin", x, y)
    np.testing.assert_array_equal(y, np.minimum(x.min(axis=0), 5))


@pytest.mark.parametrize("old,new,message", [
    ("T.reduce_max(X_f, row_max, dim=1)", "T.reduce_max(X_f, row_max, dim=2)",
     r"T.reduce_max: dim 2 for a source of rank 2"),
    ("T.reduce_sum(X_f, row_sum, dim=1)", "T.reduce_sum(X_f, X_f, dim=1)",
     r"tile_reduce: the destination has rank 2, the source without axis 1 has rank 1"),
    ("T.reduce_max(X_f, row_max, dim=1)", "T.reduce_max(X_f, row_max, dim=0)",
     r"tile_reduce: extent 0: 64 and 16 differ"),
])
def test_bad_reductions_are_refused(old, new, message):
    assert old in SOFTMAX
    with pytest.raises(ValueError, match=message):
        tessel.build(SOFTMAX.replace(old, new, 1), target="c")


def test_tile_programs_run_through_the_python_decorator():
    from tessel.script import tir as T

    @tessel.jit
    def rowsum(X: T.Buffer(("M", 32), "float32"), Y: T.Buffer(("M",), "float32")):
        with T.Kernel(T.ceildiv(M, 8), threads=32) as bx:  # noqa: F821 (M: the shape variable)
            X_f = T.alloc_fragment((8, 32), "float32")
            y_f = T.alloc_fragment((8,), "float32")
            T.copy(X[bx * 8, 0], X_f)
            T.reduce_sum(X_f, y_f, dim=1)
            T.copy(y_f, Y[bx * 8])

    x = np.random.default_rng(1).standard_normal((13, 32)).astype("float32")
    y = np.zeros(13, "float32")
    rowsum(x, y)
    np.testing.assert_allclose(y, x.sum(axis=1), rtol=1e-5, atol=1e-5)


# T.copy at any offset, in or out of the tensor: reads outside give 0, writes outside are dropped.
WINDOW = """
@T.prim_func
def window(X: T.Buffer((M, N), "float32"), Y: T.Buffer((8, 12), "float32"),
           Z: T.Buffer((M, N), "float32"), r0: T.int32, c0: T.int32):
    T.func_attr({"global_symbol": "window", "tir.noalias": True})
    with T.Kernel(1, threads=32) as bx:
        t = T.alloc_fragment((8, 12), "float32")
        T.copy(X[r0, c0], t)
        T.copy(t, Y)
        T.copy(t, Z[r0 + 1, c0 - 2])
"""


def test_copies_at_random_offsets_clip_like_numpy():
    mod = tessel.build(WINDOW, target="c")
    rng = np.random.default_rng(42)
    for _ in range(60):
        m, n = (int(v) for v in rng.integers(1, 20, 2))
        r0, c0 = int(rng.integers(-12, m + 4)), int(rng.integers(-16, n + 4))
        x = rng.standard_normal((m, n)).astype("float32")
        y = np.full((8, 12), np.nan, "float32")
        z = np.full((m, n), -1.0, "float32")
        mod["window"](*(tvm_ffi.from_dlpack(a) for a in (x, y, z)), r0, c0)
        want = np.zeros((8, 12), "float32")
        want_z = np.full((m, n), -1.0, "float32")
        for i in range(8):
            for j in range(12):
                if 0 <= r0 + i < m and 0 <= c0 + j < n:
                    want[i, j] = x[r0 + i, c0 + j]
                if 0 <= r0 + 1 + i < m and 0 <= c0 - 2 + j < n:
                    want_z[r0 + 1 + i, c0 - 2 + j] = want[i, j]
        np.testing.assert_array_equal(y, want, err_msg=f"{m}x{n} at ({r0}, {c0})")
        np.testing.assert_array_equal(z, want_z, err_msg=f"{m}x{n} at ({r0}, {c0})")


# ---- GPU targets: the SIMT lowering (src/transform/lower_tile_ops_gpu.cc) ----

import metal_emu  # noqa: E402
from conftest import have_cuda_compiler, without_aligned_variants  # noqa: E402


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("m,n,k", [(64, 64, 32), (50, 70, 37), (1, 1, 1)])
def test_tile_gemm_on_metal_in_every_thread_order(dtype, m, n, k):
    mod = tessel.build(GEMM.replace("DT", dtype), target="metal")
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    want = a.astype("float32") @ b.astype("float32")
    for order, seed in metal_emu.ORDERS:
        c = np.full((m, n), np.nan, "float32")
        with metal_emu.installed(order, seed):
            mod["gemm"](*[metal_emu.as_metal(x) for x in (a, b, c)])
        np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4, err_msg=order)


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_tile_epilogue_and_softmax_on_metal_in_every_thread_order():
    fused, soft = tessel.build(FUSED, target="metal"), tessel.build(SOFTMAX, target="metal")
    rng = np.random.default_rng(3)
    a, w = rng.standard_normal((20, 13)).astype("float32"), rng.standard_normal((30, 13)).astype("float32")
    x = (rng.standard_normal((37, 64)) * 4).astype("float32")
    e = np.exp(x - x.max(axis=1, keepdims=True))
    for order, seed in metal_emu.ORDERS:
        c, y = np.full((20, 30), np.nan, "float32"), np.full_like(x, np.nan)
        with metal_emu.installed(order, seed):
            fused["fused"](*[metal_emu.as_metal(v) for v in (a, w, c)])
            soft["softmax"](metal_emu.as_metal(x), metal_emu.as_metal(y))
        np.testing.assert_allclose(c, np.maximum(a @ w.T * 2, 0), rtol=1e-5, atol=1e-5, err_msg=order)
        np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6,
                                   err_msg=order)


@pytest.mark.parametrize("text", [GEMM.replace("DT", "float16"), FUSED, SOFTMAX])
def test_tile_programs_compile_for_cuda(text):
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    src = tessel.build(text, target="cuda -arch=sm_80").get_source("cuda")
    ptx = tvm_ffi.get_global_func("tessel.codegen.CompileCUDAToPTX")(src, "sm_80")
    assert "threadIdx.x" in src and "__syncthreads()" in src and ".entry" in ptx


def test_t_pipelined_becomes_a_cp_async_ring_that_verify_pipeline_accepts():
    from test_software_pipeline import lower, verify  # noqa: PLC0415

    text = GEMM.replace("DT", "float32")
    low = lower(text, "cuda -arch=sm_80")
    assert "T.ptx_cp_async(" in str(low) and "T.ptx_cp_async_wait_group(1)" in str(low)
    assert verify(low) == []
    assert verify(lower(GEMM.replace("DT", "float16"), "metal")) == []


def test_simt_lowering_spreads_fragments_over_the_threads():
    low = str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"gemm": tessel.parse(GEMM.replace("DT", "float32"))}), "cuda -arch=sm_80"))
    # 32 x 32 fragment over 128 threads: 8 registers a thread.
    assert 'C_f_local = T.allocate([8], "float32", "local")' in low


@pytest.mark.parametrize("old,new,message", [
    ("            C_f[i, j] = T.max(C_f[i, j] * T.float32(2), T.float32(0))",
     "            C_f[i, j] = T.max(C_f[j, i] * T.float32(2), T.float32(0))",
     r"tile_gemm: accumulator C_f would be replicated in every thread \(a reduction writes it, "
     r"or a T.Parallel indexes it other than by its loop variables in order\)"),
    ("T.fill(C_f, T.float32(0))", "T.fill(C_f[0:8, 0:16], T.float32(0))",
     r"a tile operation on part of fragment C_f \(only whole fragments on the GPU so far\)"),
])
def test_what_the_simt_lowering_cannot_do_is_said(old, new, message):
    assert old in FUSED
    with pytest.raises(ValueError, match=message):
        tessel.build(FUSED.replace(old, new, 1), target="cuda -arch=sm_80")


from conftest import gpu_torch as _cuda_torch  # noqa: E402


@pytest.mark.skipif(_cuda_torch() is None,
                    reason="needs PyTorch and a CUDA GPU (the device machine runs these)")
@pytest.mark.parametrize("m,n,k", [(64, 64, 32), (200, 130, 77)])
def test_tile_gemm_on_a_cuda_gpu(m, n, k):
    torch = _cuda_torch()
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(k, n, device="cuda").half()
    c = torch.full((m, n), float("nan"), device="cuda")
    tessel.build(GEMM.replace("DT", "float16"), target="cuda")["gemm"](a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-2)


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_random_tile_shapes_and_thread_counts_give_a_gemm_on_every_target():
    # Seeded: tile sizes, thread counts and matrix shapes drawn at random; every program is a
    # valid GEMM, so every target must build it and the CPU and the MSL harness must compute A @ B
    # (T.Pipelined staged where SoftwarePipeline can, run as written where it cannot).
    rng = np.random.default_rng(2026)
    base = GEMM.replace("DT", "float32")
    for _ in range(12):
        bm, bn, bk = (int(rng.choice(v)) for v in ([1, 3, 8, 16, 33], [1, 4, 7, 32], [1, 2, 5, 16]))
        threads = int(rng.choice([1, 32, 64, 256]))
        text = (base.replace("T.ceildiv(N, 32)", f"T.ceildiv(N, {bn})")
                .replace("T.ceildiv(M, 32)", f"T.ceildiv(M, {bm})")
                .replace("T.ceildiv(K, 16)", f"T.ceildiv(K, {bk})")
                .replace("(32, 16)", f"({bm}, {bk})").replace("(16, 32)", f"({bk}, {bn})")
                .replace("(32, 32)", f"({bm}, {bn})").replace("by * 32", f"by * {bm}")
                .replace("bx * 32", f"bx * {bn}").replace("ko * 16", f"ko * {bk}")
                .replace("threads=128", f"threads={threads}"))
        m, n, k = (int(v) for v in rng.integers(1, 40, 3))
        a = rng.standard_normal((m, k)).astype("float32")
        b = rng.standard_normal((k, n)).astype("float32")
        where = f"tiles {bm}x{bn}x{bk}, {threads} threads, {m}x{n}x{k}"
        c = np.full((m, n), np.nan, "float32")
        run(text, "gemm", a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4, err_msg="c: " + where)
        tessel.build(text, target="cuda -arch=sm_80")
        mod = tessel.build(text, target="metal")
        c = np.full((m, n), np.nan, "float32")
        with metal_emu.installed("random", 7):
            mod["gemm"](*[metal_emu.as_metal(x) for x in (a, b, c)])
        np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4, err_msg="metal: " + where)


# Declarations at the top of a T.Kernel that are neither tiles nor fragments: a view of a
# parameter and a per-thread local array, kept by the GPU lowering around the right loop.
VIEW = """
@T.prim_func
def scale(X: T.Buffer((M, 32), "float32"), Y: T.Buffer((M, 32), "float32")):
    T.func_attr({"global_symbol": "scale", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 4), threads=32) as bx:
        Yv = T.decl_buffer((M, 32), "float32", data=Y.data)
        k_data = T.allocate([1], "float32", "local")
        k = T.decl_buffer((1,), "float32", data=k_data, scope="local")
        X_f = T.alloc_fragment((4, 32), "float32")
        T.copy(X[bx * 4, 0], X_f)
        for i, j in T.Parallel(4, 32):
            k[0] = T.float32(3)
            X_f[i, j] = X_f[i, j] * k[0]
        T.copy(X_f, Yv[bx * 4, 0])
"""


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_other_declarations_at_the_top_of_a_kernel_are_kept():
    x = np.random.default_rng(5).standard_normal((10, 32)).astype("float32")
    y = np.full_like(x, np.nan)
    run(VIEW, "scale", x, y)
    np.testing.assert_allclose(y, x * 3, rtol=1e-6)
    mod = tessel.build(VIEW, target="metal")
    for order, seed in metal_emu.ORDERS:
        y = np.full_like(x, np.nan)
        with metal_emu.installed(order, seed):
            mod["scale"](metal_emu.as_metal(x), metal_emu.as_metal(y))
        np.testing.assert_allclose(y, x * 3, rtol=1e-6, err_msg=order)


def test_extents_the_analyzer_cannot_decide_are_not_proved_rather_than_different():
    text = """
@T.prim_func
def part(X: T.Buffer((64, 64), "float32"), Y: T.Buffer((8, 8), "float32"), n: T.int32):
    T.func_attr({"global_symbol": "part", "tir.noalias": True})
    with T.Kernel(1, threads=32) as bx:
        t = T.alloc_fragment((8, 8), "float32")
        T.copy(X[0:n, 0:8], t)
        T.copy(t, Y)
"""
    with pytest.raises(ValueError, match=r"extent 0 of X and t: n and 8 are not proved equal \(the "
                                         r"analyzer could not decide it within its budget"):
        tessel.build(text, target="c")


ODD_ROWS = """
@T.prim_func
def oddrows(X: T.Buffer((8, 24), "float16"), S: T.Buffer((8,), "float32"),
            M: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "oddrows", "tir.noalias": True})
    with T.Kernel(1, threads=32) as bx:
        X_f = T.alloc_fragment((8, 24), "float32")
        s = T.alloc_fragment((8,), "float32")
        m = T.alloc_fragment((8,), "float32")
        T.copy(X, X_f)
        T.reduce_sum(X_f, s, dim=1)
        T.reduce_max(X_f, m, dim=1)
        T.copy(s, S)
        T.copy(m, M)
"""


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_rows_that_fit_no_shuffle_pattern_are_reduced_by_vector_partials():
    # 4-element vectors (16 bytes of float32), 6 a row, over 32 threads: no group of threads
    # holds whole rows, so each thread reduces its own vectors into a shared scratch of one
    # partial a vector (48 floats, not the tile's 192), which both reductions share.
    if have_cuda_compiler():
        src = without_aligned_variants(
            tessel.build(ODD_ROWS, target="cuda -arch=sm_80").get_source("cuda"))
        assert src.count("__shared__") == 1 and "float X_f_red[48];" in src, src
    mod = tessel.build(ODD_ROWS, target="metal")
    x = np.random.default_rng(5).standard_normal((8, 24)).astype("float16")
    for order, seed in metal_emu.ORDERS:
        s, m = np.full(8, np.nan, "float32"), np.full(8, np.nan, "float32")
        with metal_emu.installed(order, seed):
            mod["oddrows"](*[metal_emu.as_metal(v) for v in (x, s, m)])
        np.testing.assert_allclose(s, x.astype("float32").sum(axis=1), rtol=1e-5, atol=1e-5,
                                   err_msg=order)
        np.testing.assert_array_equal(m, x.astype("float32").max(axis=1), err_msg=order)


def test_scratch_tiles_past_48_kb_go_to_dynamic_shared_memory():
    # The SIMT form of attention with 192-key tiles (sm_80, or sm_90a's fallback kernel built
    # without Z3): the reductions' row slots (the scores are an mma accumulator: 2 KB each) stay
    # static, P's 48 KB staging tile for the second gemm goes to dynamic shared memory. Refused
    # before (a 96 KB static scratch).
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    from test_tile_attention import attention_text

    def static_shared(arch):
        src = without_aligned_variants(
            tessel.build(attention_text(64, keys=192), target=f"cuda -arch={arch}")
            .get_source("cuda"))
        assert "P_f_gemm = (uint16_t*)(tsl_dyn_smem + " in src
        return [line.strip() for line in src.splitlines() if line.strip().startswith("__shared__")]

    assert static_shared("sm_80") == ["__shared__ __align__(16) float S_f_slots[512];",
                                      "__shared__ __align__(16) float S_f_slots_1[512];"]
    with pytest.raises(ValueError, match=r"dynamic shared memory \(shared.dyn allocations\) needs "
                                         r"167936 bytes, more than the limit of 166912"):
        tessel.build(attention_text(128, keys=176), target="cuda -arch=sm_80")
