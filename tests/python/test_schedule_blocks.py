"""Schedule primitives that create or remove blocks: reverse_compute_inline, rfactor, blockize.
For each: the IR after it (against expected text, structurally), each refusal with its message,
the trace replayed as Python and as JSON to an equal module, and results against NumPy through
the C backend."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi

import tessel
from tessel import ir

rng = np.random.default_rng(11)


def replays(sch, src):
    """The trace, printed as Python and as JSON, replays onto a fresh schedule to an equal module."""
    fresh = tessel.Schedule(src)
    exec(sch.trace.as_python(), {"sch": fresh})  # noqa: S102
    ir.assert_structural_equal(fresh.mod, sch.mod)
    again = tessel.Schedule.from_json(src, sch.trace.as_json())
    ir.assert_structural_equal(again.mod, sch.mod)


def same_as(sch, expected):
    ir.assert_structural_equal(sch.mod, tessel.Schedule(expected).mod)


def run(mod, name, *arrays):
    tessel.build(mod)[name](*(tvm_ffi.from_dlpack(x) for x in arrays))


# ---- reverse_compute_inline ----

PRODUCER_CONSUMER = """
@T.prim_func
def pc(A: T.Buffer((16, 12), "float32"), C: T.Buffer((12, 16), "float32")):
    T.func_attr({"global_symbol": "pc"})
    B = T.alloc_buffer((16, 12), "float32")
    for i, j in T.grid(16, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(12, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] + T.float32(1)
"""

PRODUCER_CONSUMER_INLINED = """
@T.prim_func
def pc(A: T.Buffer((16, 12), "float32"), C: T.Buffer((12, 16), "float32")):
    T.func_attr({"global_symbol": "pc"})
    with T.block("root"):
        for i, j in T.grid(16, 12):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vj, vi] = A[vi, vj] * T.float32(2) + T.float32(1)
"""


def run_pc(mod):
    a = rng.standard_normal((16, 12)).astype("float32")
    c = np.full((12, 16), np.nan, "float32")
    run(mod, "pc", a, c)
    np.testing.assert_allclose(c, (a * 2).T + 1, rtol=1e-6)


def test_reverse_compute_inline_transposed_consumer():
    sch = tessel.Schedule(PRODUCER_CONSUMER)
    c = sch.get_block("C")
    sch.reverse_compute_inline(c)
    same_as(sch, PRODUCER_CONSUMER_INLINED)
    assert "sch.reverse_compute_inline(block=b" in sch.trace.as_python()
    run_pc(sch.mod)
    replays(sch, PRODUCER_CONSUMER)
    with pytest.raises(tessel.ScheduleError,
                       match="refers to a block that reverse_compute_inline removed"):
        sch.get_loops(c)


EPILOGUE = """
@T.prim_func
def epi(A: T.Buffer((32, 8), "float32"), D: T.Buffer((8,), "float32"),
        C: T.Buffer((32, 8), "float32")):
    T.func_attr({"global_symbol": "epi"})
    B = T.alloc_buffer((32, 8), "float32")
    for i, j in T.grid(32, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * A[vi, vj]
    for i, j in T.grid(32, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(B[vi, vj] + D[vj], T.float32(0))
"""

EPILOGUE_INLINED = """
@T.prim_func
def epi(A: T.Buffer((32, 8), "float32"), D: T.Buffer((8,), "float32"),
        C: T.Buffer((32, 8), "float32")):
    T.func_attr({"global_symbol": "epi"})
    with T.block("root"):
        for i_0, i_1, j in T.grid(4, 8, 8):
            with T.block("B"):
                vi = T.axis.spatial(32, i_0 * 8 + i_1)
                vj = T.axis.spatial(8, j)
                C[vi, vj] = T.max(A[vi, vj] * A[vi, vj] + D[vj], T.float32(0))
"""


def run_epi(mod):
    a = rng.standard_normal((32, 8)).astype("float32")
    d = rng.standard_normal(8).astype("float32")
    c = np.full((32, 8), np.nan, "float32")
    run(mod, "epi", a, d, c)
    np.testing.assert_allclose(c, np.maximum(a * a + d, 0), rtol=1e-6)


def test_reverse_compute_inline_an_epilogue_reading_another_buffer():
    sch = tessel.Schedule(EPILOGUE)
    (i, _) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 8])
    # The consumer's own loops are split too: its bindings still cover its domain.
    (ci, cj) = sch.get_loops(sch.get_block("C"))
    sch.split(cj, [2, 4])
    sch.reverse_compute_inline(sch.get_block("C"))
    same_as(sch, EPILOGUE_INLINED)
    run_epi(sch.mod)
    replays(sch, EPILOGUE)


def test_reverse_compute_inline_keeps_a_predicated_producer():
    sch = tessel.Schedule(EPILOGUE)
    (i, _) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 5])  # 35 > 32: the producer gets a predicate, which stays
    sch.reverse_compute_inline(sch.get_block("C"))
    text = tessel.as_text(sch.mod)
    assert "T.where(i_0 * 5 + i_1 < 32)" in text and 'T.sblock("C")' not in text
    run_epi(sch.mod)
    replays(sch, EPILOGUE)


def variant(src, old, new):
    assert old in src, old
    return src.replace(old, new)


CONSUMER_C = "C[vi, vj] = T.max(B[vi, vj] + D[vj], T.float32(0))"


@pytest.mark.parametrize("src,message", [
    # X is a parameter.
    (variant(EPILOGUE, '    B = T.alloc_buffer((32, 8), "float32")\n', "").replace(
        'D: T.Buffer((8,), "float32"),', 'D: T.Buffer((8,), "float32"), B: T.Buffer((32, 8), "float32"),'),
     "B is not allocated in the function \\(it is a parameter\\)"),
    # X loaded at an index that is not an iterator.
    (variant(EPILOGUE, CONSUMER_C, "C[vi, vj] = B[vi, 7 - vj]"),
     r'block "C" loads B\[..., 7 - vj, ...\]; every index of B must be a distinct iterator'),
    # X loaded at two different points.
    (variant(EPILOGUE, CONSUMER_C, "C[vi, vj] = B[vi, vj] + B[vj, vi]"),
     'block "C" loads B at different indices'),
    # An iterator of the consumer that X's indices do not use.
    (variant(EPILOGUE, CONSUMER_C, "C[vi, vj] = B[vi, vi]"),
     r'block "C" loads B\[..., vi, ...\]; every index of B must be a distinct iterator'),
    # The consumer reads what it writes.
    (variant(EPILOGUE, CONSUMER_C, "C[vi, vj] = B[vi, vj] + C[vi, vj]"),
     'block "C" reads C, which it writes'),
    # The producer is a reduction with an init: its store is read-modify-write.
    (variant(variant(EPILOGUE, "B[vi, vj] = A[vi, vj] * A[vi, vj]",
                     "with T.init():\n                B[vi, vj] = T.float32(0)\n"
                     "            B[vi, vj] = B[vi, vj] + A[vi, vj]"),
             'vi, vj = T.axis.remap("SS", [i, j])\n            with', 'vi, vj = T.axis.remap("SR", [i, j])\n            with'),
     'the producer "B" of B is a reduction \\(it has an init\\)'),
    # The producer writes X twice.
    (variant(EPILOGUE, "B[vi, vj] = A[vi, vj] * A[vi, vj]",
             "B[vi, vj] = A[vi, vj]\n            B[vi, vj] = B[vi, vj] * A[vi, vj]"),
     'the body of the producer "B" is not one store to B'),
    # The consumer visits only half of its iterator's domain.
    (variant(EPILOGUE, 'for i, j in T.grid(32, 8):\n        with T.block("C"):\n'
                       '            vi, vj = T.axis.remap("SS", [i, j])',
             'for i, j in T.grid(16, 8):\n        with T.block("C"):\n'
             '            vi = T.axis.spatial(32, i * 2)\n            vj = T.axis.spatial(8, j)'),
     'the bindings of block "C" could not be proved to visit every point'),
])
def test_reverse_compute_inline_refusals(src, message):
    sch = tessel.Schedule(src)
    before = sch.mod
    with pytest.raises(tessel.ScheduleError, match="reverse_compute_inline: " + message):
        sch.reverse_compute_inline(sch.get_block("C"))
    ir.assert_structural_equal(sch.mod, before)


OTHER_CONSUMER = EPILOGUE.replace(
    'C: T.Buffer((32, 8), "float32")):',
    'C: T.Buffer((32, 8), "float32"), E: T.Buffer((32, 8), "float32")):') + """
    for i, j in T.grid(32, 8):
        with T.block("E"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = B[vi, vj]
"""

TWO_PRODUCED = EPILOGUE.replace(
    '    for i, j in T.grid(32, 8):\n        with T.block("C")',
    '    for j in range(8):\n        with T.block("D")\n'
    '            vj = T.axis.spatial(8, j)\n            D[vj] = T.float32(1)\n'
    '    for i, j in T.grid(32, 8):\n        with T.block("C")').replace('T.block("D")\n', 'T.block("D"):\n')


READER_BETWEEN = EPILOGUE.replace(
    'C: T.Buffer((32, 8), "float32")):',
    'C: T.Buffer((32, 8), "float32"), E: T.Buffer((32, 8), "float32")):').replace(
    '    for i, j in T.grid(32, 8):\n        with T.block("C")',
    '    for i, j in T.grid(32, 8):\n        with T.block("E"):\n'
    '            vi, vj = T.axis.remap("SS", [i, j])\n            E[vi, vj] = C[vi, vj]\n'
    '    for i, j in T.grid(32, 8):\n        with T.block("C")')


def test_reverse_compute_inline_refuses_other_readers_and_moves_past_writers():
    sch = tessel.Schedule(OTHER_CONSUMER)
    with pytest.raises(tessel.ScheduleError,
                       match='B is also read by block "E"; the block to inline must be its only'):
        sch.reverse_compute_inline(sch.get_block("C"))
    sch = tessel.Schedule(TWO_PRODUCED)
    with pytest.raises(tessel.ScheduleError,
                       match=r'block "C" reads several buffers that other blocks write \(B, D\)'):
        sch.reverse_compute_inline(sch.get_block("C"))
    sch = tessel.Schedule(READER_BETWEEN)
    with pytest.raises(tessel.ScheduleError,
                       match='block "E" accesses C between the producer "B" and block "C"'):
        sch.reverse_compute_inline(sch.get_block("C"))
    sch = tessel.Schedule(PRODUCER_CONSUMER)
    with pytest.raises(tessel.ScheduleError, match='block "B" reads no buffer that another block'):
        sch.reverse_compute_inline(sch.get_block("B"))
    # A predicated consumer: its non-dividing split leaves a predicate on it.
    sch = tessel.Schedule(EPILOGUE)
    (i, _) = sch.get_loops(sch.get_block("C"))
    sch.split(i, [None, 5])
    with pytest.raises(tessel.ScheduleError, match="a predicated block cannot be reverse-inlined"):
        sch.reverse_compute_inline(sch.get_block("C"))
