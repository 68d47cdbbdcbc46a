"""Cross-thread reductions (a reduce iterator bound to threadIdx) built for cuda -arch=sm_90 through
LowerCrossThreadReduction: the CUDA source has the shared-memory tree and its barriers on any
machine with NVRTC or nvcc; with torch and a CUDA device the kernels run and match NumPy."""

from __future__ import annotations


import numpy as np
import pytest
from conftest import gpu_torch, have_cuda_compiler

import tessel


pytestmark = pytest.mark.skipif(not have_cuda_compiler(), reason="no NVRTC or nvcc to build for cuda")


SUM_INIT = """
@T.prim_func
def sum_init(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
"""

MAX_NO_INIT = """
@T.prim_func
def max_no_init(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
    for i in T.thread_binding(8, thread="blockIdx.x"):
        for k in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = T.max(B[vi], A[vi, vk])
"""

# threadIdx.y is spatial (a row each), threadIdx.x reduces the row.
ROWS_2D = """
@T.prim_func
def rows_2d(A: T.Buffer((4, 8, 32), "float32"), B: T.Buffer((4, 8), "float32")):
    for b in T.thread_binding(4, thread="blockIdx.x"):
        for ty in T.thread_binding(8, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vb, vy, vx = T.axis.remap("SSR", [b, ty, tx])
                    with T.init():
                        B[vb, vy] = T.float32(1)
                    B[vb, vy] = B[vb, vy] + A[vb, vy, vx]
"""

# 100 threads: not a power of two.
ODD_COUNT = """
@T.prim_func
def odd_count(A: T.Buffer((3, 100), "int32"), B: T.Buffer((3,), "int32")):
    for i in T.thread_binding(3, thread="blockIdx.x"):
        for k in T.thread_binding(100, thread="threadIdx.x"):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi, vk]
"""

# A predicate: 45 of the 48 threads take part (the others contribute the identity of min).
PREDICATE = """
@T.prim_func
def predicate(A: T.Buffer((5, 45), "float32"), B: T.Buffer((5,), "float32")):
    for i in T.thread_binding(5, thread="blockIdx.x"):
        for k in T.thread_binding(48, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(5, i)
                vk = T.axis.reduce(45, k)
                T.where(k < 45)
                with T.init():
                    B[vi] = T.float32(0.5)
                B[vi] = T.min(A[vi, vk], B[vi])
"""

# Each of 32 threads first sums its part of the row in a serial loop (guarded: 250 of 256 elements).
SERIAL_PART = """
@T.prim_func
def serial_part(A: T.Buffer((4, 250), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k0 in T.thread_binding(32, thread="threadIdx.x"):
            for k1 in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(250, k0 * 8 + k1)
                    T.where(k0 * 8 + k1 < 250)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
"""

rng = np.random.default_rng(0)


def _case_sum_init():
    a = rng.standard_normal((8, 128)).astype("float32")
    b = rng.standard_normal(8).astype("float32")
    return SUM_INIT, "sum_init", [a, b], a.sum(axis=1)


def _case_max_no_init():
    a = rng.standard_normal((8, 64)).astype("float32")
    b = rng.standard_normal(8).astype("float32")
    return MAX_NO_INIT, "max_no_init", [a, b], np.maximum(b, a.max(axis=1))


def _case_rows_2d():
    a = rng.standard_normal((4, 8, 32)).astype("float32")
    b = np.zeros((4, 8), "float32")
    return ROWS_2D, "rows_2d", [a, b], 1 + a.sum(axis=2)


def _case_odd_count():
    a = rng.integers(-1000, 1000, (3, 100)).astype("int32")
    b = np.full(3, 7, "int32")
    return ODD_COUNT, "odd_count", [a, b], a.sum(axis=1)


def _case_predicate():
    a = (rng.standard_normal((5, 45)) + 3).astype("float32")
    a[1, 44] = -2.0  # the last contributing thread holds the minimum of row 1
    b = np.zeros(5, "float32")
    return PREDICATE, "predicate", [a, b], np.minimum(0.5, a.min(axis=1))


def _case_serial_part():
    a = rng.standard_normal((4, 250)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    return SERIAL_PART, "serial_part", [a, b], a.sum(axis=1)


CASES = {
    "sum_init": (_case_sum_init, 7),  # 128 threads: 1 + 7 steps + 1 barriers
    "max_no_init": (_case_max_no_init, 6),
    "rows_2d": (_case_rows_2d, 5),
    "odd_count": (_case_odd_count, 7),  # 100 -> 50 -> 25 -> 13 -> 7 -> 4 -> 2 -> 1
    "predicate": (_case_predicate, 6),  # 48 -> 24 -> 12 -> 6 -> 3 -> 2 -> 1
    "serial_part": (_case_serial_part, 5),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cross_thread_reduction(name):
    make, steps = CASES[name]
    text, func, args, expected = make()
    mod = tessel.build(text, target="cuda -arch=sm_90")
    cuda = mod.get_source("cuda")
    kernel = cuda[cuda.index(f"/* ---- {func}_kernel ---- */") :]
    # The tree: a barrier after the stores, one per halving step, one after the final write.
    assert kernel.count("__syncthreads()") == steps + 2, kernel
    assert "__shared__" in kernel and "B_red" in kernel, kernel
    torch = gpu_torch()
    if torch is None:
        pytest.skip("built for CUDA sm_90; not run: PyTorch with a CUDA device is not available")
    on_device = [torch.from_numpy(x.copy()).cuda() for x in args]
    mod[func](*on_device)
    torch.cuda.synchronize()
    got = on_device[1].cpu().numpy()
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, expected)


def test_unsupported_cross_thread_reduction_is_refused():
    text = SUM_INIT.replace("B[vi] = B[vi] + A[vi, vk]", "B[vi] = B[vi] - A[vi, vk]")
    with pytest.raises(ValueError, match="LowerCrossThreadReduction"):
        tessel.build(text, target="cuda -arch=sm_90")
