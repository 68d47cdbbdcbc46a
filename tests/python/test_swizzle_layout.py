"""SwizzleLayout (include/tessel/transform/swizzle_layout.h): a buffer allocated with
`tessel.swizzle_bytes` is indexed logically and stored swizzled; results are those of the plain
layout, the lowered accesses carry the XOR, vector accesses inside a chunk stay vectors, and a wgmma
descriptor must agree with the layout."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi

import tessel

# Writes A into a swizzled scratch buffer, then reads it back transposed: right only if every
# access goes through the same layout.
ROUNDTRIP = """
@T.prim_func
def roundtrip(A: T.Buffer((64, 64), "DTYPE"), B: T.Buffer((64, 64), "DTYPE")):
    T.func_attr({"global_symbol": "roundtrip"})
    s_data = T.allocate([4096], "DTYPE", "global", annotations={"tessel.swizzle_bytes": SWIZZLE})
    s = T.decl_buffer((4096,), "DTYPE", data=s_data)
    for i, j in T.grid(64, 64):
        s[i * 64 + j] = A[i, j]
    for i, j in T.grid(64, 64):
        B[i, j] = s[j * 64 + i]
"""


def roundtrip(dtype, swizzle):
    return ROUNDTRIP.replace("DTYPE", dtype).replace("SWIZZLE", str(swizzle))


def lower(text, target="c"):
    mod = tessel.parse(text)
    if not hasattr(mod, "functions"):
        mod = tessel.ir.IRModule({"main": mod})
    return tvm_ffi.get_global_func("tessel.codegen.Lower")(mod, target)


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "float64"])
@pytest.mark.parametrize("swizzle", [32, 64, 128])
def test_results_are_those_of_the_plain_layout(dtype, swizzle):
    a = (np.arange(4096) % 101).reshape(64, 64).astype(dtype)
    b = np.zeros_like(a)
    tessel.build(roundtrip(dtype, swizzle))["roundtrip"](*(tvm_ffi.from_dlpack(x) for x in (a, b)))
    np.testing.assert_array_equal(b, a.T)


def test_the_lowered_accesses_carry_the_xor_of_the_row_into_the_chunk():
    text = str(lower(roundtrip("float16", 128)))
    # float16: 8 elements a chunk, 64 a 128-byte row: f ^ ((f >> 6 & 7) << 3).
    assert "s[i * 64 + j ^ (i * 64 + j >> 6 & 7) << 3] = A_1[i * 64 + j]" in text, text


def test_a_store_is_a_permutation_of_the_buffer():
    # Every logical index lands on a distinct physical one, inside the buffer.
    for e, shift in ((2, 6), (4, 5), (1, 7)):
        for swizzle in (32, 64, 128):
            mask = swizzle // 16 - 1
            f = np.arange(4096 // e * 4)
            phys = f ^ (((f >> shift) & mask) << (4 - int(np.log2(e))))
            assert sorted(phys) == list(f)


def test_a_vector_access_inside_a_chunk_stays_a_vector():
    text = """
@T.prim_func
def vec(A: T.Buffer((1024,), "float16"), B: T.Buffer((1024,), "float16")):
    T.func_attr({"global_symbol": "vec"})
    s_data = T.allocate([1024], "float16", "global", annotations={"tessel.swizzle_bytes": 128})
    s = T.decl_buffer((1024,), "float16", data=s_data)
    for i in range(128):
        s[T.Ramp(i * 8, 1, 8)] = A[T.Ramp(i * 8, 1, 8)]
    for i in range(1024):
        B[i] = s[i]
"""
    a = np.arange(1024).astype("float16")
    b = np.zeros_like(a)
    mod = tessel.build(text)
    mod["vec"](*(tvm_ffi.from_dlpack(x) for x in (a, b)))
    np.testing.assert_array_equal(a, b)
    assert "tsl_vstore_f16x8(s_data + " in mod.get_source()


def test_a_loop_vectorized_after_the_pass_is_right_lane_by_lane():
    # VectorizeLoop runs after SwizzleLayout and cannot see through the XOR, so such a loop is
    # emitted per lane; the values are still right.
    text = """
@T.prim_func
def vec(A: T.Buffer((1024,), "float16"), B: T.Buffer((1024,), "float16")):
    T.func_attr({"global_symbol": "vec"})
    s_data = T.allocate([1024], "float16", "global", annotations={"tessel.swizzle_bytes": 64})
    s = T.decl_buffer((1024,), "float16", data=s_data)
    for i in range(128):
        for v in T.vectorized(8):
            s[i * 8 + v] = A[i * 8 + v]
    for i in range(1024):
        B[1023 - i] = s[i]
"""
    a = np.arange(1024).astype("float16")
    b = np.zeros_like(a)
    tessel.build(text)["vec"](*(tvm_ffi.from_dlpack(x) for x in (a, b)))
    np.testing.assert_array_equal(b, a[::-1])


def test_a_vector_access_across_chunks_is_refused():
    text = """
@T.prim_func
def vec(A: T.Buffer((1024,), "float16")):
    T.func_attr({"global_symbol": "vec"})
    s_data = T.allocate([1024], "float16", "global", annotations={"tessel.swizzle_bytes": 128})
    s = T.decl_buffer((1024,), "float16", data=s_data)
    for i in range(64):
        s[T.Ramp(i * 16, 1, 16)] = A[T.Ramp(i * 16, 1, 16)]
"""
    with pytest.raises(ValueError, match=r"SwizzleLayout: function 'vec': a vector access of s "
                                         r"that does not lie in one 16-byte chunk"):
        tessel.build(text)


@pytest.mark.parametrize("swizzle,message", [
    (24, r"tessel.swizzle_bytes must be 32, 64 or 128"),
])
def test_bad_swizzle_is_refused(swizzle, message):
    with pytest.raises(ValueError, match=message):
        tessel.build(roundtrip("float32", swizzle))


WGMMA_DESC = """
@T.prim_func
def desc(D: T.Buffer((1,), "uint64")):
    T.func_attr({"global_symbol": "desc", "target": "cuda"})
    threadIdx_x = T.int32()
    with T.attr(threadIdx_x, "thread_extent", 128):
        a_data = T.allocate([8192], "float16", "shared", annotations={"tessel.swizzle_bytes": 128})
        a_s = T.decl_buffer((8192,), "float16", data=a_data, scope="shared")
        a_s[threadIdx_x] = T.float16(0)
        if threadIdx_x == 0:
            D[0] = T.ptx_wgmma_desc(T.address_of(a_s[0]), 16, 1024, MODE, dtype="uint64")
"""


def test_a_wgmma_descriptor_must_name_the_buffers_swizzle():
    with pytest.raises(ValueError, match=r"ptx_wgmma_desc of a_s says swizzle 64, but the buffer is "
                                         r"allocated with tessel.swizzle_bytes 128"):
        tessel.build(WGMMA_DESC.replace("MODE", "64"), target="cuda -arch=sm_90a")
    src = tessel.build(WGMMA_DESC.replace("MODE", "128"), target="cuda -arch=sm_90a").get_source(
        "cuda")
    assert "__shared__ __align__(1024) uint16_t a_data[8192];" in src


# Four "stages" of 1024 elements (a multiple of every atom for 2-byte elements), written with the
# stage as one term and read back transposed: the stage's term is added outside the XOR.
STAGED = """
@T.prim_func
def staged(A: T.Buffer((4, 32, 32), "float16"), B: T.Buffer((4, 32, 32), "float16")):
    T.func_attr({"global_symbol": "staged"})
    s_data = T.allocate([4096], "float16", "global", annotations={"tessel.swizzle_bytes": SWIZZLE})
    s = T.decl_buffer((4096,), "float16", data=s_data)
    for k, i, j in T.grid(4, 32, 32):
        s[k * 1024 + i * 32 + j] = A[k, i, j]
    for k, i, j in T.grid(4, 32, 32):
        B[k, i, j] = s[k * 1024 + j * 32 + i]
"""


@pytest.mark.parametrize("swizzle", [32, 64, 128])
def test_a_term_of_whole_atoms_stays_outside_the_xor(swizzle):
    text = STAGED.replace("SWIZZLE", str(swizzle))
    lowered = str(lower(text))
    assert "s[k * 1024 + (" in lowered, lowered
    a = (np.arange(4096) % 251).reshape(4, 32, 32).astype("float16")
    b = np.zeros_like(a)
    tessel.build(text)["staged"](*(tvm_ffi.from_dlpack(x) for x in (a, b)))
    np.testing.assert_array_equal(b, a.transpose(0, 2, 1))
