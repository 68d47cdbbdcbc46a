"""cache_read, cache_write, compute_at, reverse_compute_at and the lowering's
CompactBufferAllocation: the IR after each primitive (against expected text, structurally; TVM
0.27's output where it matters), each refusal with its message and the module left as it was,
the trace replayed as Python and as JSON, results against NumPy through the C backend, and
random schedules that must either apply or be refused without a change."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tessel
from schedule_testing import replays, same_as, run, refused
from tessel import ir

rng = np.random.default_rng(23)


# ---- an elementwise chain ----

CHAIN = """
@T.prim_func
def chain(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "chain"})
    B = T.alloc_buffer((16, 8), "float32")
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

# TVM 0.27 gives the same nest (with its regions filled in).
CHAIN_B_AT_I = """
@T.prim_func
def chain(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "chain"})
    with T.block("root"):
        B = T.alloc_buffer((16, 8), "float32")
        for i in range(16):
            for ax0 in range(8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for j in range(8):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)
"""

CHAIN_FUSED = """
@T.prim_func
def chain(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "chain"})
    with T.block("root"):
        B = T.alloc_buffer((16, 8), "float32")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""

# preserve_unit_loops keeps the two extent-1 loops (TVM writes the binding i + ax0).
CHAIN_UNIT_LOOPS = """
@T.prim_func
def chain(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "chain"})
    with T.block("root"):
        B = T.alloc_buffer((16, 8), "float32")
        for i, j in T.grid(16, 8):
            for ax0, ax1 in T.grid(1, 1):
                with T.block("B"):
                    vi = T.axis.spatial(16, ax0 + i)
                    vj = T.axis.spatial(8, ax1 + j)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""

# Named as TVM names them, except that TVM gives both copy blocks the name "B_local".
CHAIN_CACHED = """
@T.prim_func
def chain(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "chain"})
    with T.block("root"):
        B = T.alloc_buffer((16, 8), "float32")
        B_local = T.alloc_buffer((16, 8), "float32", scope="local")
        B_local_1 = T.alloc_buffer((16, 8), "float32", scope="local")
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B_local_1[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0, ax1 in T.grid(16, 8):
            with T.block("B_local_1"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B_local_1[v0, v1])
                T.writes(B[v0, v1])
                B[v0, v1] = B_local_1[v0, v1]
        for ax0, ax1 in T.grid(16, 8):
            with T.block("B_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[v0, v1])
                T.writes(B_local[v0, v1])
                B_local[v0, v1] = B[v0, v1]
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_local[vi, vj] + T.float32(1)
"""


def run_chain(mod):
    a = rng.standard_normal((16, 8)).astype("float32")
    c = np.full((16, 8), np.nan, "float32")
    run(mod, "chain", a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_compute_at_of_an_elementwise_producer_under_the_outer_loop():
    sch = tessel.Schedule(CHAIN)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    same_as(sch, CHAIN_B_AT_I)
    assert "sch.compute_at(block=b" in sch.trace.as_python()
    run_chain(sch.mod)
    replays(sch, CHAIN)


def test_compute_at_and_reverse_compute_at_under_the_inner_loop_drop_unit_loops():
    sch = tessel.Schedule(CHAIN)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[1])
    same_as(sch, CHAIN_FUSED)
    run_chain(sch.mod)
    replays(sch, CHAIN)
    sch = tessel.Schedule(CHAIN)
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[1])
    same_as(sch, CHAIN_FUSED)
    run_chain(sch.mod)
    replays(sch, CHAIN)


def test_preserve_unit_loops():
    sch = tessel.Schedule(CHAIN)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[1],
                   preserve_unit_loops=True)
    same_as(sch, CHAIN_UNIT_LOOPS)
    assert "preserve_unit_loops=True" in sch.trace.as_python()
    run_chain(sch.mod)
    replays(sch, CHAIN)


def test_cache_read_and_cache_write_of_the_intermediate():
    sch = tessel.Schedule(CHAIN)
    sch.cache_read(sch.get_block("C"), 0, "local")
    sch.cache_write(sch.get_block("B"), 0, "local")
    same_as(sch, CHAIN_CACHED)
    text = sch.trace.as_python()
    assert 'sch.cache_read(block=b' in text and 'storage_scope="local"' in text
    run_chain(sch.mod)
    replays(sch, CHAIN)


def test_a_cached_chain_moved_next_to_its_users():
    sch = tessel.Schedule(CHAIN)
    c = sch.get_block("C")
    i, j = sch.get_loops(c)
    cr = sch.cache_read(c, 0, "local")
    cw = sch.cache_write(c, 0, "shared")
    sch.compute_at(cr, i)
    sch.reverse_compute_at(cw, i)
    text = tessel.as_text(sch.mod)
    # Under i: the read copy, C, the write copy, each over one row.
    order = [text.index(f'T.sblock("{n}")') for n in ("B_local", "C", "C_shared")]
    assert order == sorted(order)
    assert text.count("for i in range(16):") == 1
    run_chain(sch.mod)
    replays(sch, CHAIN)


# ---- a consumer reading a shifted window ----

WINDOW = """
@T.prim_func
def win(A: T.Buffer((33,), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"global_symbol": "win"})
    B = T.alloc_buffer((33,), "float32")
    for i in range(33):
        with T.block("B"):
            vi = T.axis.spatial(33, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(32):
        with T.block("C"):
            vi = T.axis.spatial(32, i)
            C[vi] = B[vi] + B[vi + 1]
"""

# TVM 0.27 gives the same for both values of preserve_unit_loops, with the binding i + ax0.
WINDOW_AT = """
@T.prim_func
def win(A: T.Buffer((33,), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"global_symbol": "win"})
    with T.block("root"):
        B = T.alloc_buffer((33,), "float32")
        for i in range(32):
            for ax0 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(33, ax0 + i)
                    B[vi] = A[vi] * T.float32(2)
            with T.block("C"):
                vi = T.axis.spatial(32, i)
                C[vi] = B[vi] + B[vi + 1]
"""


def test_compute_at_covers_a_shifted_window():
    sch = tessel.Schedule(WINDOW)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    same_as(sch, WINDOW_AT)
    a = rng.standard_normal(33).astype("float32")
    c = np.full(32, np.nan, "float32")
    run(sch.mod, "win", a, c)
    np.testing.assert_allclose(c, a[:-1] * 2 + a[1:] * 2, rtol=1e-6)
    replays(sch, WINDOW)


def test_a_window_consumer_cannot_be_moved_under_its_producer():
    sch = tessel.Schedule(WINDOW)
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"),
                                                sch.get_loops(sch.get_block("B"))[0]),
            r'reverse_compute_at: block "C" does not access B at distinct iterators')


# ---- the index argument ----

THREE = """
@T.prim_func
def three(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32"),
          C: T.Buffer((8,), "float32"), E: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "three"})
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi] * T.float32(3)
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2)
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            E[vi] = A[vi] - T.float32(1)
"""


def block_order(sch):
    return re.findall(r'T\.sblock\("(\w+)"\)', tessel.as_text(sch.mod))


def run_three(mod):
    a = rng.standard_normal(8).astype("float32")
    d, c, e = (np.full(8, np.nan, "float32") for _ in range(3))
    run(mod, "three", a, d, c, e)
    np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)
    np.testing.assert_allclose(d, a * 3, rtol=1e-6)
    np.testing.assert_allclose(e, a - 1, rtol=1e-6)


@pytest.mark.parametrize("index,order", [
    (-1, ["root", "D", "B", "C", "E"]),   # right before the first consumer
    (-2, ["root", "B", "D", "C", "E"]),   # as early as allowed
    (0, ["root", "B", "D", "C", "E"]),
    (1, ["root", "D", "B", "C", "E"]),
])
def test_compute_at_index(index, order):
    sch = tessel.Schedule(THREE)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0], index=index)
    assert block_order(sch) == order
    assert f"index={index})" in sch.trace.as_python()
    run_three(sch.mod)
    replays(sch, THREE)


@pytest.mark.parametrize("index", [2, 3, 7, -3])
def test_compute_at_index_after_a_consumer_or_out_of_range(index):
    sch = tessel.Schedule(THREE)
    refused(sch, lambda: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0],
                                        index=index),
            rf'compute_at: block "B" cannot go at index {index} under loop i: it must come after '
            r'child -1 \(which writes what it reads\) and before child 1')


def test_reverse_compute_at_index():
    # B's consumer C at the end of D's loop (-1) or right after the producer (-2) or at 3.
    src = """
@T.prim_func
def rev(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32"),
        E: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "rev"})
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi] * T.float32(3)
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            E[vi] = A[vi] - T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2)
"""
    for index, order in [(-1, ["D", "B", "E", "C"]), (-2, ["D", "B", "C", "E"]),
                         (3, ["D", "B", "E", "C"])]:
        sch = tessel.Schedule(src)
        sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[0],
                               index=index)
        assert block_order(sch)[1:] == order
        a = rng.standard_normal(8).astype("float32")
        d, e, c = (np.full(8, np.nan, "float32") for _ in range(3))
        run(sch.mod, "rev", a, d, e, c)
        np.testing.assert_allclose(c, (a + 1) * 2, rtol=1e-6)
        replays(sch, src)
    sch = tessel.Schedule(src)
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"),
                                                sch.get_loops(sch.get_block("B"))[0], index=1),
            r'reverse_compute_at: block "C" cannot go at index 1 under loop i: it must come after '
            r'child 1')


# ---- matmul ----

def matmul_src(m, n, k, name="matmul"):
    return f"""
@T.prim_func
def {name}(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
           C: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"global_symbol": "{name}"}})
    for i, j, k in T.grid({m}, {n}, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


MATMUL = matmul_src(64, 40, 48)
MATMUL_ODD = matmul_src(60, 50, 20)


def run_matmul(mod, m, n, k):
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.full((m, n), np.nan, "float32")
    run(mod, "matmul", a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-4)


def test_the_cpu_matmul_schedule():
    """TVM's CPU recipe: tiles, a local accumulator written back per tile, a cached A column per
    k step, the init split off, then parallel / vectorize / unroll."""
    sch = tessel.Schedule(MATMUL)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    cw = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(cw, j0)
    ca = sch.cache_read(c, 0, "local")
    sch.compute_at(ca, k)
    sch.decompose_reduction(c, k)
    sch.parallel(i0)
    sch.vectorize(j1)
    sch.unroll(i1)
    text = tessel.as_text(sch.mod)
    # The write back covers one 16x8 tile at (i_0, j_0), the copy of A one 16-row column.
    assert "= T.axis.spatial(64, i_0 * 16 + ax0" in text
    assert "= T.axis.spatial(40, j_0 * 8 + ax1)" in text
    assert "= T.axis.spatial(48, k)" in text
    run_matmul(sch.mod, 64, 40, 48)
    replays(sch, MATMUL)
    lowered = tessel.as_text(tessel.lower(sch.mod))
    # The accumulator becomes the 16x8 tile, allocated in each (i_0, j_0) iteration.
    assert re.search(r'C_local = T\.allocate\(\[128\], "float32", "local"\)', lowered)
    assert lowered.index("for j_0 in range(5):") < lowered.index("C_local = T.allocate")


@pytest.mark.parametrize("preserve", [False, True])
def test_non_dividing_tiles_with_cached_operands(preserve):
    sch = tessel.Schedule(MATMUL_ODD)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    i0, i1 = sch.split(i, [None, 16])  # 60 = 4 * 16 - 4
    j0, j1 = sch.split(j, [None, 8])   # 50 = 7 * 8 - 6
    sch.reorder(i0, j0, k, i1, j1)
    a_copy = sch.cache_read(c, 0, "local")
    b_copy = sch.cache_read(c, 1, "local")
    sch.compute_at(a_copy, k, preserve_unit_loops=preserve)
    sch.compute_at(b_copy, k, preserve_unit_loops=preserve)
    text = tessel.as_text(sch.mod)
    # The copies of the last tiles stay inside the operands.
    assert "T.where(i_0 * 16 + ax0 < 60)" in text
    assert re.search(r"T\.where\(j_0 \* 8 \+ ax\w+ < 50\)", text)
    assert ("for ax1 in range(1):" in text) == preserve
    run_matmul(sch.mod, 60, 50, 20)
    replays(sch, MATMUL_ODD)
    lowered = tessel.as_text(tessel.lower(sch.mod))
    # A's copy shrinks to the 16 rows of an i_0 tile (j_0's iterations all use the same rows, so
    # it cannot go further in).
    assert re.search(r'A_local = T\.allocate\(\[320\], "float32", "local"\)', lowered)
    assert lowered.index("for i_0 in range(4):") < lowered.index("A_local = T.allocate")


# ---- refusals ----

def loops_of(sch, name):
    return sch.get_loops(sch.get_block(name))


def test_cache_refusals_on_the_chain():
    sch = tessel.Schedule(CHAIN)
    b, c = sch.get_block("B"), sch.get_block("C")
    refused(sch, lambda: sch.cache_read(c, 1, "local"),
            r'cache_read: block "C" reads 1 buffer\(s\); read_buffer_index 1 is out of range')
    refused(sch, lambda: sch.cache_read(c, -1, "local"), "read_buffer_index -1 is out of range")
    refused(sch, lambda: sch.cache_read(c, 0, "texture"),
            r'cache_read: storage scope "texture" is not one of global, shared, shared.dyn, local')
    refused(sch, lambda: sch.cache_write(b, 1, "local"),
            r'cache_write: block "B" writes 1 buffer\(s\); write_buffer_index 1 is out of range')
    refused(sch, lambda: sch.cache_write(b, 0, "registers"),
            r'cache_write: storage scope "registers" is not one of')
    refused(sch, lambda: sch.cache_read(b, 0, "local", consumer_blocks=[c]),
            r'cache_read: consumer block "C" does not read A')
    refused(sch, lambda: sch.cache_write(c, 0, "local", consumer_blocks=[b]),
            r'cache_write: consumer block "B" is not after block "C" in its scope')
    # After compute_at, B is written in C's nest: no copy of it before the nest, no write back
    # after it.
    sch.compute_at(b, loops_of(sch, "C")[0])
    refused(sch, lambda: sch.cache_read(c, 0, "local"),
            r'cache_read: B is written in the same loop nest as block "C" reads it')
    refused(sch, lambda: sch.cache_write(b, 0, "local"),
            r'cache_write: block "C" in the same loop nest as block "B" accesses B '
            r'\(cache_write before compute_at\)')


def test_compute_at_refusals_on_the_chain():
    sch = tessel.Schedule(CHAIN)
    b, c = sch.get_block("B"), sch.get_block("C")
    bi, bj = sch.get_loops(b)
    ci, cj = sch.get_loops(c)
    refused(sch, lambda: sch.compute_at(b, bi),
            r'compute_at: block "B" is already under loop i')
    refused(sch, lambda: sch.reverse_compute_at(b, ci),
            r'reverse_compute_at: block "B" comes before loop i: reverse_compute_at moves a '
            r'block under a loop of its producers')
    refused(sch, lambda: sch.compute_at(c, bi),
            r'compute_at: block "C" comes after loop i: compute_at moves a block under a loop '
            r'of its consumers')
    refused(sch, lambda: sch.compute_at(b, cj, index=-3),
            r'compute_at: block "B" cannot go at index -3 under loop j')
    # A non-dividing split puts a predicate on B.
    sch2 = tessel.Schedule(CHAIN)
    b2 = sch2.get_block("B")
    sch2.split(sch2.get_loops(b2)[0], [None, 5])
    refused(sch2, lambda: sch2.compute_at(b2, loops_of(sch2, "C")[0]),
            r'compute_at: block "B" has the predicate .*, which refers to the loops it leaves')


SHARED_NEST = """
@T.prim_func
def sn(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
       D: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "sn"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + D[vi]
"""

TWO_LINKS = """
@T.prim_func
def tl(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32"),
       C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "tl"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
            D[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + D[vi]
"""

SECOND_WRITER = """
@T.prim_func
def sw(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "sw"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(4):
        with T.block("B2"):
            vi = T.axis.spatial(4, i)
            B[vi] = T.float32(0)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2)
"""

READER_OUTSIDE = """
@T.prim_func
def ro(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"),
       D: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "ro"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi] * T.float32(3)
"""

SHIFTED_STORE = """
@T.prim_func
def ss(A: T.Buffer((9,), "float32"), B: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "ss"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi + 1] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi + 1] * T.float32(2)
"""

ROW_SUM = """
@T.prim_func
def rs(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "rs"})
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, k in T.grid(8, 4):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]
"""

STRIDED = """
@T.prim_func
def st(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "st"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(16, i * 2)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi]
"""

IN_PLACE = """
@T.prim_func
def ip(A: T.Buffer((9,), "float32"), B: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "ip"})
    for i in range(9):
        with T.block("B"):
            vi = T.axis.spatial(9, i)
            B[vi] = B[vi] + A[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + B[vi + 1]
"""

# A block between the producer and the consumer writes what the producer reads.
WRITER_BETWEEN = """
@T.prim_func
def wb(A: T.Buffer((8,), "float32"), C: T.Buffer((8, 4), "float32"), D: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "wb"})
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("W"):
            vi = T.axis.spatial(8, i)
            A[vi] = T.float32(100)
        for j in range(4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi] * T.float32(2)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = C[vi, 0]
"""

# The copy before B would be stale for C.
WRITE_BETWEEN_READERS = """
@T.prim_func
def wr(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "wr"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("W"):
            vi = T.axis.spatial(8, i)
            A[vi] = T.float32(100)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] * T.float32(2)
"""


@pytest.mark.parametrize("src,call,message", [
    (SHARED_NEST, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[0]),
     r'compute_at: block "B" shares its loops with other statements'),
    (TWO_LINKS, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[0]),
     r'compute_at: block "B" is linked to the blocks under loop i through 2 buffers'),
    (SECOND_WRITER, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[0]),
     r'compute_at: block "B2" writes B too, besides "B"'),
    (READER_OUTSIDE, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[0]),
     r'compute_at: block "D" reads B, which "B" writes, but is not under loop i'),
    (READER_OUTSIDE, lambda s: s.compute_at(s.get_block("C"), loops_of(s, "D")[0]),
     r'compute_at: no block under loop i reads what block "C" writes'),
    (SHIFTED_STORE, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[0]),
     r'compute_at: block "B" does not access B at distinct iterators'),
    (ROW_SUM, lambda s: s.reverse_compute_at(s.get_block("C"), loops_of(s, "B")[0]),
     r'reverse_compute_at: block "C" has the reduce iterator vk; reverse_compute_at moves only '
     r'data-parallel blocks'),
    (STRIDED, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[0]),
     r'compute_at: the bindings of block "B" could not be proved to visit every point'),
    (STRIDED, lambda s: s.cache_write(s.get_block("B"), 0, "local"),
     r'cache_write: the bindings of block "B" could not be proved to visit every point'),
    (IN_PLACE, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[0]),
     r'compute_at: block "B" reads a buffer it writes and has no init'),
    (IN_PLACE, lambda s: s.cache_write(s.get_block("B"), 0, "local"),
     r'cache_write: block "B" reads B, which it writes, and has no init'),
    (WRITER_BETWEEN, lambda s: s.compute_at(s.get_block("B"), loops_of(s, "C")[1]),
     r'compute_at: block "W" writes A, which block "B" reads; moving "B" past it'),
    (WRITE_BETWEEN_READERS, lambda s: s.cache_read(s.get_block("B"), 0, "local"),
     r'cache_read: A is written after the copy\'s place and before block "C" reads it'),
    (WRITER_BETWEEN, lambda s: s.cache_read(s.get_block("C"), 0, "local",
                                            consumer_blocks=[s.get_block("D")]),
     r'cache_read: consumer block "D" does not read B'),
])
def test_refusals(src, call, message):
    sch = tessel.Schedule(src)
    refused(sch, lambda: call(sch), message)


def test_reverse_compute_at_refuses_to_pass_a_reader_of_its_output():
    src = """
@T.prim_func
def n(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "n"})
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = C[vi]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2)
"""
    sch = tessel.Schedule(src)
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C"), loops_of(sch, "B")[0]),
            r'reverse_compute_at: block "D" accesses C, which block "C" writes')


def test_cache_write_refuses_a_conditional_store_and_consumers_it_cannot_serve():
    cond = """
@T.prim_func
def cs(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "cs"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            if A[vi] > T.float32(0):
                B[vi] = A[vi]
"""
    sch = tessel.Schedule(cond)
    refused(sch, lambda: sch.cache_write(sch.get_block("B"), 0, "local"),
            r'cache_write: block "B" stores B under a condition')
    # C reads what B2 overwrote after B: it cannot read B's cache.
    sch = tessel.Schedule(SECOND_WRITER)
    refused(sch, lambda: sch.cache_write(sch.get_block("B"), 0, "local",
                                         consumer_blocks=[sch.get_block("C")]),
            r'cache_write: block "B2" writes B after block "B" and before consumer "C" reads it')
    # C reads B[8], which the 8-point block B2 does not compute.
    part = """
@T.prim_func
def pt(A: T.Buffer((9,), "float32"), B: T.Buffer((9,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "pt"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + B[vi + 1]
"""
    sch = tessel.Schedule(part)
    refused(sch, lambda: sch.cache_write(sch.get_block("B"), 0, "local",
                                         consumer_blocks=[sch.get_block("C")]),
            r'cache_write: consumer block "C" could not be proved to read only the part of B '
            r'that block "B" computes')


def test_cache_write_with_a_consumer_reading_the_cache():
    sch = tessel.Schedule(CHAIN)
    cw = sch.cache_write(sch.get_block("B"), 0, "local", consumer_blocks=[sch.get_block("C")])
    text = tessel.as_text(sch.mod)
    assert "C[vi_1, vj_1] = B_local[vi_1, vj_1] + T.float32(1)" in text
    assert "consumer_blocks=[b" in sch.trace.as_python()
    run_chain(sch.mod)
    replays(sch, CHAIN)


# ---- random schedules ----

SMALL_MATMUL = matmul_src(24, 20, 12)


def block_names(sch):
    return [n for n in block_order(sch) if n != "root"]


def random_step(sch, r):
    """One random primitive on random blocks and loops; returns whether it applied."""
    names = block_names(sch)
    blk = sch.get_block(names[r.integers(len(names))])
    loops = sch.get_loops(blk)
    kind = r.choice(["split", "reorder", "cache_read", "cache_write", "compute_at",
                     "reverse_compute_at"])
    before = sch.mod
    try:
        if kind == "split" and loops:
            sch.split(loops[r.integers(len(loops))], [None, int(r.integers(2, 6))])
        elif kind == "reorder" and len(loops) >= 2:
            picked = [loops[i] for i in sorted(r.choice(len(loops), 2, replace=False))]
            sch.reorder(*reversed(picked))
        elif kind == "cache_read":
            sch.cache_read(blk, int(r.integers(0, 3)), str(r.choice(["local", "shared", "global"])))
        elif kind == "cache_write":
            sch.cache_write(blk, int(r.integers(0, 2)), str(r.choice(["local", "shared"])))
        elif kind in ("compute_at", "reverse_compute_at"):
            other = sch.get_block(names[r.integers(len(names))])
            target = sch.get_loops(other)
            if not target:
                return False
            loop = target[r.integers(len(target))]
            index = int(r.choice([-1, -1, -2, 0, 1]))
            preserve = bool(r.integers(2))
            getattr(sch, kind)(blk, loop, preserve_unit_loops=preserve, index=index)
        else:
            return False
    except tessel.ScheduleError:
        ir.assert_structural_equal(sch.mod, before)
        return False
    return True


@pytest.mark.parametrize("seed", range(24))
def test_random_schedules_of_matmul(seed):
    r = np.random.default_rng(seed)
    sch = tessel.Schedule(SMALL_MATMUL)
    applied = sum(random_step(sch, r) for _ in range(12))
    assert applied > 0
    run_matmul(sch.mod, 24, 20, 12)
    replays(sch, SMALL_MATMUL)


@pytest.mark.parametrize("seed", range(24))
def test_random_schedules_of_the_chain(seed):
    r = np.random.default_rng(1000 + seed)
    sch = tessel.Schedule(CHAIN)
    applied = sum(random_step(sch, r) for _ in range(12))
    assert applied > 0
    run_chain(sch.mod)
    replays(sch, CHAIN)


def test_random_schedules_reach_every_primitive():
    """The random steps are not all refused: over the seeds above each primitive applies."""
    seen = set()
    for seed in range(24):
        for src in (SMALL_MATMUL, CHAIN):
            r = np.random.default_rng(seed)
            sch = tessel.Schedule(src)
            for _ in range(12):
                random_step(sch, r)
            seen |= set(re.findall(r"sch\.(\w+)\(", sch.trace.as_python()))
    assert {"split", "reorder", "cache_read", "cache_write", "compute_at",
            "reverse_compute_at"} <= seen


# ---- CompactBufferAllocation (through the lowering) ----

ROWS = """
@T.prim_func
def rows(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "rows"})
    B = T.alloc_buffer((16, 8), "float32", scope="local")
    for i in range(16):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def allocations(mod, target="c"):
    """name -> (elements, the loop variable whose body holds it or None at the top)."""
    out = {}
    loops = []
    for line in tessel.as_text(tessel.lower(mod, target)).splitlines():
        depth = len(line) - len(line.lstrip())
        loops = [(d, v) for d, v in loops if d < depth]
        m = re.match(r"\s*for (\w+) in", line) or re.match(r'\s*with T\.attr\((\w+), "thread_extent"',
                                                           line)
        if m:
            loops.append((depth, m.group(1)))
        m = re.match(r'\s*(\w+) = T\.allocate\(\[(\d+)\]', line)
        if m:
            out[m.group(1)] = (int(m.group(2)), loops[-1][1] if loops else None)
    return out


def test_compaction_moves_a_row_buffer_into_the_row_loop():
    assert allocations(ROWS)["B"] == (8, "i")
    a = rng.standard_normal((16, 8)).astype("float32")
    c = np.full((16, 8), np.nan, "float32")
    run(ROWS, "rows", a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_compaction_of_the_tiled_gpu_matmul_relaxes_shared_buffers_over_threads():
    import pathlib

    src = pathlib.Path(__file__).parents[2] / "examples" / "matmul_gpu_tiled.py"
    found = allocations(src, "cuda")
    # One 32x32 tile per thread block (not the 32 elements one thread touches), fresh per k_0.
    assert found["A_shared"] == (1024, "k_0") and found["B_shared"] == (1024, "k_0")


def test_compaction_keeps_a_buffer_that_carries_values_across_iterations():
    """Iteration k reads what iteration k-1 wrote: a fresh X per iteration would lose it."""
    src = """
@T.prim_func
def scan(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "scan"})
    X = T.alloc_buffer((9,), "float32", scope="local")
    for k in range(8):
        with T.block("S"):
            vk = T.axis.spatial(8, k)
            X[vk + 1] = T.if_then_else(vk == 0, T.float32(0), X[vk]) + A[vk]
        with T.block("B"):
            vk = T.axis.spatial(8, k)
            B[vk] = X[vk + 1]
"""
    assert allocations(src)["X"] == (9, None)
    a = rng.standard_normal(8).astype("float32")
    b = np.full(8, np.nan, "float32")
    run(src, "scan", a, b)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-5)


def test_compaction_leaves_a_storage_aligned_buffer_alone():
    sch = tessel.Schedule(ROWS)
    sch.storage_align(sch.get_block("B"), 0, 0, 16, 1)
    # 15 rows of stride 17 and one of 8: the padded layout, at the top, not an 8-element row.
    assert allocations(sch.mod)["B"] == (15 * 17 + 8, None)
    a = rng.standard_normal((16, 8)).astype("float32")
    c = np.full((16, 8), np.nan, "float32")
    run(sch.mod, "rows", a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_reverse_compute_at_refuses_a_strided_tile_whose_box_has_holes():
    # Each iteration of the middle split writes columns j_0*8 + 2*j + {0, 1, 4, 5}: the bounding
    # box has holes that another iteration writes, so a copy-back over the box would write values
    # never computed here.
    sch = tessel.Schedule(MATMUL)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    j0, jo, j1, ji = sch.split(j, [None, 2, 2, 2])
    sch.reorder(i, j0, j1, k, jo, ji)
    cw = sch.cache_write(b, 0, "local")
    refused(sch, lambda: sch.reverse_compute_at(cw, j1),
            r"could not prove that block \"C\" writes every element of the region of C_local")
    # Under j_0 the tile is dense again, and the result is right.
    sch.reverse_compute_at(cw, j0)
    a = np.random.default_rng(1).standard_normal((64, 48)).astype("float32")
    bb = np.random.default_rng(2).standard_normal((48, 40)).astype("float32")
    c = np.full((64, 40), np.nan, "float32")
    run(sch.mod, "matmul", a, bb, c)
    np.testing.assert_allclose(c, a @ bb, rtol=1e-5, atol=1e-4)


def test_reverse_compute_at_after_non_dividing_splits():
    # The split's predicate keeps the producer inside C's domain; the moved copy-back gets the
    # same bound as its own predicate, so it reads exactly what was written.
    sch = tessel.Schedule(MATMUL_ODD)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    cw = sch.cache_write(b, 0, "local")
    sch.reverse_compute_at(cw, j0)
    assert "T.where" in str(sch.mod).split('T.sblock("C_local")')[1]
    a = np.random.default_rng(3).standard_normal((60, 20)).astype("float32")
    bb = np.random.default_rng(4).standard_normal((20, 50)).astype("float32")
    c = np.full((60, 50), np.nan, "float32")
    run(sch.mod, "matmul", a, bb, c)
    np.testing.assert_allclose(c, a @ bb, rtol=1e-5, atol=1e-4)
    replays(sch, MATMUL_ODD)


PREDICATED = """
@T.prim_func
def matmul(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 40), "float32"),
           C: T.Buffer((64, 40), "float32")):
    T.func_attr({"global_symbol": "matmul"})
    C_local = T.alloc_buffer((64, 40), "float32", scope="local")
    for i_0, j, k, i_1 in T.grid(4, 40, 48, 16):
        with T.block("C"):
            vi = T.axis.spatial(64, i_0 * 16 + i_1)
            vj, vk = T.axis.remap("SR", [j, k])
            T.where(i_1 < 15)
            with T.init():
                C_local[vi, vj] = T.float32(0)
            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
    for ax0, ax1 in T.grid(64, 40):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_local[v0, v1]
"""


def test_reverse_compute_at_refuses_a_predicate_that_is_not_the_domain_bound():
    # The user's predicate drops every 16th row: those rows were never computed, so a copy-back
    # moved under i_0 must not be allowed to read them.
    sch = tessel.Schedule(PREDICATED)
    i0 = sch.get_loops(sch.get_block("C"))[0]
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("C_local"), i0),
            r"a predicate other than the bounds of its domain")
