"""Schedule primitives (lookups, split, fuse, reorder, loop kinds, annotations): the IR after each,
each refusal with its message, the trace printed as Python and as JSON, both replayed onto a fresh
schedule to a structurally equal module, and scheduled programs run through the C backend
against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi

import tessel
from schedule_testing import replays
from tessel import ir

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 40), "float32"),
           C: T.Buffer((64, 40), "float32")):
    T.func_attr({"global_symbol": "matmul"})
    for i, j, k in T.grid(64, 40, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

TWO_BLOCKS = """
@T.prim_func
def two(A: T.Buffer((30,), "float32"), B: T.Buffer((30,), "float32"), C: T.Buffer((30,), "float32")):
    T.func_attr({"global_symbol": "two"})
    for i in range(30):
        with T.block("B"):
            vi = T.axis.spatial(30, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(30):
        with T.block("C"):
            vi = T.axis.spatial(30, i)
            C[vi] = B[vi] + T.float32(1)
"""

rng = np.random.default_rng(5)


def run_matmul(mod):
    a = rng.standard_normal((64, 48)).astype("float32")
    b = rng.standard_normal((48, 40)).astype("float32")
    c = np.full((64, 40), np.nan, "float32")
    tessel.build(mod)["matmul"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-4)


def loop_text(sch):
    return tessel.as_text(sch.mod)


# ---- lookups ----

def test_lookups_and_their_errors():
    sch = tessel.Schedule(TWO_BLOCKS)
    b = sch.get_block("B")
    c = sch.get_sblock("C")
    assert len(sch.get_loops(b)) == 1 and len(sch.get_loops(c)) == 1
    root_loops = sch.get_loops(c)
    assert len(sch.get_child_blocks(root_loops[0])) == 1
    with pytest.raises(tessel.ScheduleError, match=r'get_block: no block named "D" in function'):
        sch.get_block("D")
    assert 'sch.get_block(name="B")' in sch.trace.as_python()
    replays(sch, TWO_BLOCKS)


# ---- split ----

def test_split_with_an_inferred_factor_keeps_results():
    sch = tessel.Schedule(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 16])
    text = loop_text(sch)
    assert "for i_0 in range(4):" in text and "for i_1 in range(16):" in text
    assert "T.where" not in text  # 4 * 16 == 64 is proved: no predicate
    assert "l4, l5 = sch.split(loop=l1, factors=[None, 16])" in sch.trace.as_python()
    run_matmul(sch.mod)
    replays(sch, MATMUL)


def test_a_non_dividing_split_adds_the_predicate():
    sch = tessel.Schedule(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(j, [None, 16])  # 40 = 3 * 16 - 8
    text = loop_text(sch)
    assert "for j_0 in range(3):" in text
    assert "T.where(j_0 * 16 + j_1 < 40)" in text
    run_matmul(sch.mod)
    replays(sch, MATMUL)


@pytest.mark.parametrize("factors,message", [
    ([None, None], "at most one factor may be None"),
    ([0, 64], r"factor 0 \(0\) is not provably positive"),
    ([2, 16], r"the product of the factors \(32\) could not be proved to cover the loop's extent 64"),
    ([64], "needs at least two factors"),
])
def test_split_refusals(factors, message):
    sch = tessel.Schedule(MATMUL)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tessel.ScheduleError, match="split: " + message):
        sch.split(i, factors)


def test_a_removed_loop_is_named_by_the_primitive_that_removed_it():
    sch = tessel.Schedule(MATMUL)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, [8, 8])
    with pytest.raises(tessel.ScheduleError, match="refers to a loop that split replaced"):
        sch.split(i, [8, 8])


def test_split_refuses_a_parallel_loop():
    sch = tessel.Schedule(MATMUL)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    with pytest.raises(tessel.ScheduleError,
                       match=r"the loop i is parallel; only a serial loop can be split\n"):
        sch.split(i, [8, 8])


# ---- fuse and reorder ----

def test_fuse_and_reorder():
    sch = tessel.Schedule(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)  # the two swap places: k j i
    text = loop_text(sch)
    assert text.index("for k in") < text.index("for j in") < text.index("for i in")
    sch.fuse(j, i)
    text = loop_text(sch)
    assert "for j_i_fused in range(2560):" in text
    assert "j_i_fused % 64" in text and "j_i_fused // 64" in text
    run_matmul(sch.mod)
    replays(sch, MATMUL)
    assert "sch.fuse(l" in sch.trace.as_python() and "sch.reorder(l3, l1)" in sch.trace.as_python()


def test_fuse_and_reorder_refusals():
    sch = tessel.Schedule(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tessel.ScheduleError, match="fuse: the loops i, k are not a chain"):
        sch.fuse(i, k)
    with pytest.raises(tessel.ScheduleError, match="reorder: the loop i is given twice"):
        sch.reorder(i, i)
    sch2 = tessel.Schedule(TWO_BLOCKS)
    (a,) = sch2.get_loops(sch2.get_block("B"))
    (b,) = sch2.get_loops(sch2.get_block("C"))
    with pytest.raises(tessel.ScheduleError, match="is not on the path of the others"):
        sch2.reorder(a, b)


# ---- loop kinds ----

def test_parallel_vectorize_unroll_bind():
    sch = tessel.Schedule(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    sch.vectorize(j)
    sch.unroll(k)
    text = loop_text(sch)
    assert "T.parallel(64)" in text and "T.vectorized(40)" in text and "T.unroll(48)" in text
    run_matmul(sch.mod)
    replays(sch, MATMUL)


def test_loop_kind_refusals():
    sch = tessel.Schedule(MATMUL)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tessel.ScheduleError,
                       match='parallel: the loop k feeds the reduce iterator vk of block "C"'):
        sch.parallel(k)
    with pytest.raises(tessel.ScheduleError, match="only data-parallel iterators can be bound"):
        sch.bind(k, "blockIdx.x")
    with pytest.raises(tessel.ScheduleError, match="'warp.x' is not a thread tag"):
        sch.bind(i, "warp.x")
    # A loop bound to threadIdx may feed a reduction (a cross-thread reduction).
    sch.bind(k, "threadIdx.x")
    sch.bind(i, "blockIdx.x")
    with pytest.raises(tessel.ScheduleError, match="is already bound to blockIdx.x"):
        sch.bind(i, "blockIdx.y")
    replays(sch, MATMUL)


def test_the_error_prints_the_function_with_the_loop_marked():
    sch = tessel.Schedule(MATMUL)
    _, _, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tessel.ScheduleError) as err:
        sch.vectorize(k)
    lines = str(err.value).splitlines()
    at = next(n for n, line in enumerate(lines) if "for k in range(48):" in line)
    assert set(lines[at + 1].strip()) == {"^"}


# ---- annotations ----

def test_annotate_and_unannotate():
    sch = tessel.Schedule(MATMUL)
    b = sch.get_block("C")
    i, _, _ = sch.get_loops(b)
    sch.annotate(i, "pragma_unroll", 4)
    sch.annotate(b, "note", "hot")
    text = loop_text(sch)
    assert '"pragma_unroll": 4' in text and '"note": "hot"' in text
    replays(sch, MATMUL)
    sch.unannotate(i, "pragma_unroll")
    with pytest.raises(tessel.ScheduleError, match="has no annotation 'pragma_unroll'"):
        sch.unannotate(i, "pragma_unroll")
    assert "pragma_unroll" not in loop_text(sch)
    replays(sch, MATMUL)


# ---- the trace format ----

def test_trace_json_is_versioned():
    sch = tessel.Schedule(MATMUL)
    sch.get_loops(sch.get_block("C"))
    js = sch.trace.as_json()
    assert js.startswith('{"version":1,')
    with pytest.raises(ValueError, match="format version 2 is not supported"):
        tessel.Schedule.from_json(MATMUL, js.replace('"version":1', '"version":2'))
    with pytest.raises(ValueError, match="instruction 0: unknown primitive 'frobnicate'"):
        tessel.Schedule.from_json(MATMUL, '{"version":1,"insts":[["frobnicate",[],[]]]}')
    with pytest.raises(ValueError, match="uses l9 before any instruction makes it"):
        tessel.Schedule.from_json(MATMUL, '{"version":1,"insts":[["parallel",[{"rv":"l9"}],[]]]}')


def test_a_full_cpu_schedule_of_matmul():
    sch = tessel.Schedule(MATMUL)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, k, i1, j1)
    f = sch.fuse(i0, j0)
    sch.parallel(f)
    sch.unroll(i1)
    sch.vectorize(j1)
    run_matmul(sch.mod)
    replays(sch, MATMUL)


# ---- sampling ----

def test_sample_perfect_tile_drives_split_and_replays_its_decision():
    draws = set()
    for seed in range(1, 9):
        sch = tessel.Schedule(MATMUL, seed=seed)
        i, _, _ = sch.get_loops(sch.get_block("C"))
        vs = sch.sample_perfect_tile(i, n=3, max_innermost_factor=8)
        values = [sch.get(v) for v in vs]
        assert np.prod(values) == 64 and values[-1] <= 8
        draws.add(tuple(values))
        sch.split(i, vs)
        assert f"decision={list(values)}" in sch.trace.as_python()
        run_matmul(sch.mod)
        replays(sch, MATMUL)
    assert len(draws) > 1, "eight seeds drew one factorization"
    # The same seed draws the same.
    a, b = tessel.Schedule(MATMUL, seed=3), tessel.Schedule(MATMUL, seed=3)
    for s in (a, b):
        s.sample_perfect_tile(s.get_loops(s.get_block("C"))[0], n=2)
    assert a.trace.as_python() == b.trace.as_python()


def test_sampling_refusals_and_decisions():
    sch = tessel.Schedule(MATMUL)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    (v,) = [sch.sample_categorical([4, 8, 16], [0.0, 1.0, 0.0])]
    assert sch.get(v) == 8
    w = sch.sample_categorical([4, 8, 16], [1, 1, 1], decision=2)
    assert sch.get(w) == 16
    sch.split(j, [None, w])
    assert "T.where" in loop_text(sch)  # 40 is not a multiple of 16
    replays(sch, MATMUL)
    with pytest.raises(tessel.ScheduleError, match=r"the decision \[2, 2\] is not 2 factors of 64"):
        sch.sample_perfect_tile(i, n=2, decision=[2, 2])
    with pytest.raises(tessel.ScheduleError, match="no factorization of 64 into 2 factors has its "
                                                   "innermost at most 0|is not positive"):
        sch.sample_perfect_tile(i, n=0)
    with pytest.raises(tessel.ScheduleError, match="the probabilities sum to 0"):
        sch.sample_categorical([1], [0.0])


# ---- decompose_reduction ----

def test_decompose_reduction_moves_the_init_before_the_loop():
    sch = tessel.Schedule(MATMUL)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 16])
    sch.reorder(i0, j, k, i1)  # a data-parallel loop under the reduction loop
    init = sch.decompose_reduction(b, k)
    text = loop_text(sch)
    assert 'T.sblock("C_init")' in text and "for i_1_init in range(16):" in text
    assert text.index('"C_init"') < text.index("for k in range(48):")
    assert "T.init()" not in text
    assert len(sch.get_loops(init)) == 3  # i_0, j, i_1_init
    run_matmul(sch.mod)
    replays(sch, MATMUL)


def test_decompose_reduction_refusals():
    sch = tessel.Schedule(MATMUL)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.reorder(k, i)  # k j i: k is above i
    with pytest.raises(tessel.ScheduleError,
                       match="a loop above i feeds the reduce iterator vk: the init would run "
                             "once per reduction step"):
        sch.decompose_reduction(b, i)
    sch2 = tessel.Schedule(TWO_BLOCKS)
    b2 = sch2.get_block("B")
    (l2,) = sch2.get_loops(b2)
    with pytest.raises(tessel.ScheduleError, match='block "B" has no init'):
        sch2.decompose_reduction(b2, l2)


# ---- compute_inline ----

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


def run_pc(mod):
    a = rng.standard_normal((16, 12)).astype("float32")
    c = np.full((12, 16), np.nan, "float32")
    tessel.build(mod)["pc"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(c))
    np.testing.assert_allclose(c, (a * 2).T + 1, rtol=1e-6)


def test_compute_inline():
    sch = tessel.Schedule(PRODUCER_CONSUMER)
    b = sch.get_block("B")
    sch.compute_inline(b)
    text = loop_text(sch)
    assert 'T.sblock("B")' not in text and "alloc_buffer" not in text
    assert "A[vj, vi] * T.float32(2.0) + T.float32(1.0)" in text or "A[vj, vi] * T.float32(2)" in text
    run_pc(sch.mod)
    replays(sch, PRODUCER_CONSUMER)
    with pytest.raises(tessel.ScheduleError, match="refers to a block that compute_inline removed"):
        sch.get_loops(b)


def test_compute_inline_refusals():
    sch = tessel.Schedule(PRODUCER_CONSUMER)
    with pytest.raises(tessel.ScheduleError, match="writes C, which the function does not allocate"):
        sch.compute_inline(sch.get_block("C"))
    sch = tessel.Schedule(MATMUL)
    with pytest.raises(tessel.ScheduleError, match='block "C" is a reduction'):
        sch.compute_inline(sch.get_block("C"))


# ---- random schedules: whatever a sequence of primitives accepts keeps the result ----

@pytest.mark.parametrize("seed", range(6))
def test_random_schedules_keep_results(seed):
    import random

    r = random.Random(seed)
    sch = tessel.Schedule(MATMUL, seed=seed + 1)
    b = sch.get_block("C")
    applied = 0
    for _ in range(6):
        loops = sch.get_loops(b)
        choice = r.choice(["split", "split", "reorder", "fuse", "sample", "kind"])
        before = sch.mod
        try:
            if choice == "split":
                loop = r.choice(loops)
                sch.split(loop, [None, r.choice([2, 3, 4, 7, 8, 16])])
            elif choice == "sample":
                loop = r.choice(loops)
                sch.split(loop, sch.sample_perfect_tile(loop, n=2, max_innermost_factor=8))
            elif choice == "reorder":
                picked = r.sample(loops, min(len(loops), r.choice([2, 3])))
                sch.reorder(*picked)
            elif choice == "fuse":
                at = r.randrange(len(loops) - 1)
                sch.fuse(loops[at], loops[at + 1])
            else:
                getattr(sch, r.choice(["parallel", "vectorize", "unroll"]))(r.choice(loops))
            applied += 1
        except tessel.ScheduleError:
            ir.assert_structural_equal(sch.mod, before)  # a refused step changes nothing
    assert applied > 0
    run_matmul(sch.mod)
    replays(sch, MATMUL)


def test_producers_and_consumers_come_from_the_bodies():
    sch = tessel.Schedule(PRODUCER_CONSUMER)
    b, c = sch.get_block("B"), sch.get_block("C")
    assert [repr(x) for x in sch.get_consumers(b)] != []
    (consumer,) = sch.get_consumers(b)
    (producer,) = sch.get_producers(c)
    assert sch.get_producers(b) == [] and sch.get_consumers(c) == []
    # The RVs found name the blocks: inlining the producer through its RV works.
    sch.compute_inline(producer)
    run_pc(sch.mod)
    assert "sch.get_producers(block=b1)" in sch.trace.as_python()
    replays(sch, PRODUCER_CONSUMER)
    sch2 = tessel.Schedule(MATMUL)
    assert sch2.get_producers(sch2.get_block("C")) == []
