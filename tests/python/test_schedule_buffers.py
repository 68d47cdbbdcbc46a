"""Buffer schedule primitives (set_scope, storage_align, reindex, transform_layout): the IR after
each, each refusal with its message, the trace replayed from Python and from JSON to a structurally
equal module, and the scheduled programs run through the C backend against NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tessel
from schedule_testing import replays, run
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


def text(sch):
    return tessel.as_text(sch.mod)


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


# ---- reindex ----

def conv_src(k):
    """NCHW convolution, no padding, kernel k x k: the input is read at A[n, rc, h + rh, w + rw]."""
    h = 6
    return f"""
@T.prim_func
def conv(A: T.Buffer((2, 3, {h + k - 1}, {h + k - 1}), "float32"),
         W: T.Buffer((4, 3, {k}, {k}), "float32"), C: T.Buffer((2, 4, {h}, {h}), "float32")):
    T.func_attr({{"global_symbol": "conv"}})
    for n, f, y, x, rc, rh, rw in T.grid(2, 4, {h}, {h}, 3, {k}, {k}):
        with T.block("C"):
            vn, vf, vy, vx, vrc, vrh, vrw = T.axis.remap("SSSSRRR", [n, f, y, x, rc, rh, rw])
            with T.init():
                C[vn, vf, vy, vx] = T.float32(0)
            C[vn, vf, vy, vx] = C[vn, vf, vy, vx] + A[vn, vrc, vy + vrh, vx + vrw] * W[vf, vrc, vrh, vrw]
"""


def conv_reference(a, w):
    n, c, hp, _ = a.shape
    f, _, k, _ = w.shape
    h = hp - k + 1
    out = np.zeros((n, f, h, h), "float32")
    for rh in range(k):
        for rw in range(k):
            out += np.einsum("nchw,fc->nfhw", a[:, :, rh:rh + h, rw:rw + h], w[:, :, rh, rw])
    return out


def run_conv(mod, k):
    a = rng.standard_normal((2, 3, 6 + k - 1, 6 + k - 1)).astype("float32")
    w = rng.standard_normal((4, 3, k, k)).astype("float32")
    c = np.full((2, 4, 6, 6), np.nan, "float32")
    run(mod, "conv", a, w, c)
    np.testing.assert_allclose(c, conv_reference(a, w), rtol=1e-4, atol=1e-4)


def alloc_shape(sch, name):
    m = re.search(name + r' = T.sblock_alloc_buffer\(\(([0-9, ]*)\)', text(sch))
    assert m, text(sch)
    return tuple(int(x) for x in m.group(1).split(",") if x.strip())


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("skip_simplify", [False, True])
def test_reindex_the_input_of_a_convolution_keeps_unit_kernel_dimensions(k, skip_simplify):
    src = conv_src(k)
    sch = tessel.Schedule(src)
    blk = sch.reindex(sch.get_block("C"), ("read", 0), skip_simplify=skip_simplify)
    # The input's indices use vn, vrc, vy, vrh, vx, vrw: six dimensions in the block's order,
    # the kernel ones of extent 1 for a 1x1 kernel (TVM's reindex drops them: (2, 6, 6, 3)).
    assert alloc_shape(sch, "A_reindex") == (2, 6, 6, 3, k, k)
    t = text(sch)
    assert 'with T.sblock("A_reindex"):' in t
    # The copy's indices: as written with skip_simplify, else simplified (for a 1x1 kernel the
    # unit iterators vanish from the expression, not from the buffer).
    copied = ("A[v0, v3, v1 + v4, v2 + v5]" if skip_simplify
              else "A[v0, v3, v1, v2]" if k == 1 else "A[v0, v3, v4 + v1, v5 + v2]")
    assert "A_reindex[v0, v1, v2, v3, v4, v5] = " + copied in t
    assert ("A_reindex[vn, vy, vx, vrc, vrh, vrw] * W[vf, vrc, vrh, vrw]") in t
    # The copy comes first, in the root block, under one loop per kept iterator.
    assert t.index('T.sblock("A_reindex")') < t.index('T.sblock("C")')
    assert f"for ax5 in range({k}):" in t
    assert sch.get_child_blocks(sch.get_block("root"))[0] is not None
    assert (f'b1 = sch.reindex(block=b0, buffer=["read", 0], '
            f'skip_simplify={skip_simplify})') in sch.trace.as_python()
    assert repr(blk) == "BlockRV(b1)"
    run_conv(sch.mod, k)
    replays(sch, src)


@pytest.mark.parametrize("k", [1, 3])
def test_reindex_the_weight_and_the_output_of_a_convolution(k):
    src = conv_src(k)
    sch = tessel.Schedule(src)
    c = sch.get_block("C")
    sch.reindex(c, ("read", 1))
    sch.reindex(c, ("write", 0))
    assert alloc_shape(sch, "W_reindex") == (4, 3, k, k)  # vf, vrc, vrh, vrw
    assert alloc_shape(sch, "C_reindex") == (2, 4, 6, 6)
    t = text(sch)
    assert "C_reindex[vn, vf, vy, vx] = C_reindex[vn, vf, vy, vx] + A[vn, vrc, vy + vrh, vx + vrw] * W_reindex[vf, vrc, vrh, vrw]" in t
    # The copy's iterators are named v0.. like those of W's copy; the printer tells them apart.
    assert "C[v0_1, v1_1, v2_1, v3_1] = C_reindex[v0_1, v1_1, v2_1, v3_1]" in t
    # Order: W's copy, the convolution, the copy back of C.
    assert t.index('T.sblock("W_reindex")') < t.index('T.sblock("C")') < t.index(
        'T.sblock("C_reindex")')
    run_conv(sch.mod, k)
    replays(sch, src)


def test_reindex_follows_the_block_iterator_order_not_the_index_order():
    src = """
@T.prim_func
def tr(A: T.Buffer((8, 6), "float32"), B: T.Buffer((6, 8), "float32")):
    T.func_attr({"global_symbol": "tr"})
    for i, j in T.grid(6, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] + T.float32(1)
"""
    sch = tessel.Schedule(src)
    sch.reindex(sch.get_block("B"), ("read", 0))
    assert alloc_shape(sch, "A_reindex") == (6, 8)
    t = text(sch)
    assert "A_reindex[v0, v1] = A[v1, v0]" in t and "B[vi, vj] = A_reindex[vi, vj] + T.float32(1)" in t
    a = rng.standard_normal((8, 6)).astype("float32")
    b = np.full((6, 8), np.nan, "float32")
    run(sch.mod, "tr", a, b)
    np.testing.assert_allclose(b, a.T + 1, rtol=1e-6)
    replays(sch, src)


REINDEX_BAD = """
@T.prim_func
def bad(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32"),
        D: T.Buffer((9,), "float32"), E: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "bad"})
    for i in range(8):
        with T.block("two"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] + A[vi + 1]
    for i in range(8):
        with T.block("self"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
    for i in range(9):
        with T.block("edge"):
            vi = T.axis.spatial(9, i)
            D[vi] = T.if_then_else(vi >= 1, A[vi * 2 - 1], T.float32(0))
    for i in range(16):
        with T.block("half"):
            vi = T.axis.spatial(16, i)
            C[vi // 2] = A[vi]
    for i in range(16):
        with T.block("guard"):
            vi = T.axis.spatial(16, i)
            if vi < 8:
                E[vi] = A[vi]
    for i in range(8):
        with T.block("indirect"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[T.Cast("int32", B[vi])]
"""


@pytest.mark.parametrize("block,buffer,message", [
    ("two", ("read", 0), r"accesses A at different indices \(A\[vi\] and A\[vi \+ 1\]\)"),
    ("two", ("read", 1), "buffer index 1 is out of range"),
    ("two", ("modify", 0), r'the buffer type is "modify"; expected "read" or "write"'),
    ("self", ("read", 0), "also writes B; reindexing its read would leave the writes in the copy"),
    ("self", ("write", 0), "also reads B and has no init that writes it"),
    ("edge", ("read", 0), r"index 0 of A\[vi \* 2 - 1\] could not be proved to stay within A's extent 16"),
    ("half", ("write", 0), r"C\[vi // 2\] could not be proved one-to-one"),
    ("guard", ("write", 0), "stores E under a condition"),
    ("indirect", ("read", 1), "loads a buffer; reindex needs indices computed from the iterators"),
])
def test_reindex_refusals(block, buffer, message):
    sch = tessel.Schedule(REINDEX_BAD)
    before = sch.mod
    with pytest.raises(tessel.ScheduleError, match="reindex: .*" + message):
        sch.reindex(sch.get_block(block), buffer)
    ir.assert_structural_equal(sch.mod, before)


def test_reindex_refuses_a_write_whose_bindings_skip_points():
    src = """
@T.prim_func
def skip(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "skip"})
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(16, i * 2)
            C[vi] = A[vi]
"""
    sch = tessel.Schedule(src)
    with pytest.raises(tessel.ScheduleError,
                       match='the bindings of block "C" could not be proved to cover'):
        sch.reindex(sch.get_block("C"), ("write", 0))
    sch.reindex(sch.get_block("C"), ("read", 0))  # a read copies more than needed: fine
    a = rng.standard_normal(16).astype("float32")
    c = np.zeros(16, "float32")
    run(sch.mod, "skip", a, c)
    np.testing.assert_allclose(c[::2], a[::2])
    np.testing.assert_allclose(c[1::2], 0)


def test_reindex_write_after_a_non_dividing_split_is_refused_then_fine_without_predicate():
    src = conv_src(1)
    sch = tessel.Schedule(src)
    c = sch.get_block("C")
    n, f, y, x, rc, rh, rw = sch.get_loops(c)
    sch.split(y, [None, 4])  # 6 = 2 * 4 - 2: a predicate
    with pytest.raises(tessel.ScheduleError, match='has the predicate'):
        sch.reindex(c, ("write", 0))
    sch.reindex(c, ("read", 0))
    run_conv(sch.mod, 1)
    replays(sch, src)


# ---- transform_layout ----

@pytest.mark.parametrize("index_map,shape,access", [
    (lambda i, j: (j, i), (12, 16), "B[vj, vi]"),
    ("lambda i, j: (i // 4, j, i % 4)", (4, 12, 4), "B[vi // 4, vj, vi % 4]"),
    (lambda i, j: (i * 12 + j,), (192,), "B[vi * 12 + vj]"),
    (lambda i, j: (j // 4, i, j % 4), (3, 16, 4), "B[vj // 4, vi, vj % 4]"),
])
def test_transform_layout_of_an_intermediate(index_map, shape, access):
    sch = tessel.Schedule(TWO)
    sch.transform_layout(sch.get_block("B"), ("write", 0), index_map)
    assert alloc_shape(sch, "B") == shape
    t = text(sch)
    assert access + " = A[vi, vj] * T.float32(2)" in t
    assert "C[vi_1, vj_1] = " + access.replace("vi", "vi_1").replace("vj", "vj_1") in t
    assert 'sch.transform_layout(block=b0, buffer=["write", 0], index_map="lambda i, j: (' in (
        sch.trace.as_python())
    run_two(sch.mod)
    replays(sch, TWO)


def test_transform_layout_names_the_buffer_and_relays_a_parameter():
    sch = tessel.Schedule(TWO)
    # A parameter: the function then takes A in the new layout, (12, 16) transposed.
    sch.transform_layout(sch.get_block("B"), "A", lambda i, j: (j, i))
    t = text(sch)
    assert 'A: T.Buffer((12, 16), "float32")' in t and "A[vj, vi] * T.float32(2)" in t
    assert 'buffer=["read", 0]' in sch.trace.as_python()
    a = rng.standard_normal((16, 12)).astype("float32")
    c = np.full((16, 12), np.nan, "float32")
    run(sch.mod, "two", np.ascontiguousarray(a.T), c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)
    replays(sch, TWO)


@pytest.mark.parametrize("pad_value,fill", [("T.float32(0)", "T.float32(0)"), (0, "T.float32(0)"),
                                            (-1.5, "T.float32(-1.5)")])
def test_transform_layout_with_padding(pad_value, fill):
    sch = tessel.Schedule(TWO)
    sch.transform_layout(sch.get_block("B"), ("write", 0), "lambda i, j: (i, j // 5, j % 5)",
                         pad_value=pad_value)
    assert alloc_shape(sch, "B") == (16, 3, 5)  # 12 = 2 * 5 + 2: three padded columns per row
    t = text(sch)
    assert 'with T.sblock("B_pad"):' in t and "B[v0, v1, v2] = " + fill in t
    assert t.index('T.sblock("B_pad")') < t.index('T.sblock("B")')
    assert "pad_value=" in sch.trace.as_python()
    run_two(sch.mod)
    replays(sch, TWO)


@pytest.mark.parametrize("buffer,index_map,pad,message", [
    (("write", 0), lambda i, j: (i // 2, j), None,
     r"the index map lambda i, j: \(i // 2, j\) is not one-to-one over B's shape"),
    (("write", 0), lambda i, j: (i, j // 5, j % 5), None,
     r"the image of B's shape under .* does not fill the new shape \(16, 3, 5\); give pad_value"),
    (("read", 0), lambda i, j: (i, j // 5, j % 5), 0,
     "A is a parameter: its padding would be the caller's"),
    (("write", 0), lambda i, j: (i + 1, j), None, r"new index 0 \(i \+ 1\) starts at 1"),
    (("write", 0), lambda i: (i,), None, "takes 1 indices; B has 2 dimensions"),
    (("write", 1), lambda i, j: (j, i), None, "buffer index 1 is out of range"),
    ("D", lambda i, j: (j, i), None, 'block "B" accesses no buffer named D'),
    (("write", 0), "lambda i, i: (i, i)", None, "names the parameter i twice"),
])
def test_transform_layout_refusals(buffer, index_map, pad, message):
    sch = tessel.Schedule(TWO)
    before = sch.mod
    with pytest.raises((tessel.ScheduleError, ValueError), match=message):
        sch.transform_layout(sch.get_block("B"), buffer, index_map, pad_value=pad)
    ir.assert_structural_equal(sch.mod, before)


def test_transform_layout_of_a_matmul_output_after_a_split():
    src = """
@T.prim_func
def mm(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 24), "float32"),
       C: T.Buffer((32, 24), "float32")):
    T.func_attr({"global_symbol": "mm"})
    Y = T.alloc_buffer((32, 24), "float32")
    for i, j, k in T.grid(32, 24, 16):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(32, 24):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = Y[vi, vj] * T.float32(2)
"""
    sch = tessel.Schedule(src)
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    sch.split(j, [None, 8])
    sch.transform_layout(y, ("write", 0), lambda i, j: (j // 8, i, j % 8))
    sch.reindex(y, ("read", 0))
    assert alloc_shape(sch, "Y") == (3, 32, 8)
    a = rng.standard_normal((32, 16)).astype("float32")
    b = rng.standard_normal((16, 24)).astype("float32")
    c = np.full((32, 24), np.nan, "float32")
    run(sch.mod, "mm", a, b, c)
    np.testing.assert_allclose(c, 2 * (a @ b), rtol=1e-4, atol=1e-4)
    replays(sch, src)
