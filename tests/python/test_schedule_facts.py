"""Block facts (Schedule.block_facts): affine bindings, region cover and stage pipeline, each
"yes", "no" only with a witness, or "unknown"; cached per version of the function."""

from __future__ import annotations

import pytest

import tessel

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 40), "float32"),
           C: T.Buffer((64, 40), "float32")):
    for i, j, k in T.grid(64, 40, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

TWO_BLOCKS = """
@T.prim_func
def two(A: T.Buffer((30,), "float32"), C: T.Buffer((30,), "float32")):
    B = T.alloc_buffer((30,), "float32")
    for i in range(30):
        with T.block("B"):
            vi = T.axis.spatial(30, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(30):
        with T.block("C"):
            vi = T.axis.spatial(30, i)
            C[vi] = B[vi] + T.float32(1)
"""


def facts(sch, name):
    return sch.block_facts(sch.get_block(name))


def verdicts(f):
    return f["affine_binding"], f["region_cover"], f["stage_pipeline"]


def one_block(binding, loop_extent, domain):
    return f"""
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range({loop_extent}):
        with T.block("B"):
            vi = T.axis.spatial({domain}, {binding})
            B[vi] = A[vi]
"""


def test_matmul_has_every_fact():
    f = facts(tessel.Schedule(MATMUL), "C")
    assert verdicts(f) == ("yes", "yes", "yes")
    assert f["why_not"] == ""


def test_a_producer_and_its_consumer_have_every_fact():
    sch = tessel.Schedule(TWO_BLOCKS)
    assert verdicts(facts(sch, "B")) == ("yes", "yes", "yes")
    assert verdicts(facts(sch, "C")) == ("yes", "yes", "yes")


@pytest.mark.parametrize("binding, extent, domain, witness", [
    ("i // 2", 8, 8, "no iteration of its loops visits vi = 4"),
    ("i * i", 8, 8, "vi = 9 at i = 3 lies outside its domain [0, 8)"),
    ("i * 2", 8, 16, "no iteration of its loops visits vi = 1"),
    ("i + 1", 8, 8, "vi = 8 at i = 7 lies outside its domain [0, 8)"),
])
def test_a_binding_that_misses_or_leaves_the_domain_is_not_affine(binding, extent, domain, witness):
    f = facts(tessel.Schedule(one_block(binding, extent, domain)), "B")
    assert f["affine_binding"] == "no"
    assert witness in f["why_not"]


def test_a_binding_that_visits_the_domain_but_is_not_detected_is_unknown():
    # i * i over i in [0, 2) is {0, 1}: the whole domain, but not a form the detector accepts.
    f = facts(tessel.Schedule(one_block("i * i", 2, 2)), "B")
    assert f["affine_binding"] == "unknown"
    assert "does not find them quasi-affine" in f["why_not"]


def test_a_symbolic_nest_that_cannot_be_enumerated_is_unknown_not_no():
    src = """
@T.prim_func
def f(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i // 2)
            B[vi] = A[vi]
"""
    f = facts(tessel.Schedule(src), "B")
    assert f["affine_binding"] == "unknown"
    assert "could not show" in f["why_not"]


def test_a_non_dividing_split_keeps_the_binding_affine_through_its_predicate():
    sch = tessel.Schedule(TWO_BLOCKS)
    sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 8])
    assert "T.where" in str(sch.mod)
    assert facts(sch, "C")["affine_binding"] == "yes"


SHIFTED_READ = """
@T.prim_func
def f(A: T.Buffer((17,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((17,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi + 1]
"""


def test_a_consumer_reading_past_what_its_producer_writes_is_not_covered():
    sch = tessel.Schedule(SHIFTED_READ)
    f = facts(sch, "C")
    assert verdicts(f) == ("yes", "no", "yes")
    assert "loads B[1:16 + 1]" in f["why_not"] and "only within [0:15 + 1]" in f["why_not"]
    assert facts(sch, "B")["region_cover"] == "yes"  # reads only A, which nothing in the scope writes


def test_a_strided_producer_inside_the_bounding_box_is_unknown_not_yes():
    # B[0], B[2], ..., B[14] are written; their bounding box [0, 14] holds the read [0, 14], but
    # the odd points are never written. Without an exact witness (the box comparison cannot
    # refute it) this is "unknown"; TVM 0.27 reports region_cover False.
    src = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((15,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi * 2] = A[vi]
    for i in range(15):
        with T.block("C"):
            vi = T.axis.spatial(15, i)
            C[vi] = B[vi]
"""
    f = facts(tessel.Schedule(src), "C")
    assert f["region_cover"] == "unknown"
    assert "could not be proved" in f["why_not"]


def test_a_read_under_a_condition_is_no_witness():
    # The read B[vi + 1] at vi = 15 never runs: the condition keeps it inside what B stores.
    src = SHIFTED_READ.replace(
        "C[vi] = B[vi + 1]", "C[vi] = T.if_then_else(vi < 15, B[vi + 1], T.float32(0))")
    f = facts(tessel.Schedule(src), "C")
    assert f["region_cover"] == "unknown"


def test_the_cover_is_judged_per_iteration_of_the_shared_loops_after_compute_at():
    sch = tessel.Schedule(TWO_BLOCKS)
    c = sch.get_block("C")
    assert facts(sch, "C")["region_cover"] == "yes"
    n = sch.block_facts_computed
    sch.compute_at(sch.get_block("B"), sch.get_loops(c)[0])
    assert verdicts(sch.block_facts(c)) == ("yes", "yes", "yes")
    assert sch.block_facts_computed == n + 1


def test_a_block_reading_what_it_writes_without_init_breaks_the_pipeline():
    src = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] + A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi]
"""
    sch = tessel.Schedule(src)
    for name in ("B", "C"):  # a property of the scope, so of every block in it
        f = facts(sch, name)
        assert f["stage_pipeline"] == "no"
        assert 'block "B" loads a buffer it stores into but no init' in f["why_not"]


def test_two_writers_of_one_buffer_break_the_pipeline():
    src = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B0"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in range(16):
        with T.block("B1"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
"""
    f = facts(tessel.Schedule(src), "B0")
    assert f["stage_pipeline"] == "no"
    assert "store into the same buffer" in f["why_not"]


def test_a_reduction_after_decompose_reduction_is_no_longer_a_stage():
    # The update block loses its init and loads C, which it stores: neither complete nor a
    # reduction. (TVM 0.27's cached stage_pipeline flag is the conjunction of the scope's
    # region_cover flags and says True here.)
    sch = tessel.Schedule(MATMUL)
    c = sch.get_block("C")
    sch.decompose_reduction(c, sch.get_loops(c)[2])
    f = sch.block_facts(c)
    assert f["stage_pipeline"] == "no"
    assert f["region_cover"] == "yes"  # C_init stores every C[vi, vj] the update loads


def test_an_unchanged_module_is_answered_from_the_cache():
    sch = tessel.Schedule(MATMUL)
    c = sch.get_block("C")
    assert sch.block_facts_computed == 0
    first = sch.block_facts(c)
    assert sch.block_facts_computed == 1
    assert sch.block_facts(c) == first
    assert sch.block_facts(sch.get_block("C")) == first  # another RV of the same block
    assert sch.block_facts_computed == 1


def test_a_primitive_that_changes_the_function_forces_a_recomputation():
    sch = tessel.Schedule(MATMUL)
    c = sch.get_block("C")
    sch.block_facts(c)
    i = sch.get_loops(c)[0]
    sch.split(i, [None, 16])
    assert verdicts(sch.block_facts(c)) == ("yes", "yes", "yes")
    assert sch.block_facts_computed == 2
    sch.block_facts(c)
    assert sch.block_facts_computed == 2
    sch.annotate(c, "note", 1)
    sch.block_facts(c)
    assert sch.block_facts_computed == 3


def test_the_query_is_not_traced():
    sch = tessel.Schedule(MATMUL)
    c = sch.get_block("C")
    before = sch.trace.as_python()
    sch.block_facts(c)
    assert sch.trace.as_python() == before
    assert "block_facts" not in sch.trace.as_json()


def test_a_removed_block_is_refused():
    sch = tessel.Schedule(TWO_BLOCKS)
    b = sch.get_block("B")
    sch.block_facts(b)
    sch.compute_inline(b)
    with pytest.raises(tessel.ScheduleError, match='block_facts: b0 refers to a block that compute_inline removed'):
        sch.block_facts(b)


def test_a_triangular_producer_is_no_box():
    # B stores B[vi, vj] for j < i only: not every point of its bounding box (the detector
    # refuses a loop range that uses another loop).
    src = """
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i in range(8):
        for j in range(i):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j)
                B[vi, vj] = A[vi, vj]
    for i, j in T.grid(7, 7):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj]
"""
    f = facts(tessel.Schedule(src), "C")
    assert f["region_cover"] == "unknown"
