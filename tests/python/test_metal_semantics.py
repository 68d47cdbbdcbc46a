"""The scalar and vector semantics of the Metal code generator, run on the MSL harness against
NumPy in three thread orders: wrapping integer arithmetic and floor division of negative values in
every integer width, float16 rounded once per operation, math functions (exp, log, sqrt, tanh,
erf, sigmoid), selects and casts, and vectors of 3, 4 and 8 lanes (packed and lane by lane)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import metal_emu
import tessel

pytestmark = pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)

rng = np.random.default_rng(11)


def run(src, name, arrays, outputs, expected, rtol=0.0, atol=0.0):
    mod = tessel.build(src, target="metal")
    for order, seed in metal_emu.ORDERS:
        for i in outputs:
            arrays[i][...] = 0
        with metal_emu.installed(order, seed):
            mod[name](*[metal_emu.as_metal(a) for a in arrays])
        for i, want in zip(outputs, expected):
            np.testing.assert_allclose(arrays[i], want, rtol=rtol, atol=atol,
                                       err_msg=f"{name}, thread order {order}")


INT_OPS = """
@T.prim_func
def int_ops(A: T.Buffer((256,), "{t}"), B: T.Buffer((256,), "{t}"), S: T.Buffer((256,), "{t}"),
            P: T.Buffer((256,), "{t}"), D: T.Buffer((256,), "{t}"), M: T.Buffer((256,), "{t}"),
            X: T.Buffer((256,), "{t}")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            i = bx * 128 + tx
            S[i] = A[i] + B[i]
            P[i] = A[i] * B[i]
            D[i] = T.floordiv(A[i], B[i])
            M[i] = T.floormod(A[i], B[i])
            X[i] = T.max(A[i], B[i]) - T.min(A[i], B[i])
"""


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_integer_arithmetic_wraps_and_floor_divides(dtype):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, 256, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, 256, endpoint=True).astype(dtype)
    b[b == 0] = 3
    if info.min < 0:
        b[(a == info.min) & (b == -1)] = 7  # the one quotient that does not fit
    outs = [np.zeros(256, dtype) for _ in range(5)]
    with np.errstate(over="ignore"):
        want = [a + b, a * b, a // b, a % b, np.maximum(a, b) - np.minimum(a, b)]
    run(INT_OPS.replace("{t}", dtype), "int_ops", [a, b, *outs], [2, 3, 4, 5, 6], want)


HALF_OPS = """
@T.prim_func
def half_ops(A: T.Buffer((256,), "float16"), B: T.Buffer((256,), "float16"),
             C: T.Buffer((256,), "float16"), D: T.Buffer((256,), "float16")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            i = bx * 128 + tx
            C[i] = A[i] * B[i] + A[i]
            D[i] = A[i] / B[i] - T.float16(0.1)
"""


def test_float16_rounds_once_per_operation():
    a = rng.uniform(-4, 4, 256).astype("float16")
    b = rng.uniform(0.5, 4, 256).astype("float16")
    c, d = np.zeros(256, "float16"), np.zeros(256, "float16")
    # NumPy's float16 operations round each result once, as the IR does.
    want_c = (a * b) + a
    want_d = (a / b) - np.float16(0.1)
    run(HALF_OPS, "half_ops", [a, b, c, d], [2, 3], [want_c, want_d])


MATH = """
@T.prim_func
def math_ops(A: T.Buffer((256,), "float32"), E: T.Buffer((256,), "float32"),
             L: T.Buffer((256,), "float32"), Q: T.Buffer((256,), "float32"),
             H: T.Buffer((256,), "float32"), R: T.Buffer((256,), "float32"),
             G: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            i = bx * 128 + tx
            E[i] = T.exp(A[i])
            L[i] = T.log(T.fabs(A[i]) + T.float32(1))
            Q[i] = T.sqrt(T.fabs(A[i]))
            H[i] = T.tanh(A[i])
            R[i] = T.erf(A[i])
            G[i] = T.sigmoid(A[i])
"""


def test_math_functions():
    a = rng.uniform(-4, 4, 256).astype("float32")
    outs = [np.zeros(256, "float32") for _ in range(6)]
    erf = np.vectorize(math.erf)(a.astype(np.float64))
    want = [np.exp(a), np.log(np.abs(a) + 1), np.sqrt(np.abs(a)), np.tanh(a), erf,
            1 / (1 + np.exp(-a))]
    run(MATH, "math_ops", [a, *outs], [1, 2, 3, 4, 5, 6], want, rtol=2e-6, atol=2e-7)


SELECT_CAST = """
@T.prim_func
def select_cast(A: T.Buffer((256,), "float32"), I: T.Buffer((256,), "int32"),
                U: T.Buffer((256,), "uint8"), F: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            i = bx * 128 + tx
            I[i] = T.Cast("int32", A[i] * T.float32(10))
            U[i] = T.Cast("uint8", T.Select(A[i] > T.float32(0), A[i] * T.float32(20), T.float32(0)))
            F[i] = T.if_then_else(i % 3 == 0, T.Cast("float32", i), A[i])
"""


def test_selects_and_casts():
    a = rng.uniform(-6, 6, 256).astype("float32")
    i_out, u_out, f_out = np.zeros(256, "int32"), np.zeros(256, "uint8"), np.zeros(256, "float32")
    idx = np.arange(256)
    want_i = np.trunc(a * np.float32(10)).astype("int32")
    want_u = np.where(a > 0, a * np.float32(20), 0).astype("uint8")
    want_f = np.where(idx % 3 == 0, idx.astype("float32"), a)
    run(SELECT_CAST, "select_cast", [a, i_out, u_out, f_out], [1, 2, 3], [want_i, want_u, want_f])


VECTORS = """
@T.prim_func
def vectors(A: T.Buffer((1536,), "float32"), B: T.Buffer((1536,), "float32"),
            C: T.Buffer((1536,), "float32"), D: T.Buffer((1536,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for v in T.vectorized(3):
                B[(bx * 32 + tx) * 3 + v] = A[(bx * 32 + tx) * 3 + v] * T.float32(2)
            for v in T.vectorized(4):
                C[(bx * 32 + tx) * 4 + v] = A[(bx * 32 + tx) * 4 + v] + T.float32(1)
            for v in T.vectorized(8):
                D[(bx * 32 + tx) * 8 + v] = A[(bx * 32 + tx) * 8 + v] - A[(bx * 32 + tx) * 8 + 7 - v]
"""


def test_vectors_of_3_4_and_8_lanes():
    src = VECTORS
    msl = tessel.build(src, target="metal").get_source("metal")
    # VectorizeLoop splits 3 lanes into 2 + 1; 8 lanes are stored lane by lane.
    assert "packed_float2" in msl and "packed_float4" in msl and "float tsl_s5[8];" in msl
    a = rng.standard_normal(1536).astype("float32")
    b, c, d = (np.zeros(1536, "float32") for _ in range(3))
    want_b = np.zeros(1536, "float32")
    want_b[:192] = a[:192] * 2
    want_c = np.zeros(1536, "float32")
    want_c[:256] = a[:256] + 1
    groups = a[:512].reshape(64, 8)
    want_d = np.zeros(1536, "float32")
    want_d[:512] = (groups - groups[:, ::-1]).reshape(-1)
    run(src, "vectors", [a, b, c, d], [1, 2, 3], [want_b, want_c, want_d])
