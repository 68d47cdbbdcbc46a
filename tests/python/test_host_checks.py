"""The host wrapper's argument checks: a table of bad calls into kernels built for the CPU, each with
the exact error kind and message, and the process alive afterwards (a good call still works)."""

import numpy as np
import pytest
import tvm_ffi


def _mod(name):
    from tessel.examples_cpu import EXAMPLES_CPU, build_example

    return build_example(next(e for e in EXAMPLES_CPU if e.name == name))[0][name]


def f32(*shape):
    return np.zeros(shape, "float32")


def t(a):
    return tvm_ffi.from_dlpack(a) if isinstance(a, np.ndarray) else a


def misaligned_f32(n):
    raw = np.zeros(4 * n + 8, "uint8")
    return raw[1:1 + 4 * n].view("float32")


A8, B8, C8 = f32(8), f32(8), f32(8)
I5 = np.zeros(5, "int64")

# (function, arguments, error kind, exact message)
BAD_CALLS = [
    # argument count
    ("vector_add", [], TypeError, "vector_add: expected 3 arguments, got 0"),
    ("vector_add", [A8, B8], TypeError, "vector_add: expected 3 arguments, got 2"),
    ("vector_add", [A8, B8, C8, C8], TypeError, "vector_add: expected 3 arguments, got 4"),
    ("take_fill", [f32(2, 2)], TypeError, "take_fill: expected 4 arguments, got 1"),
    # a non-tensor where a tensor is due
    ("vector_add", [None, B8, C8], TypeError, "vector_add: A: expected a tensor, got None"),
    ("vector_add", [1, B8, C8], TypeError, "vector_add: A: expected a tensor, got int"),
    ("vector_add", [A8, 1.5, C8], TypeError, "vector_add: B: expected a tensor, got float"),
    ("vector_add", [A8, B8, "C"], TypeError, "vector_add: C: expected a tensor, got str"),
    ("vector_add", [A8, B8, True], TypeError, "vector_add: C: expected a tensor, got bool"),
    ("vector_add", [A8, B8, b"xy"], TypeError, "vector_add: C: expected a tensor, got bytes"),
    ("matmul", [None, f32(2, 2), f32(2, 2)], TypeError, "matmul: A: expected a tensor, got None"),
    ("softmax_row", [f32(2, 2), None], TypeError, "softmax_row: B: expected a tensor, got None"),
    # ndim
    ("vector_add", [f32(2, 4), B8, C8], ValueError, "vector_add: A.ndim: expected 1, got 2"),
    ("vector_add", [np.zeros((), "float32"), B8, C8], ValueError,
     "vector_add: A.ndim: expected 1, got 0"),
    ("matmul", [f32(4), f32(4, 4), f32(4, 4)], ValueError, "matmul: A.ndim: expected 2, got 1"),
    ("softmax_row", [f32(2, 2, 2), f32(2, 2)], ValueError,
     "softmax_row: A.ndim: expected 2, got 3"),
    ("take_fill", [np.zeros((3, 2), "int32"), np.zeros((5, 1), "int64"), 0,
                   np.zeros((5, 2), "int32")], ValueError,
     "take_fill: indices.ndim: expected 1, got 2"),
    # dtype
    ("vector_add", [A8.astype("float16"), B8, C8], TypeError,
     "vector_add: A.dtype: expected float32, got float16"),
    ("vector_add", [A8, B8.astype("float64"), C8], TypeError,
     "vector_add: B.dtype: expected float32, got float64"),
    ("vector_add", [A8, B8, C8.astype("int32")], TypeError,
     "vector_add: C.dtype: expected float32, got int32"),
    ("vector_add", [A8.astype("uint8"), B8, C8], TypeError,
     "vector_add: A.dtype: expected float32, got uint8"),
    ("vector_add", [A8.astype("bool"), B8, C8], TypeError,
     "vector_add: A.dtype: expected float32, got bool"),
    ("matmul", [f32(2, 2).astype("int8"), f32(2, 2), f32(2, 2)], TypeError,
     "matmul: A.dtype: expected float32, got int8"),
    ("take_gather", [f32(3, 2), np.zeros(5, "float32"), f32(5, 2)], TypeError,
     "take_gather: indices.dtype: expected int32, got float32"),
    ("take_fill", [np.zeros((3, 2), "int32"), np.zeros(5, "int32"), 0,
                   np.zeros((5, 2), "int32")], TypeError,
     "take_fill: indices.dtype: expected int64, got int32"),
    ("take_fill", [np.zeros((3, 2), "float32"), I5, 0, np.zeros((5, 2), "int32")], TypeError,
     "take_fill: A.dtype: expected int32, got float32"),
    # shapes: symbolic sizes bound by their first use, checked at every later one
    ("vector_add", [A8, f32(7), C8], ValueError,
     "vector_add: B.shape[0]: expected n = 8 (from A.shape[0]), got 7"),
    ("vector_add", [A8, B8, f32(9)], ValueError,
     "vector_add: C.shape[0]: expected n = 8 (from A.shape[0]), got 9"),
    ("matmul", [f32(2, 3), f32(4, 5), f32(2, 5)], ValueError,
     "matmul: B.shape[0]: expected K = 3 (from A.shape[1]), got 4"),
    ("matmul", [f32(2, 3), f32(3, 5), f32(3, 5)], ValueError,
     "matmul: C.shape[0]: expected M = 2 (from A.shape[0]), got 3"),
    ("matmul", [f32(2, 3), f32(3, 5), f32(2, 4)], ValueError,
     "matmul: C.shape[1]: expected N = 5 (from B.shape[1]), got 4"),
    ("softmax_row", [f32(2, 3), f32(2, 4)], ValueError,
     "softmax_row: B.shape[1]: expected m = 3 (from A.shape[1]), got 4"),
    ("take_gather", [f32(3, 2), np.zeros(5, "int32"), f32(4, 2)], ValueError,
     "take_gather: B.shape[0]: expected k = 5 (from indices.shape[0]), got 4"),
    ("take_fill", [np.zeros((3, 2), "int32"), I5, 0, np.zeros((5, 3), "int32")], ValueError,
     "take_fill: B.shape[1]: expected m = 2 (from A.shape[1]), got 3"),
    # strides: compact unless the buffer declares strides
    ("vector_add", [f32(16)[::2], B8, C8], ValueError,
     "vector_add: A.strides[0]: expected 1 (compact), got 2"),
    ("vector_add", [A8, B8, f32(24)[::3]], ValueError,
     "vector_add: C.strides[0]: expected 1 (compact), got 3"),
    ("matmul", [f32(2, 6)[:, :3], f32(3, 5), f32(2, 5)], ValueError,
     "matmul: A.strides[0]: expected 3 (compact), got 6"),
    ("softmax_row", [f32(2, 3), f32(2, 6)[:, ::2]], ValueError,
     "softmax_row: B.strides[1]: expected 1 (compact), got 2"),
    # scalar parameters
    ("take_fill", [np.zeros((3, 2), "int32"), I5, 1.5, np.zeros((5, 2), "int32")], TypeError,
     "take_fill: fill_value: expected int, got float"),
    ("take_fill", [np.zeros((3, 2), "int32"), I5, None, np.zeros((5, 2), "int32")], TypeError,
     "take_fill: fill_value: expected int, got None"),
    ("take_fill", [np.zeros((3, 2), "int32"), I5, "7", np.zeros((5, 2), "int32")], TypeError,
     "take_fill: fill_value: expected int, got str"),
    ("take_fill", [np.zeros((3, 2), "int32"), I5, f32(2), np.zeros((5, 2), "int32")], TypeError,
     "take_fill: fill_value: expected int, got ffi.Tensor"),
    ("take_fill", [np.zeros((3, 2), "int32"), I5, 2**32, np.zeros((5, 2), "int32")], ValueError,
     "take_fill: fill_value: expected an int32 value, got 4294967296"),
    ("take_fill", [np.zeros((3, 2), "int32"), I5, -2**31 - 1, np.zeros((5, 2), "int32")],
     ValueError, "take_fill: fill_value: expected an int32 value, got -2147483649"),
    # Past int64 tvm-ffi passes an ffi.BigInt object; the caller passed an int (found by
    # test_fuzz_host.py, where it read "expected int, got ffi.BigInt").
    ("take_fill", [np.zeros((3, 2), "int32"), I5, 2**64, np.zeros((5, 2), "int32")], ValueError,
     "take_fill: fill_value: expected an int32 value, got an int outside int64"),
    ("take_fill", [np.zeros((3, 2), "int32"), I5, -2**63 - 1, np.zeros((5, 2), "int32")],
     ValueError, "take_fill: fill_value: expected an int32 value, got an int outside int64"),
    ("vector_add", [2**70, B8, C8], TypeError,
     "vector_add: A: expected a tensor, got int outside int64"),
]


@pytest.mark.parametrize("name,args,kind,message", BAD_CALLS,
                         ids=[f"{i:02d}-{c[0]}" for i, c in enumerate(BAD_CALLS)])
def test_bad_call(name, args, kind, message):
    func = _mod(name)
    with pytest.raises(kind) as info:
        func(*[t(a) for a in args])
    assert str(info.value) == message
    # The process survives and the function still works.
    a, b, c = np.ones(8, "float32"), np.ones(8, "float32"), f32(8)
    _mod("vector_add")(t(a), t(b), t(c))
    assert (c == 2).all()


def test_table_is_large_enough():
    assert len(BAD_CALLS) >= 40


def test_misaligned_data():
    a = misaligned_f32(8)
    if a.ctypes.data % 4 == 0:
        pytest.skip("numpy aligned the view; cannot build a misaligned float32 array here")
    try:
        ta = tvm_ffi.from_dlpack(a)
    except Exception as err:  # tvm-ffi may itself refuse a misaligned export
        pytest.skip(f"tvm_ffi.from_dlpack refuses a misaligned array: {err}")
    with pytest.raises(ValueError) as info:
        _mod("vector_add")(ta, t(B8), t(C8))
    assert str(info.value).startswith("vector_add: A.data: expected 4-byte alignment, got address 0x")


def test_bool_is_accepted_for_an_int_scalar():
    a = np.arange(6, dtype="int32").reshape(3, 2)
    idx = np.array([0, 5, -1, 2, 1], "int64")
    b = np.zeros((5, 2), "int32")
    _mod("take_fill")(t(a), t(idx), True, t(b))
    assert b[1].tolist() == [1, 1] and b[0].tolist() == [0, 1]


def test_zero_size_tensors_are_fine():
    a, b, c = f32(0), f32(0), f32(0)
    _mod("vector_add")(t(a), t(b), t(c))


# Element count and byte size (docs/codegen.md, "The host wrapper"): a stride-0 view has a huge
# shape and no memory; the count is checked right after the shapes, before the strides.
def _symbolic_shape():
    import pathlib

    import tessel

    root = pathlib.Path(__file__).resolve().parents[2]
    return tessel.build(root / "examples" / "symbolic_shape.py")["symbolic_shape"]


def test_too_many_elements_for_int32_indices_is_refused():
    from numpy.lib.stride_tricks import as_strided

    f = _symbolic_shape()
    big = as_strided(np.zeros(1, "float32"), shape=(65536, 65536), strides=(0, 0))
    s = as_strided(np.zeros(1, "float32"), shape=(65536,), strides=(0,))
    with pytest.raises(ValueError) as info:
        f(t(big), t(s), t(big))
    assert str(info.value) == (
        "symbolic_shape: A.shape: expected at most 2147483647 elements (int32 indices), "
        "got 65536 * 65536 = 4294967296"
    )
    # One past the limit on the last buffer: A and s pass, B is named.
    a = as_strided(np.zeros(1, "float32"), shape=(2, 1073741824), strides=(0, 0))
    s2 = as_strided(np.zeros(1, "float32"), shape=(2,), strides=(0,))
    with pytest.raises(ValueError) as info:
        f(t(a), t(s2), t(a))
    assert str(info.value) == (
        "symbolic_shape: A.shape: expected at most 2147483647 elements (int32 indices), "
        "got 2 * 1073741824 = 2147483648"
    )


def test_legal_symbolic_shape_calls_still_work():
    f = _symbolic_shape()
    a = np.arange(15, dtype="float32").reshape(3, 5)
    s = np.array([1, 2, 3], "float32")
    b = np.zeros((3, 5), "float32")
    f(t(a), t(s), t(b))
    np.testing.assert_array_equal(b, a * s[:, None])
    # Zero elements: any other extent is fine.
    from numpy.lib.stride_tricks import as_strided

    z = as_strided(np.zeros(1, "float32"), shape=(0, 2147483647), strides=(0, 0))
    f(t(z), t(np.zeros(0, "float32")), t(z))
