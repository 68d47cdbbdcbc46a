"""The Z3 prover from Python: counterexamples, SMT-LIB2, stats and the rlimit (docs/arith.md)."""

import contextlib

import pytest

from tessel import arith, ir

needs_z3 = pytest.mark.skipif(not arith.z3_available(), reason="built without Z3")


def _bound():
    x, y = ir.Var("x"), ir.Var("y")
    a = arith.Analyzer()
    a.bind(x, ir.Range(0, 32))
    a.bind(y, ir.Range(0, 8))
    return a, x, y


@needs_z3
def test_counterexample_and_stats():
    a, x, y = _bound()
    cond = x * 4 + y < 128
    assert not a.can_prove(cond)
    cx = a.z3_counterexample(cond)
    assert [(v.name_hint, n) for v, n in cx.items()] == [("x", 31), ("y", 4)]
    assert a.z3_counterexample(x * 4 + y < 132) is None  # proved
    s = a.z3_stats()
    assert s["queries"] >= 2 and s["refuted"] >= 1 and s["seconds"] > 0


@needs_z3
def test_stats_count_answers_found_before_z3():
    a, x, y = _bound()
    before = a.z3_stats()
    assert before["refuted_cheaply"] == 0 and before["skipped"] == 0
    # Bounds cannot decide the product; x = 31, y = 7 (a corner of the bounds) falsifies it, so
    # no Z3 query is needed.
    assert not a.can_prove(x * y < 200)
    after = a.z3_stats()
    assert after["refuted_cheaply"] == 1
    assert after["queries"] == before["queries"]


@needs_z3
def test_the_refuter_tries_shape_values_and_the_conditions_boundaries():
    # Facts of symbolic shapes: K a multiple of 8 (a divisibility specialization) and M * K within
    # int32 (the host's checks). No point built from the range ends, 0, 1 and -1 meets them.
    tx, k, m = ir.Var("tx"), ir.Var("K"), ir.Var("M")
    a = arith.Analyzer()
    a.bind(tx, ir.Range(0, 256))
    facts = [k >= 1, m >= 1, ir.eq(ir.floormod(k, 8), 0), ir.le(m, ir.floordiv(2147483647, k))]
    with contextlib.ExitStack() as stack:
        for f in facts:
            stack.enter_context(a.constraint_scope(f))
        # Refuted at a shape-like point (every variable at 8, say).
        assert not a.can_prove(m > 4096)
        # Refuted at a boundary point: K at 8 (the constant 7 plus 1) with tx at 0.
        assert not a.can_prove(ir.le(k, ir.floormod(tx, 8) * 8 + 7))
        stats = a.z3_stats()
        assert stats["queries"] == 0 and stats["refuted_cheaply"] == 2


@needs_z3
def test_smtlib2_and_rlimit():
    a, x, y = _bound()
    text = a.get_smtlib2(x * y < 300)
    assert "(check-sat)" in text and "declare-fun x" in text
    a.set_z3_rlimit(1234)
    assert a.z3_rlimit() == 1234
    assert a.clone().z3_rlimit() == 1234
    with pytest.raises(ValueError):
        a.set_z3_rlimit(0)
    with pytest.raises(TypeError):
        a.set_z3_rlimit("10")


def test_off_build_answers_unknown():
    if arith.z3_available():
        pytest.skip("built with Z3")
    a, x, y = _bound()
    assert a.z3_counterexample(x * 4 + y < 128) is None
    with pytest.raises(ValueError):
        a.get_smtlib2(x < 3)


@needs_z3
def test_cli_prints_the_counterexample(cli):
    import subprocess

    r = subprocess.run([str(cli), "prove", "x * 4 + y < 128", "--bind", "x=0:32", "--bind",
                        "y=0:8"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stdout == "not proved: counterexample x = 31, y = 4\n", r.stderr
