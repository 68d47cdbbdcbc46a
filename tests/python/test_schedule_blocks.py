"""Schedule primitives that create or remove blocks: reverse_compute_inline, rfactor, blockize.
For each: the IR after it (against expected text, structurally), each refusal with its message,
the trace replayed as Python and as JSON to an equal module, and results against NumPy through
the C backend."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tessel
from schedule_testing import replays, same_as, run
from tessel import ir

rng = np.random.default_rng(11)


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


# ---- rfactor ----

ROW_SUM = """
@T.prim_func
def rsum(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "rsum"})
    for i, k in T.grid(16, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

# What TVM 0.27 gives for split(k, [None, 8]) then rfactor(k_1, 0) (regions left out).
ROW_SUM_RF = """
@T.prim_func
def rsum(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "rsum"})
    B_rf = T.alloc_buffer((8, 16), "float32")
    for i, k_0, k_1 in T.grid(16, 8, 8):
        with T.block("B_rf"):
            vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
            with T.init():
                B_rf[vk_1, vi] = T.float32(0)
            B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 8 + vk_1]
    for i, k_1 in T.grid(16, 8):
        with T.block("B"):
            vk_1, vi = T.axis.remap("RS", [k_1, i])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + B_rf[vk_1, vi]
"""


def run_rsum(mod, reduce=np.sum, init=0.0):
    a = rng.standard_normal((16, 64)).astype("float32")
    b = np.full(16, np.nan, "float32")
    run(mod, "rsum", a, b)
    np.testing.assert_allclose(b, reduce(a, axis=1), rtol=1e-5, atol=1e-5)


def test_rfactor_of_a_row_sum_then_the_rf_loop_parallel():
    sch = tessel.Schedule(ROW_SUM)
    i, k = sch.get_loops(sch.get_block("B"))
    k0, k1 = sch.split(k, [None, 8])
    rf = sch.rfactor(k1, 0)
    same_as(sch, ROW_SUM_RF)
    assert "sch.rfactor(loop=l" in sch.trace.as_python() and ", factor_axis=0)" in sch.trace.as_python()
    run_rsum(sch.mod)
    replays(sch, ROW_SUM)
    # The factored loop now feeds a data-parallel iterator of the rf block: it can run in parallel.
    sch.reorder(k1, i)
    sch.parallel(k1)
    assert "T.parallel(8)" in tessel.as_text(sch.mod)
    assert len(sch.get_loops(rf)) == 3
    run_rsum(sch.mod)
    replays(sch, ROW_SUM)


def test_rfactor_with_a_negative_factor_axis_and_the_outer_loop():
    sch = tessel.Schedule(ROW_SUM)
    _, k = sch.get_loops(sch.get_block("B"))
    k0, _ = sch.split(k, [None, 8])
    sch.rfactor(k0, -1)  # the last position: B_rf is (16, 8)
    text = tessel.as_text(sch.mod)
    assert 'B_rf = T.sblock_alloc_buffer((16, 8), "float32")' in text
    assert "B_rf[vi, vk_0] = B_rf[vi, vk_0] + A[vi, vk_0 * 8 + vk_1]" in text
    run_rsum(sch.mod)
    replays(sch, ROW_SUM)


ROW_MAX = (ROW_SUM.replace("B[vi] = T.float32(0)", "B[vi] = T.float32(-3.0e38)")
           .replace("B[vi] = B[vi] + A[vi, vk]", "B[vi] = T.max(B[vi], A[vi, vk])"))


def test_rfactor_of_a_max_reduction():
    sch = tessel.Schedule(ROW_MAX)
    _, k = sch.get_loops(sch.get_block("B"))
    _, k1 = sch.split(k, [None, 4])
    sch.rfactor(k1, 1)
    text = tessel.as_text(sch.mod)
    assert re.search(r"T\.max\(B\[(vi\w*)\], B_rf\[\1, vk_1\w*\]\)", text), text
    run_rsum(sch.mod, np.max)
    replays(sch, ROW_MAX)


MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((32, 48), "float32"), B: T.Buffer((48, 24), "float32"),
           C: T.Buffer((32, 24), "float32")):
    T.func_attr({"global_symbol": "matmul"})
    for i, j, k in T.grid(32, 24, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def run_matmul(mod):
    a = rng.standard_normal((32, 48)).astype("float32")
    b = rng.standard_normal((48, 24)).astype("float32")
    c = np.full((32, 24), np.nan, "float32")
    run(mod, "matmul", a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-4)


def test_rfactor_of_matmul_over_k():
    sch = tessel.Schedule(MATMUL)
    _, _, k = sch.get_loops(sch.get_block("C"))
    ko, ki = sch.split(k, [None, 4])
    rf = sch.rfactor(ki, 2)
    text = tessel.as_text(sch.mod)
    assert 'C_rf = T.sblock_alloc_buffer((32, 24, 4), "float32")' in text
    assert 'T.sblock("C_rf")' in text
    run_matmul(sch.mod)
    replays(sch, MATMUL)
    # The rf block is a reduction over ko: it decomposes like any other.
    sch.decompose_reduction(rf, sch.get_loops(rf)[2])
    run_matmul(sch.mod)
    replays(sch, MATMUL)


@pytest.mark.parametrize("src,message", [
    (ROW_SUM.replace("B[vi] = T.float32(0)", "B[vi] = T.float32(1)"),
     'the init T.float32\\(1\\) of block "B" is not 0, the identity of \\+'),
    (ROW_SUM.replace("B[vi] = B[vi] + A[vi, vk]", "B[vi] = B[vi] - A[vi, vk]"),
     r'the update B\[vi\] - A\[vi, vk\] of block "B" is not a known combiner'),
    (ROW_SUM.replace("B[vi] = B[vi] + A[vi, vk]", "B[vi] = A[vi, vk] + A[vi, vk]"),
     'the body of block "B" is not one update C\\[...\\] = C\\[...\\] \\+ x'),
])
def test_rfactor_refuses_what_it_cannot_regroup(src, message):
    sch = tessel.Schedule(src)
    _, k = sch.get_loops(sch.get_block("B"))
    with pytest.raises(tessel.ScheduleError, match="rfactor: " + message):
        sch.rfactor(k, 0)


def test_rfactor_refusals():
    sch = tessel.Schedule(ROW_SUM)
    i, k = sch.get_loops(sch.get_block("B"))
    before = sch.mod
    with pytest.raises(tessel.ScheduleError, match="rfactor: the loop i feeds no reduction iterator"):
        sch.rfactor(i, 0)
    with pytest.raises(tessel.ScheduleError, match=r"factor_axis 2 is out of range \[-2, 1\]"):
        sch.rfactor(k, 2)
    with pytest.raises(tessel.ScheduleError, match=r"factor_axis -3 is out of range"):
        sch.rfactor(k, -3)
    ir.assert_structural_equal(sch.mod, before)
    # A non-dividing split leaves a predicate on the other reduction loop.
    sch.split(k, [None, 10])
    _, k0, k1 = sch.get_loops(sch.get_block("B"))
    with pytest.raises(tessel.ScheduleError,
                       match='uses a reduction loop other than k_1: the combining block could not'):
        sch.rfactor(k1, 0)
    sch = tessel.Schedule(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.fuse(j, k)
    (i, jk) = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tessel.ScheduleError,
                       match='the loop j_k_fused feeds both data-parallel and reduction iterators'):
        sch.rfactor(jk, 0)
    sch = tessel.Schedule(TWO_REDUCTIONS)
    (i,) = sch.get_loops(sch.get_block("B"))[:1]
    with pytest.raises(tessel.ScheduleError, match="the loop i holds 2 blocks"):
        sch.rfactor(i, 0)
    sch = tessel.Schedule(ROW_SUM)
    i, k = sch.get_loops(sch.get_block("B"))
    sch.decompose_reduction(sch.get_block("B"), k)
    with pytest.raises(tessel.ScheduleError, match='block "B" has no init'):
        sch.rfactor(k, 0)


TWO_REDUCTIONS = """
@T.prim_func
def two(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32"),
        C: T.Buffer((16,), "float32")):
    for i in range(16):
        for k in range(64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for k in range(64):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
"""


def test_rfactor_under_a_shared_loop():
    # The loop i holds two reductions: the one factored over its own k keeps i shared.
    sch = tessel.Schedule(TWO_REDUCTIONS)
    _, k = sch.get_loops(sch.get_block("C"))
    ko, ki = sch.split(k, [None, 16])
    sch.rfactor(ki, 0)
    a = rng.standard_normal((16, 64)).astype("float32")
    b = np.full(16, np.nan, "float32")
    c = np.full(16, np.nan, "float32")
    run(sch.mod, "two", a, b, c)
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, a.sum(1), rtol=1e-5, atol=1e-5)
    replays(sch, TWO_REDUCTIONS)


# ---- blockize ----

MATMUL32 = """
@T.prim_func
def mm(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
       C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "mm"})
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

# What TVM 0.27 gives for split i, j by 8 and k by 4, reorder(i0, j0, k0, i1, j1, k1), blockize(i1).
MATMUL32_BLOCKIZED = """
@T.prim_func
def mm(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
       C: T.Buffer((32, 32), "float32")):
    T.func_attr({"global_symbol": "mm"})
    for i_0, j_0, k_0 in T.grid(4, 4, 8):
        with T.block("C_o"):
            vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
            T.reads(A[vi_o * 8:vi_o * 8 + 8, vk_o * 4:vk_o * 4 + 4],
                    B[vk_o * 4:vk_o * 4 + 4, vj_o * 8:vj_o * 8 + 8])
            T.writes(C[vi_o * 8:vi_o * 8 + 8, vj_o * 8:vj_o * 8 + 8])
            with T.init():
                for i_1, j_1 in T.grid(8, 8):
                    with T.block("C_init"):
                        vi_i_init, vj_i_init = T.axis.remap("SS", [i_1, j_1])
                        T.reads()
                        T.writes(C[vi_o * 8 + vi_i_init, vj_o * 8 + vj_i_init])
                        C[vi_o * 8 + vi_i_init, vj_o * 8 + vj_i_init] = T.float32(0)
            for i_1, j_1, k_1 in T.grid(8, 8, 4):
                with T.block("C"):
                    vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k_1])
                    C[vi_o * 8 + vi_i, vj_o * 8 + vj_i] = (C[vi_o * 8 + vi_i, vj_o * 8 + vj_i]
                        + A[vi_o * 8 + vi_i, vk_o * 4 + vk_i] * B[vk_o * 4 + vk_i, vj_o * 8 + vj_i])
"""


def run_mm(mod):
    a = rng.standard_normal((32, 32)).astype("float32")
    b = rng.standard_normal((32, 32)).astype("float32")
    c = np.full((32, 32), np.nan, "float32")
    run(mod, "mm", a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-4)


def tile_mm(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 8])
    k0, k1 = sch.split(k, [None, 4])
    return i0, i1, j0, j1, k0, k1


def test_blockize_a_matmul_tile_with_an_outer_reduction_part():
    sch = tessel.Schedule(MATMUL32)
    i0, i1, j0, j1, k0, k1 = tile_mm(sch)
    sch.reorder(i0, j0, k0, i1, j1, k1)
    outer = sch.blockize(i1)
    same_as(sch, MATMUL32_BLOCKIZED)
    assert len(sch.get_loops(outer)) == 3 and len(sch.get_loops(sch.get_block("C"))) == 3
    assert re.search(r"b\d+ = sch\.blockize\(target=l\d+, preserve_unit_iters=True\)",
                     sch.trace.as_python()), sch.trace.as_python()
    run_mm(sch.mod)
    replays(sch, MATMUL32)
    # The outer block schedules like any other: its loops parallelize.
    sch.parallel(sch.fuse(i0, j0))
    run_mm(sch.mod)
    replays(sch, MATMUL32)


def test_blockize_a_tile_that_holds_the_whole_reduction():
    sch = tessel.Schedule(MATMUL32)
    i0, i1, j0, j1, k0, k1 = tile_mm(sch)
    sch.reorder(i0, j0, i1, j1, k0, k1)
    sch.blockize(i1)
    text = tessel.as_text(sch.mod)
    # The reduction is entirely inside: the outer reduction iterator has extent 1, bound to 0.
    assert "vk_o = T.axis.reduce(1, 0)" in text
    assert "vk_i = T.axis.reduce(32, k_0 * 4 + k_1)" in text
    run_mm(sch.mod)
    replays(sch, MATMUL32)


ELEMENTWISE = """
@T.prim_func
def ew(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
    T.func_attr({"global_symbol": "ew"})
    for i, j in T.grid(32, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + T.float32(1)
"""


def run_ew(mod):
    a = rng.standard_normal((32, 16)).astype("float32")
    c = np.full((32, 16), np.nan, "float32")
    run(mod, "ew", a, c)
    np.testing.assert_allclose(c, a + 1, rtol=1e-6)


def test_blockize_the_whole_nest_and_an_inner_loop():
    sch = tessel.Schedule(ELEMENTWISE)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.blockize(i)
    text = tessel.as_text(sch.mod)
    assert "vi_o = T.axis.spatial(1, 0)" in text and 'T.sblock("C_o")' in text
    assert "C[vi_i, vj_i] = A[vi_i, vj_i] + T.float32(1)" in text
    run_ew(sch.mod)
    replays(sch, ELEMENTWISE)
    sch = tessel.Schedule(ELEMENTWISE)
    i, j = sch.get_loops(sch.get_block("C"))
    sch.blockize(j)
    text = tessel.as_text(sch.mod)
    assert "vi_o = T.axis.spatial(32, i)" in text and "vj_o = T.axis.spatial(1, 0)" in text
    assert "T.reads(A[vi_o, 0:16])" in text and "C[vi_o, vj_i] = A[vi_o, vj_i]" in text
    run_ew(sch.mod)
    replays(sch, ELEMENTWISE)


def test_blockize_the_reduction_loop_and_a_predicated_tile():
    sch = tessel.Schedule(MATMUL32)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.blockize(k)  # the outer block is the whole reduction of one element
    text = tessel.as_text(sch.mod)
    assert "vk_o = T.axis.reduce(1, 0)" in text and "C[vi_o, vj_o] = T.float32(0)" in text
    run_mm(sch.mod)
    replays(sch, MATMUL32)
    sch = tessel.Schedule(MATMUL32)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 5])  # 35 > 32: a predicate, kept on the inner block and the init
    sch.reorder(i0, j, i1, k)
    sch.blockize(i1)
    assert tessel.as_text(sch.mod).count("T.where(") == 2
    run_mm(sch.mod)
    replays(sch, MATMUL32)


def test_blockize_refusals():
    sch = tessel.Schedule(TWO_REDUCTIONS)
    (i,) = sch.get_loops(sch.get_block("B"))[:1]
    before = sch.mod
    with pytest.raises(tessel.ScheduleError,
                       match="blockize: the loop i holds 2 blocks; blockize of more than one"):
        sch.blockize(i)
    ir.assert_structural_equal(sch.mod, before)
    # A fused loop split across the boundary: j_k_fused // 32 above, % 32 ... all one loop.
    sch = tessel.Schedule(ELEMENTWISE)
    i, j = sch.get_loops(sch.get_block("C"))
    f = sch.fuse(i, j)
    f0, f1 = sch.split(f, [None, 24])  # 24 does not divide 16: vj mixes f0 and f1
    with pytest.raises(tessel.ScheduleError,
                       match="splits an iterator fused from loops above and below i_j_fused_1"):
        sch.blockize(f1)
    # Tiles that overlap: the outer scale 4 is not a multiple of the inner extent 8.
    src = ELEMENTWISE.replace('vi, vj = T.axis.remap("SS", [i, j])',
                              'vi = T.axis.spatial(32, i)\n            vj = T.axis.spatial(16, j)')
    sch = tessel.Schedule(src.replace("for i, j in T.grid(32, 16):",
                                      "for i, j0, j1 in T.grid(32, 2, 8):").replace(
        "T.axis.spatial(16, j)", "T.axis.spatial(16, j0 * 4 + j1)"))
    _, _, j1 = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tessel.ScheduleError,
                       match="blockize: the binding j0 \\* 4 \\+ j1 of vj does not divide"):
        sch.blockize(j1)
