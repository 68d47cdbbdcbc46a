"""Row reductions written with tile operations (examples/softmax_tile.py, layernorm_tile.py,
rmsnorm_tile.py) and the SIMT lowering that makes them fast on GPUs
(src/transform/lower_tile_ops_gpu.cc): fragments spread over the threads in 16-byte vectors, and
T.reduce over a row by warp shuffles and one shared slot per warp.

Checked against NumPy through the C backend, through the MSL execution harness in three thread
orders (catches a missing barrier), compiled with NVRTC for sm_90 (16-byte accesses, shuffles, no
local memory), and against torch on a CUDA GPU when there is one."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import tvm_ffi
from conftest import REPO, have_cuda_compiler

import metal_emu
import tessel
from tessel import ir

_spec = importlib.util.spec_from_file_location("tile_reductions",
                                               REPO / "bench" / "tile_reductions.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
tile_text = bench.tile_text

OPS = ["softmax", "layernorm", "rmsnorm"]


def reference(op, x, w=None, b=None):
    x = x.astype("float64")
    if op == "softmax":
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if op == "layernorm":
        d = x - x.mean(axis=1, keepdims=True)
        y = d / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5)
        return y * w.astype("float64") + b.astype("float64")
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6) * w.astype("float64")


def inputs(op, rows, m, dtype, seed=0):
    rng = np.random.default_rng(seed * 1000 + rows * 7 + m)
    x = (rng.standard_normal((rows, m)) * 3 + 0.5).astype(dtype)
    ins = [x]
    if op != "softmax":
        ins.append((1 + 0.5 * rng.standard_normal(m)).astype(dtype))
    if op == "layernorm":
        ins.append((0.5 * rng.standard_normal(m)).astype(dtype))
    return ins


TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float16": dict(rtol=1e-2, atol=4e-3)}


def check(op, ins, y, dtype, what=""):
    np.testing.assert_allclose(y.astype("float64"), reference(op, *ins), **TOL[dtype],
                               err_msg=f"{op} {dtype} {what}")


# (row length, rows a block, threads) of the SIMT lowering's cases, for float32 fragments fed
# from float16 or float32 tensors:
CASES = [
    (256, 1, 64),    # every thread holds vectors of every row; two warps: shared slots
    (128, 4, 32),    # one warp holds everything: shuffles only
    (64, 4, 64),     # a row on 16 (float32) or 8 (float16) threads: shuffles in part of a warp
    (512, 3, 128),   # a row on 64 (float16: 128) threads, more than a warp; the last block ragged
    (40, 2, 32),     # vectors of 2 that no group of threads divides: the shared scratch tile
    (96, 2, 48),     # 48 threads, not whole warps: the shared scratch tile
]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_examples_as_written_match_numpy_on_the_cpu(op, dtype):
    text = tile_text(op, dtype=dtype)
    mod = tessel.build(text, target="c")
    ins = inputs(op, 5, 4096, dtype)
    y = np.full_like(ins[0], np.nan)
    mod[bench.FILES[op]](*(tvm_ffi.from_dlpack(a) for a in ins + [y]))
    check(op, ins, y, dtype)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("m,rows,threads", CASES[::2])
def test_other_shapes_match_numpy_on_the_cpu(op, m, rows, threads):
    mod = tessel.build(tile_text(op, m, rows, threads, "float32"), target="c")
    ins = inputs(op, 7, m, "float32")
    y = np.full_like(ins[0], np.nan)
    mod[bench.FILES[op]](*(tvm_ffi.from_dlpack(a) for a in ins + [y]))
    check(op, ins, y, "float32", f"{m} x {rows} rows x {threads} threads")


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("m,rows,threads", CASES)
def test_simt_lowering_in_every_thread_order(op, dtype, m, rows, threads):
    mod = tessel.build(tile_text(op, m, rows, threads, dtype), target="metal")
    ins = inputs(op, 5, m, dtype, seed=1)
    for order, seed in metal_emu.ORDERS:
        y = np.full_like(ins[0], np.nan)
        with metal_emu.installed(order, seed):
            mod[bench.FILES[op]](*[metal_emu.as_metal(a) for a in ins + [y]])
        check(op, ins, y, dtype, f"{m} x {rows} rows x {threads} threads, {order} order")


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_the_softmax_example_in_every_thread_order():
    mod = tessel.build(tile_text("softmax"), target="metal")
    ins = inputs("softmax", 3, 4096, "float16", seed=2)
    for order, seed in metal_emu.ORDERS:
        y = np.full_like(ins[0], np.nan)
        with metal_emu.installed(order, seed):
            mod["softmax_tile"](*[metal_emu.as_metal(a) for a in ins + [y]])
        check("softmax", ins, y, "float16", order)


# Rows of any length K <= 64 (a symbolic extent): the copy cannot guard whole vectors, so it
# guards each element, and reads past K give 0; max and sum go through the shuffles as usual.
RAGGED = """
@T.prim_func
def rowstats(X: T.Buffer((M, K), "float32"), S: T.Buffer((M,), "float32"),
             H: T.Buffer((M,), "float32")):
    T.func_attr({"global_symbol": "rowstats", "tir.noalias": True})
    with T.Kernel(T.ceildiv(M, 2), threads=32) as bx:
        x = T.alloc_fragment((2, 64), "float32")
        s = T.alloc_fragment((2,), "float32")
        h = T.alloc_fragment((2,), "float32")
        T.copy(X[bx * 2, 0], x)
        T.reduce_sum(x, s, dim=1)
        T.fill(h, T.float32(-100))
        T.reduce_max(x, h, dim=1, clear=False)
        T.copy(s, S[bx * 2])
        T.copy(h, H[bx * 2])
"""


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
@pytest.mark.parametrize("k", [64, 61, 1])
def test_ragged_columns_guard_each_element(k):
    low = str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"rowstats": tessel.parse(RAGGED)}), "metal"))
    assert "T.shfl_xor" in low and "x_red" not in low
    mod = tessel.build(RAGGED, target="metal")
    x = (np.random.default_rng(k).standard_normal((5, k)) * 3 - 20).astype("float32")
    for order, seed in metal_emu.ORDERS:
        s, h = np.full(5, np.nan, "float32"), np.full(5, np.nan, "float32")
        with metal_emu.installed(order, seed):
            mod["rowstats"](*[metal_emu.as_metal(a) for a in (x, s, h)])
        np.testing.assert_allclose(s, x.sum(axis=1), rtol=1e-5, atol=1e-4, err_msg=order)
        # Elements past K read 0, which the max sees (the rows are all negative).
        want = np.maximum(x.max(axis=1), 0 if k < 64 else -100)
        np.testing.assert_allclose(h, np.maximum(want, -100), rtol=1e-6, err_msg=order)


def lowered(text):
    return str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"f": tessel.parse(text)}), "cuda -arch=sm_90"))


def test_fragments_are_spread_in_16_byte_vectors_and_rows_reduced_by_shuffles():
    low = lowered(tile_text("softmax", dtype="float16"))
    # The row's 4096 float16 over 128 threads, in vectors of 8 (16 bytes), loaded as they are.
    assert '"float16", "local")' in low and "x_local_1[32]" not in low
    assert ("x_local_1[24:32] = X_1[blockIdx_x * 4096 + threadIdx_x * 8 + 3072:blockIdx_x * 4096 "
            "+ threadIdx_x * 8 + 3072 + 8]") in low
    assert low.count("T.shfl_xor(") == 10  # 5 a reduction, 2 reductions
    assert "x_slots" in low and "e_slots" in low and "x_red" not in low
    # The scratch-tile path is what a reduction falls back to.
    assert "x_red" in lowered(tile_text("softmax", 96, 2, 48, "float32"))


def test_a_parallel_nest_folds_into_the_reduction_and_the_store_after_it():
    low = lowered(tile_text("softmax", dtype="float16"))
    # Each exp is added to the thread's partial sum right after it is computed ...
    first_sum = low.index("e_part_1[0] = e_part_1[0] + e_local_1[0]")
    assert low.index("e_local_1[0] = ") < first_sum < low.index("e_local_1[1] = ")
    assert "e_part_1[0] = e_part_1[0] + e_local_1[31]" in low
    # ... and each output vector is stored right after its lanes, before the next vector's.
    store = low.index("+ 1024 + 8] = x_local_1[8:16]")
    assert low.index("x_local_1[15] = T.Cast") < store < low.index("x_local_1[16] = T.Cast")


# Each element reads Y where the same thread's other vector will store (32 threads, vectors of
# 4, 256 columns: vector 1 of thread t is 128 columns on from vector 0): storing each vector as
# soon as it is computed would feed vector 1 a stored value, so the copy waits for the nest.
READS_ITS_DESTINATION = """
@T.prim_func
def shift_add(X: T.Buffer((M, 256), "float32"), Y: T.Buffer((M, 256), "float32")):
    T.func_attr({"global_symbol": "shift_add", "tir.noalias": True})
    with T.Kernel(M, threads=32) as bx:
        x = T.alloc_fragment((1, 256), "float32")
        T.copy(X[bx, 0], x)
        for i, j in T.Parallel(1, 256):
            x[i, j] = x[i, j] + Y[bx, (j + 128) % 256]
        T.copy(x, Y[bx, 0])
"""


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_no_store_is_moved_into_a_nest_that_reads_its_destination():
    low = str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"shift_add": tessel.parse(READS_ITS_DESTINATION)}), "metal"))
    assert low.index("x_local_1[7] = ") < low.index("] = x_local_1[0:4]")
    mod = tessel.build(READS_ITS_DESTINATION, target="metal")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 256)).astype("float32")
    y0 = rng.standard_normal((3, 256)).astype("float32")
    for order, seed in metal_emu.ORDERS:
        y = y0.copy()
        with metal_emu.installed(order, seed):
            mod["shift_add"](*[metal_emu.as_metal(a) for a in (x, y)])
        np.testing.assert_array_equal(y, x + np.roll(y0, -128, axis=1), err_msg=order)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rows_of_32768_16_bit_floats_fit_two_blocks_of_512_threads(op, dtype, tmp_path):
    # 64 16-bit floats a thread, two to a register: with the folds, ptxas needs at most 64
    # registers a thread (two blocks of 512 a multiprocessor). Without them: 87-115 (the exps or
    # squares of the whole row, or every output before the first store, live at once); bfloat16
    # without its packed register arrays (cuda_kernel.cc): 64-98. Needs nvcc.
    import re
    import shutil
    import subprocess
    from pathlib import Path

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.skip("needs nvcc for ptxas -v")
    cu = tmp_path / "k.cu"
    cu.write_text(tessel.build(tile_text(op, 32768, 1, 512, dtype),
                               target="cuda -arch=sm_90").get_source("cuda"))
    out = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-o", str(tmp_path / "k.cubin"),
                          "-Xptxas", "-v", "-diag-suppress", "177", str(cu)],
                         capture_output=True, text=True, check=True)
    report = out.stdout + out.stderr
    regs = [int(r) for r in re.findall(r"Used (\d+) registers", report)]
    assert regs and max(regs) <= 64, report
    assert "0 bytes spill stores" in report, report


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype,vector", [("float32", "float4"), ("float16", "uint4"),
                                          ("bfloat16", "uint4")])
@pytest.mark.parametrize("m,threads", [(4096, 128), (32768, 1024)])
def test_cuda_source_has_16_byte_accesses_shuffles_and_no_local_memory(op, dtype, vector, m,
                                                                       threads):
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    src = tessel.build(tile_text(op, m, 1, threads, dtype),
                       target="cuda -arch=sm_90").get_source("cuda")
    assert f"tsl_wide_load<{vector}>(X" in src and f"{vector} tsl_s" in src
    assert "__shfl_xor_sync(0xffffffffu" in src
    if op != "softmax":  # the weights, read in T.Parallel, a vector at a time too
        assert f"tsl_wide_load<{vector}>(W" in src
    ptx = tvm_ffi.get_global_func("tessel.codegen.CompileCUDAToPTX")(src, "sm_90")
    assert ".entry" in ptx
    # Every register index is a constant: nothing of the fragments lives in local memory.
    assert "__local_depot" not in ptx


from conftest import gpu_torch as _cuda_torch  # noqa: E402


@pytest.mark.skipif(_cuda_torch() is None,
                    reason="needs PyTorch and a CUDA GPU (the device machine runs these)")
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("m,rows,threads", [(1024, 4, 128), (4096, 1, 128), (32768, 1, 1024),
                                            (32768, 1, 512), (512, 3, 128)])
def test_tile_reductions_on_a_cuda_gpu(op, dtype, m, rows, threads):
    torch = _cuda_torch()
    import torch.nn.functional as F

    g = torch.Generator(device="cuda").manual_seed(m)
    x = (torch.randn(77, m, device="cuda", generator=g) * 3).to(getattr(torch, dtype))
    w = (1 + 0.5 * torch.randn(m, device="cuda", generator=g)).to(x.dtype)
    b = (0.5 * torch.randn(m, device="cuda", generator=g)).to(x.dtype)
    ins, want = {
        "softmax": ([x], lambda: torch.softmax(x.float(), -1)),
        "layernorm": ([x, w, b], lambda: F.layer_norm(x.float(), (m,), w.float(), b.float(), 1e-5)),
        "rmsnorm": ([x, w], lambda: F.rms_norm(x.float(), (m,), w.float(), 1e-6)),
    }[op]
    y = torch.full_like(x, float("nan"))
    tessel.build(tile_text(op, m, rows, threads, dtype), target="cuda")[bench.FILES[op]](*ins, y)
    tol = {"float32": (1e-5, 1e-5), "float16": (1e-2, 4e-3), "bfloat16": (2e-2, 3e-2)}[dtype]
    torch.testing.assert_close(y.float(), want(), rtol=tol[0], atol=tol[1])


# A T.Parallel body that reads the weights only where a condition holds: nothing is read ahead,
# since a whole vector would read what the program does not.
GATED = """
@T.prim_func
def gated(X: T.Buffer((M, 64), "float32"), W: T.Buffer((64,), "float32"),
          Y: T.Buffer((M, 64), "float32"), k: T.int32):
    T.func_attr({"global_symbol": "gated", "tir.noalias": True})
    with T.Kernel(M, threads=16) as bx:
        x = T.alloc_fragment((1, 64), "float32")
        T.copy(X[bx, 0], x)
        for i, j in T.Parallel(1, 64):
            x[i, j] = x[i, j] * T.if_then_else(j < k, W[j], T.float32(1))
        T.copy(x, Y[bx, 0])
"""


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_conditional_reads_in_t_parallel_are_not_read_ahead():
    low = str(tvm_ffi.get_global_func("tessel.codegen.Lower")(
        ir.IRModule({"gated": tessel.parse(GATED)}), "metal"))
    assert "W_vec" not in low and "x_local" in low
    assert "W_vec" in lowered(tile_text("rmsnorm"))
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((3, 64)).astype("float32"), rng.standard_normal(64).astype("float32")
    want = x * np.where(np.arange(64) < 37, w, 1).astype("float32")
    mod = tessel.build(GATED, target="metal")
    for order, seed in metal_emu.ORDERS:
        y = np.full_like(x, np.nan)
        with metal_emu.installed(order, seed):
            mod["gated"](*[metal_emu.as_metal(a) for a in (x, w, y)], 37)
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=order)


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_random_row_lengths_rows_and_thread_counts():
    # Seeded: every op at random row lengths, rows a block, thread counts and dtypes, through the
    # MSL harness (random order) and the CPU; whichever distribution and reduction the lowering
    # picks, the result is the op's.
    rng = np.random.default_rng(2027)
    for _ in range(16):
        op = str(rng.choice(OPS))
        m = int(rng.choice([8, 24, 40, 64, 96, 128, 200, 256, 384]))
        rows = int(rng.choice([1, 2, 3, 4]))
        threads = int(rng.choice([32, 64, 96, 128, 256]))
        dtype = str(rng.choice(["float32", "float16"]))
        m_rows = int(rng.integers(1, 9))
        where = f"{op} {dtype} {m_rows} x {m}, {rows} rows x {threads} threads"
        text = tile_text(op, m, rows, threads, dtype)
        ins = inputs(op, m_rows, m, dtype, seed=3)
        y = np.full_like(ins[0], np.nan)
        tessel.build(text, target="c")[bench.FILES[op]](*(tvm_ffi.from_dlpack(a)
                                                          for a in ins + [y]))
        check(op, ins, y, dtype, "c: " + where)
        y = np.full_like(ins[0], np.nan)
        with metal_emu.installed("random", 11):
            tessel.build(text, target="metal")[bench.FILES[op]](
                *[metal_emu.as_metal(a) for a in ins + [y]])
        check(op, ins, y, dtype, "metal: " + where)
