"""VectorizeLoop, UnrollLoop and LowerIntrinsics from Python, through the pass registry."""

import pytest
from conftest import needs_text

import tessel
from tessel import ir, transform

pytestmark = [
    needs_text,
    pytest.mark.skipif(
        "LowerIntrinsics" not in transform.list_passes(),
        reason="libtessel has no VectorizeLoop/UnrollLoop/LowerIntrinsics passes yet",
    ),
]


def run(name, text):
    mod = ir.IRModule({"f": tessel.parse(text)})
    return transform.get_pass(name)(mod)


def expect(name, before, after):
    got = run(name, before)
    want = ir.IRModule({"f": tessel.parse(after)})
    ir.assert_structural_equal(got, want, map_free_vars=True)
    assert transform.verify_well_formed(got) == []


def test_vectorize_loop():
    expect(
        "VectorizeLoop",
        '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.vectorized(4):
        B[i] = A[i * 2] + T.float32(1)
''',
        '''
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 2, 4)] + T.Broadcast(T.float32(1), 4)
''',
    )


def test_vectorize_loop_falls_back_to_serial():
    expect(
        "VectorizeLoop",
        '''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
    for i in T.vectorized(4):
        s[0] = s[0] + A[i]
''',
        '''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
    for i in range(4):
        s[0] = s[0] + A[i]
''',
    )


def test_unroll_loop():
    expect(
        "UnrollLoop",
        '''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), n: T.int32):
    for i in T.unroll(2):
        if n > 0:
            x: T.int32 = i + 1
            A[i] = x
''',
        '''
@T.prim_func
def f(A: T.Buffer((4,), "int32"), n: T.int32):
    if n > 0:
        x: T.int32 = 0 + 1
        A[0] = x
    if n > 0:
        x_1: T.int32 = 1 + 1
        A[1] = x_1
''',
    )


def test_lower_intrinsics():
    expect(
        "LowerIntrinsics",
        '''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float16")):
    for i in range(4):
        A[i] = T.round(A[i])
        B[i] = T.exp(B[i])
''',
        '''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float16")):
    for i in range(4):
        A[i] = T.call_pure_extern("float32", "nearbyintf", A[i])
        B[i] = T.Cast("float16", T.call_pure_extern("float32", "expf", T.Cast("float32", B[i])))
''',
    )


def test_unchanged_module_is_returned_as_is():
    mod = ir.IRModule({"f": tessel.parse('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in range(4):
        A[i] = i
''')})
    for name in ("VectorizeLoop", "UnrollLoop", "LowerIntrinsics"):
        assert transform.get_pass(name)(mod).same_as(mod), name


def test_vector_math_call_is_an_error():
    with pytest.raises(ValueError, match=r"vector call T\.exp"):
        run("LowerIntrinsics", '''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    A[T.Ramp(0, 1, 4)] = T.exp(A[T.Ramp(0, 1, 4)])
''')


@pytest.mark.parametrize("extent", [2, 7, 8, 64, 70, 130, 200])
def test_vectorized_loops_of_any_extent_build_and_run(extent):
    """Odd extents become power-of-two pieces (C has vector types of those sizes only); the built
    kernel matches NumPy."""
    import numpy as np
    import tvm_ffi

    mod = tessel.build(f"""
@T.prim_func
def axpy(A: T.Buffer(({extent},), "float32"), B: T.Buffer(({extent},), "float32")):
    T.func_attr({{"global_symbol": "axpy", "tir.noalias": True}})
    for i in T.vectorized({extent}):
        B[i] = A[i] * T.float32(2) + T.float32(1)
""", target="c")
    a = np.random.default_rng(extent).standard_normal(extent).astype("float32")
    b = np.zeros(extent, "float32")
    mod["axpy"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
    np.testing.assert_array_equal(b, a * np.float32(2) + np.float32(1))
