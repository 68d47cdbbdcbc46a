"""Buffer schedule primitives (set_scope, storage_align, reindex, transform_layout): the IR after
each, each refusal with its message, the trace replayed from Python and from JSON to a structurally
equal module, and the scheduled programs run through the C backend against NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm_ffi

import tessel
from tessel import ir

TWO = """
@T.prim_func
def two(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
    T.func_attr({"global_symbol": "two"})
    B = T.alloc_buffer((16, 12), "float32")
    for i, j in T.grid(16, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

rng = np.random.default_rng(11)


def replays(sch, src):
    """The trace, printed as Python and as JSON, replays onto a fresh schedule to an equal module;
    the scheduled module also survives printing and parsing."""
    fresh = tessel.Schedule(src)
    exec(sch.trace.as_python(), {"sch": fresh})  # noqa: S102
    ir.assert_structural_equal(fresh.mod, sch.mod)
    again = tessel.Schedule.from_json(src, sch.trace.as_json())
    ir.assert_structural_equal(again.mod, sch.mod)
    ir.assert_structural_equal(tessel.parse(tessel.as_text(sch.mod)), sch.mod)


def text(sch):
    return tessel.as_text(sch.mod)


def run(mod, name, *arrays):
    tessel.build(mod)[name](*(tvm_ffi.from_dlpack(x) for x in arrays))


def run_two(mod):
    a = rng.standard_normal((16, 12)).astype("float32")
    c = np.full((16, 12), np.nan, "float32")
    run(mod, "two", a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


# ---- set_scope ----

def test_set_scope_changes_the_buffer_everywhere():
    sch = tessel.Schedule(TWO)
    sch.set_scope(sch.get_block("B"), 0, "local")
    t = text(sch)
    assert 'B = T.sblock_alloc_buffer((16, 12), "float32", scope="local")' in t
    # The consumer reads the same (re-scoped) buffer: no second declaration, no "global" B.
    assert t.count("sblock_alloc_buffer") == 1
    assert 'sch.set_scope(block=b0, buffer_index=0, storage_scope="local")' in sch.trace.as_python()
    lowered = tessel.as_text(tessel.lower(sch.mod))
    assert re.search(r'B = T.allocate\(\[192\], "float32", "local"\)', lowered)
    run_two(sch.mod)
    replays(sch, TWO)


def test_set_scope_to_the_same_scope_changes_nothing():
    sch = tessel.Schedule(TWO)
    before = sch.mod
    sch.set_scope(sch.get_block("B"), 0, "global")
    ir.assert_structural_equal(sch.mod, before)
    replays(sch, TWO)


@pytest.mark.parametrize("block,index,scope,message", [
    ("C", 0, "local", "C is a parameter of the function; only a buffer the function allocates"),
    ("B", 1, "local", r'buffer index 1 is out of range: block "B" writes 1 buffer'),
    ("B", -1, "local", r'buffer index -1 is out of range'),
    ("B", 0, "texture", r'unknown storage scope "texture"'),
    ("B", 0, "shared.", r'unknown storage scope "shared."'),
])
def test_set_scope_refusals(block, index, scope, message):
    sch = tessel.Schedule(TWO)
    before = sch.mod
    with pytest.raises(tessel.ScheduleError, match="set_scope: " + message):
        sch.set_scope(sch.get_block(block), index, scope)
    ir.assert_structural_equal(sch.mod, before)


def test_set_scope_error_marks_the_block():
    sch = tessel.Schedule(TWO)
    with pytest.raises(tessel.ScheduleError) as err:
        sch.set_scope(sch.get_block("C"), 0, "shared")
    assert re.search(r'with T.sblock\("C"\):\n\s*\^+', str(err.value))


# ---- storage_align ----

def test_storage_align_is_an_annotation_that_pads_the_allocation():
    sch = tessel.Schedule(TWO)
    b = sch.get_block("B")
    sch.storage_align(b, 0, 0, 16, 3)
    t = text(sch)
    assert 'T.sblock_attr({"buffer_dim_align": [[0, 0, 16, 3]]})' in t
    assert "sch.storage_align(block=b0, buffer_index=0, axis=0, factor=16, offset=3)" in (
        sch.trace.as_python())
    lowered = tessel.as_text(tessel.lower(sch.mod))
    # Row stride 12 becomes 19 (the smallest >= 12 that is 3 mod 16): 15 * 19 + 12 elements.
    assert "T.allocate([297]" in lowered
    assert "B_1[i * 19 + j] = " in lowered and "B_1[i_1 * 19 + j_1]" in lowered
    run_two(sch.mod)
    replays(sch, TWO)


def test_storage_align_again_on_the_same_axis_replaces_the_entry():
    sch = tessel.Schedule(TWO)
    b = sch.get_block("B")
    sch.storage_align(b, 0, 0, 16, 3)
    sch.storage_align(b, 0, 0, 8, 0)
    sch.storage_align(b, 0, 1, 4, 1)
    t = text(sch)
    assert '"buffer_dim_align": [[0, 0, 8, 0], [0, 1, 4, 1]]' in t
    lowered = tessel.as_text(tessel.lower(sch.mod))
    # Axis 1: stride 1 -> 1 (1 mod 4); axis 0: natural 12 -> 16 (0 mod 8).
    assert "T.allocate([252]" in lowered and "B_1[i * 16 + j]" in lowered
    run_two(sch.mod)
    replays(sch, TWO)


def test_storage_align_with_set_scope_and_a_three_dim_buffer():
    src = """
@T.prim_func
def three(A: T.Buffer((4, 5, 6), "float32"), C: T.Buffer((4, 5, 6), "float32")):
    T.func_attr({"global_symbol": "three"})
    B = T.alloc_buffer((4, 5, 6), "float32")
    for i, j, k in T.grid(4, 5, 6):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(3)
    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[vi, vj, vk] * T.float32(2)
"""
    sch = tessel.Schedule(src)
    b = sch.get_block("B")
    sch.storage_align(b, 0, 1, 8, 1)  # 6 -> 9
    sch.storage_align(b, 0, 0, 32, 0)  # 9 * 5 = 45 -> 64
    sch.set_scope(b, 0, "local")
    lowered = tessel.as_text(tessel.lower(sch.mod))
    assert "T.allocate([234]" in lowered  # 3 * 64 + 4 * 9 + 5 + 1
    assert "i * 64 + j * 9 + k" in lowered
    a = rng.standard_normal((4, 5, 6)).astype("float32")
    c = np.full((4, 5, 6), np.nan, "float32")
    run(sch.mod, "three", a, c)
    np.testing.assert_allclose(c, (a + 3) * 2, rtol=1e-6)
    replays(sch, src)


@pytest.mark.parametrize("block,args,message", [
    ("C", (0, 0, 16, 1), "C is a parameter of the function"),
    ("B", (1, 0, 16, 1), "buffer index 1 is out of range"),
    ("B", (0, 2, 16, 1), "axis 2 is out of range: B has 2 dimensions"),
    ("B", (0, -1, 16, 1), "axis -1 is out of range"),
    ("B", (0, 0, 0, 0), "factor 0 is not positive"),
    ("B", (0, 0, 16, 16), r"offset 16 is not in \[0, factor\) = \[0, 16\)"),
    ("B", (0, 0, 16, -1), r"offset -1 is not in \[0, factor\)"),
])
def test_storage_align_refusals(block, args, message):
    sch = tessel.Schedule(TWO)
    before = sch.mod
    with pytest.raises(tessel.ScheduleError, match="storage_align: " + message):
        sch.storage_align(sch.get_block(block), *args)
    ir.assert_structural_equal(sch.mod, before)


def test_storage_align_refuses_a_disagreeing_writer():
    src = """
@T.prim_func
def twice(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "twice"})
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B0"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    for i, j in T.grid(8, 8):
        with T.block("B1"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = B[vi, vj] + A[vi, vj]
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj]
"""
    sch = tessel.Schedule(src)
    sch.storage_align(sch.get_block("B0"), 0, 0, 16, 1)
    sch.storage_align(sch.get_block("B1"), 0, 0, 16, 1)  # the same: fine
    with pytest.raises(tessel.ScheduleError,
                       match='block "B0" already aligns axis 0 of B to factor 16, offset 1'):
        sch.storage_align(sch.get_block("B1"), 0, 0, 16, 2)
    a = rng.standard_normal((8, 8)).astype("float32")
    c = np.full((8, 8), np.nan, "float32")
    run(sch.mod, "twice", a, c)
    np.testing.assert_allclose(c, 2 * a, rtol=1e-6)
    assert "T.allocate([127]" in tessel.as_text(tessel.lower(sch.mod))  # 7 * 17 + 7 + 1
