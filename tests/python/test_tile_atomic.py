"""T.atomic_add (issue 16): a tile, a value or one element added atomically into a tensor, as
split-K GEMMs use it. The front end makes a tile_atomic_add call that prints and parses back; the
CPU adds through the C backend's atomics (the T.Kernel's block loop runs in parallel), the SIMT
lowering through atomicAdd / Metal's atomic_fetch_add_explicit; the Hopper planner falls back to
SIMT and says why; what is wrong is said with the line."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm_ffi

import metal_emu
import tessel
from conftest import have_cuda_compiler
from tessel import ir

SPLITS = 4

# C += A @ B with K cut into SPLITS slices: block (bx, by, bz) adds its partial 32 x 32 tile of
# slice bz into C. The slices past K read zeros (ragged edges), so any K works.
SPLITK = """
@T.prim_func
def splitk(A: T.Buffer((M, K), "DT"), B: T.Buffer((K, N), "DT"), C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "splitk", "tir.noalias": True})
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), SPLITS, threads=128) as (bx, by, bz):
        A_s = T.alloc_shared((32, 16), "DT")
        B_s = T.alloc_shared((16, 32), "DT")
        C_f = T.alloc_fragment((32, 32), "float32")
        T.clear(C_f)
        for ko in range(T.ceildiv(T.ceildiv(K, 16), SPLITS)):
            T.copy(A[by * 32, (bz * T.ceildiv(T.ceildiv(K, 16), SPLITS) + ko) * 16], A_s)
            T.copy(B[(bz * T.ceildiv(T.ceildiv(K, 16), SPLITS) + ko) * 16, bx * 32], B_s)
            T.gemm(A_s, B_s, C_f)
        T.atomic_add(C[by * 32, bx * 32], C_f)
""".replace("SPLITS", str(SPLITS))

# Every block adds 1 to each element of the same 1024, `rounds` times: a lost update shows as a
# count below 64 * rounds when blocks run at once (the CPU's parallel block loop). At 256 rounds a
# plain read-modify-write in place of the atomic add lost 2,000 to 7,000 of the 16,384 counts of
# every element on the 2-core test machine; the atomic add lost none.
HIST = """
@T.prim_func
def hist(C: T.Buffer((1024,), "DT")):
    T.func_attr({"global_symbol": "hist", "tir.noalias": True})
    with T.Kernel(64, threads=128) as bx:
        ones = T.alloc_fragment((1024,), "DT")
        T.fill(ones, 1)
        for r in range(ROUNDS):
            T.atomic_add(C, ones)
"""


def hist(dtype, rounds=16):
    return HIST.replace("DT", dtype).replace("ROUNDS", str(rounds))


# The two scalar forms: a value into every element of a region, and one element per T.Parallel
# iteration (TileLang's `T.atomic_add(B[i, j], A_s[i, j])`).
SCALAR = """
@T.prim_func
def scalar(X: T.Buffer((M, 16), "float32"), C: T.Buffer((M, 16), "float32"),
           S: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "scalar", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 8), threads=64) as bx:
        X_f = T.alloc_fragment((8, 16), "float32")
        T.copy(X[bx * 8, 0], X_f)
        for i, j in T.Parallel(8, 16):
            T.atomic_add(C[bx * 8 + i, j], X_f[i, j] * T.float32(2))
        T.atomic_add(S[0:2], T.float32(1))
        T.atomic_add(S[3], T.float32(0.5))
"""


# Row sums split over column blocks: each block reduces its 8 x 32 box (a replicated fragment on
# GPUs, written by T.reduce_sum) and adds the partial sums into R.
ROWSUM = """
@T.prim_func
def rowsum(X: T.Buffer((M, N), "float32"), R: T.Buffer((M,), "float32")):
    T.func_attr({"global_symbol": "rowsum", "tir.noalias": True})
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 8), threads=64) as (bx, by):
        X_f = T.alloc_fragment((8, 32), "float32")
        r_f = T.alloc_fragment((8,), "float32")
        T.copy(X[by * 8, bx * 32], X_f)
        T.reduce_sum(X_f, r_f, dim=1)
        T.atomic_add(R[by * 8], r_f)
"""


def build(text, target="c"):
    return tessel.build(text, target=target)


def call(mod, name, *arrays):
    mod[name](*(tvm_ffi.from_dlpack(x) for x in arrays))


def splitk_want(a, b, c0):
    return c0 + a.astype("float32") @ b.astype("float32")


@pytest.mark.parametrize("m,n,k", [(64, 64, 128), (50, 70, 37), (33, 31, 200), (1, 1, 1)])
def test_split_k_gemm_adds_its_partial_tiles_into_c(m, n, k):
    rng = np.random.default_rng(m + n * 3 + k)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c0 = rng.standard_normal((m, n)).astype("float32")
    c = c0.copy()
    call(build(SPLITK.replace("DT", "float32")), "splitk", a, b, c)
    np.testing.assert_allclose(c, splitk_want(a, b, c0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_blocks_adding_into_the_same_elements_lose_no_update(dtype):
    mod = build(hist(dtype, 256))
    for _ in range(3):
        c = np.zeros(1024, dtype)
        call(mod, "hist", c)
        assert (c == 64 * 256).all(), f"counts {np.unique(c)}, want {64 * 256}"


@pytest.mark.parametrize("dtype", ["float16", "float64", "uint32", "int64"])
def test_every_c_dtype_adds_atomically(dtype):
    c = np.full(1024, 3, dtype)
    call(build(hist(dtype)), "hist", c)
    assert (c == 3 + 64 * 16).all(), f"counts {np.unique(c)}, want {3 + 64 * 16}"


def test_the_cpu_lowering_adds_atomically_inside_the_parallel_block_loop():
    low = str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"hist": tessel.parse(hist("float32"))}), "c"))
    assert "T.parallel(" in low and "T.atomic_add_at(T.address_of(C[" in low
    src = build(hist("float32")).get_source("c")
    assert "tsl_atomic_add_f32(" in src


def test_scalar_forms_add_a_value_and_one_element():
    x = np.arange(20 * 16, dtype="float32").reshape(20, 16)
    c = np.ones((20, 16), "float32")
    s = np.zeros(4, "float32")
    call(build(SCALAR), "scalar", x, c, s)
    np.testing.assert_array_equal(c, 1 + 2 * x)
    # ceil(20 / 8) = 3 blocks.
    np.testing.assert_array_equal(s, [3, 3, 0, 1.5])


@pytest.mark.parametrize("m,n", [(16, 128), (13, 100)])
def test_partial_row_sums_of_a_reduction_add_up(m, n):
    x = np.random.default_rng(m + n).standard_normal((m, n)).astype("float32")
    r = np.zeros(m, "float32")
    call(build(ROWSUM), "rowsum", x, r)
    np.testing.assert_allclose(r, x.sum(axis=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("text", [SPLITK.replace("DT", "float16"), hist("float32"), SCALAR,
                                  ROWSUM])
def test_atomic_add_prints_and_parses_back(text):
    f = tessel.parse(text)
    printed = str(f)
    assert "T.tile_atomic_add(T.tile_region(" in printed
    ir.assert_structural_equal(tessel.parse(printed), f, map_free_vars=True)


def test_the_front_end_builds_the_documented_ir():
    printed = str(tessel.parse(SPLITK.replace("DT", "float32")))
    # A start takes the extents of the other operand.
    assert re.search(r"T.tile_atomic_add\(T.tile_region\(C\[by \* 32, bx \* 32\], 32, 32\), "
                     r"T.tile_region\(C_f\w*\[0, 0\], 32, 32\)\)", printed)
    scalar = str(tessel.parse(SCALAR))
    # One element: extents 1; a value: no region.
    assert re.search(r"T.tile_atomic_add\(T.tile_region\(C\[bx \* 8 \+ i, j\], 1, 1\), "
                     r"X_f\w*\[i, j\] \* T.float32\(2\)\)", scalar)
    assert "T.tile_atomic_add(T.tile_region(S[0], 2), T.float32(1))" in scalar
    assert "T.tile_atomic_add(T.tile_region(S[3], 1), T.float32(0.5))" in scalar


@pytest.mark.parametrize("old,new,message", [
    ("T.atomic_add(C[by * 32, bx * 32], C_f)", "T.atomic_add(C[0:32, 0:16], C_f)",
     r"<string>:14:9: error: T.atomic_add: extent 1 of the destination C is 16, of the source C_f 32"),
    ("T.atomic_add(C[by * 32, bx * 32], C_f)", "T.atomic_add(C_f, C[by * 32, bx * 32])",
     r"<string>:14:22: error: T.atomic_add: the destination C_f is a register tile \(scope "
     r"local.fragment\)"),
    ("T.atomic_add(C[by * 32, bx * 32], C_f)", "T.atomic_add(C[by * 32], C_f)",
     r"<string>:14:22: error: the destination of T.atomic_add: 1 indices for buffer C of rank 2"),
    ("T.atomic_add(C[by * 32, bx * 32], C_f)", "T.atomic_add(C[0:32, 0:32], A_s)",
     r"<string>:14:9: error: T.atomic_add: extent 1 of the destination C is 32, of the source A_s "
     r"16"),
])
def test_bad_atomic_adds_are_refused_with_the_line(old, new, message):
    text = SPLITK.replace("DT", "float32")
    assert old in text
    with pytest.raises(ValueError, match=message):
        build(text.replace(old, new, 1))


def test_extents_the_front_end_cannot_compare_are_checked_when_lowering():
    text = SPLITK.replace("DT", "float32").replace(
        "T.atomic_add(C[by * 32, bx * 32], C_f)", "T.atomic_add(C[0:M, 0:32], C_f)")
    with pytest.raises(ValueError, match=r"^<string>:14:9: LowerTileOps: function 'splitk': "
                                         r"tile_atomic_add: extent 0 of C_f and C: 32 and M"):
        build(text)


# ---- GPU targets ----

def test_the_simt_lowering_adds_each_threads_own_elements():
    low = str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"splitk": tessel.parse(SPLITK.replace("DT", "float32"))}), "cuda -arch=sm_80"))
    assert "tile_atomic_add" not in low
    assert re.search(r"T.atomic_add_at\(T.address_of\(C\w*\[.*\]\), C_f_local\w*\[0\]\)", low)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_atomic_adds_compile_for_cuda(arch, dtype):
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    for text, name in [(SPLITK.replace("DT", dtype), "splitk"), (hist(dtype), "hist"),
                       (SCALAR, "scalar"), (ROWSUM, "rowsum")]:
        src = build(text, f"cuda -arch={arch}").get_source("cuda")
        ptx = tvm_ffi.get_global_func("tessel.codegen.CompileCUDAToPTX")(src, arch)
        assert "atomicAdd(" in src and ".entry" in ptx, name
        assert re.search(r"(atom|red)(\.global)?\.add", ptx), name
    src = build(hist("float16"), f"cuda -arch={arch}").get_source("cuda")
    assert "atomicAdd((__half*)" in src


def test_the_hopper_planner_falls_back_to_simt_and_says_why():
    from test_tile_hopper import GEMM, planned  # noqa: PLC0415

    old = "T.copy(C_f, C[by * 128, bx * 256])"
    assert old in GEMM
    low = planned(GEMM.replace(old, "T.atomic_add(C[by * 128, bx * 256], C_f)"))
    assert ('"tessel.tile_plan": "SIMT: T.atomic_add at line 26: atomic adds are not in the '
            'warp-specialized form yet') in low
    assert re.search(r"T.atomic_add_at\(T.address_of\(C\w*\[", low)


def test_a_shared_tile_destination_is_refused_on_gpus():
    text = SPLITK.replace("DT", "float32").replace(
        "T.atomic_add(C[by * 32, bx * 32], C_f)", "T.atomic_add(A_s, A[0, 0])")
    with pytest.raises(ValueError, match=r"tile_atomic_add into shared tile A_s on a GPU"):
        build(text, "cuda -arch=sm_80")
    build(text)  # on the CPU a shared tile belongs to one block: a plain add


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_atomic_adds_on_metal_in_every_thread_order():
    splitk, counts, scalar, rowsum = (build(t, "metal") for t in
                                      (SPLITK.replace("DT", "float32"), hist("float32"), SCALAR,
                                       ROWSUM))
    rng = np.random.default_rng(5)
    a = rng.standard_normal((50, 70)).astype("float32")
    b = rng.standard_normal((70, 40)).astype("float32")
    c0 = rng.standard_normal((50, 40)).astype("float32")
    x = np.arange(20 * 16, dtype="float32").reshape(20, 16)
    xr = rng.standard_normal((13, 100)).astype("float32")
    for order, seed in metal_emu.ORDERS:
        c, h = c0.copy(), np.zeros(1024, "float32")
        cs, s = np.ones((20, 16), "float32"), np.zeros(4, "float32")
        with metal_emu.installed(order, seed):
            splitk["splitk"](*[metal_emu.as_metal(v) for v in (a, b, c)])
            counts["hist"](metal_emu.as_metal(h))
            scalar["scalar"](*[metal_emu.as_metal(v) for v in (x, cs, s)])
            r = np.zeros(13, "float32")
            rowsum["rowsum"](metal_emu.as_metal(xr), metal_emu.as_metal(r))
        np.testing.assert_allclose(c, splitk_want(a, b, c0), rtol=1e-4, atol=1e-4, err_msg=order)
        assert (h == 64 * 16).all(), order
        np.testing.assert_array_equal(cs, 1 + 2 * x, err_msg=order)
        np.testing.assert_array_equal(s, [3, 3, 0, 1.5], err_msg=order)
        np.testing.assert_allclose(r, xr.sum(axis=1), rtol=1e-5, atol=1e-5, err_msg=order)
    assert "atomic_fetch_add_explicit((device atomic_float*)" in splitk.get_source("metal")


def test_metal_refuses_atomic_adds_of_other_dtypes_by_name():
    with pytest.raises(ValueError, match=r"an atomic add of float16 \(Metal adds atomically "
                                         r"float32, int32 and uint32 only\)"):
        build(hist("float16"), "metal")


from conftest import gpu_torch as _cuda_torch  # noqa: E402


@pytest.mark.skipif(_cuda_torch() is None, reason="needs torch with a CUDA GPU")
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_split_k_gemm_and_counts_on_a_cuda_gpu(dtype):
    torch = _cuda_torch()
    a = torch.randn(100, 300, device="cuda").to(getattr(torch, dtype))
    b = torch.randn(300, 70, device="cuda").to(getattr(torch, dtype))
    c0 = torch.randn(100, 70, device="cuda")
    c = c0.clone()
    build(SPLITK.replace("DT", dtype), "cuda")["splitk"](a, b, c)
    torch.testing.assert_close(c, c0 + a.float() @ b.float(), rtol=1e-3, atol=1e-2)
    h = torch.zeros(1024, device="cuda", dtype=getattr(torch, dtype))
    build(hist(dtype), "cuda")["hist"](h)
    assert bool((h == 64 * 16).all())
