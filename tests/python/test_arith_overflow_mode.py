"""Analyzer(assume_no_overflow=True) from Python: what the mode proves that the default mode must
not, what still wraps, exact bounds, simplification, clones, errors and the Z3 model of each
mode (docs/arith.md, "Two overflow semantics")."""

import pytest

from tessel import arith, ir
from tessel.arith import Analyzer

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

needs_z3 = pytest.mark.skipif(not arith.z3_available(), reason="built without Z3")


def i32(v):
    return ir.IntImm("int32", v)


def test_default_mode_is_wrap_around():
    a = Analyzer()
    assert a.assume_no_overflow is False
    x = ir.Var("x", "int32")
    # False for x = INT32_MAX, where x + 1 wraps to INT32_MIN.
    assert not a.can_prove(x + 1 > x)


def test_mode_proves_what_no_overflow_implies():
    a = Analyzer(assume_no_overflow=True)
    assert a.assume_no_overflow is True
    x, n = ir.Var("x", "int32"), ir.Var("n", "int64")
    assert a.can_prove(x + 1 > x)
    assert a.can_prove(x - 1 < x)
    assert a.can_prove(n + ir.IntImm("int64", 1) > n)


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint32"])
def test_narrow_and_unsigned_integers_still_wrap(dtype):
    a = Analyzer(assume_no_overflow=True)
    x = ir.Var("x", dtype)
    one = ir.IntImm(dtype, 1)
    assert not a.can_prove(x + one > x)
    b = a.const_int_bound(x + one)
    full = Analyzer().const_int_bound(x)
    assert (b.min_value, b.max_value) == (full.min_value, full.max_value)


def test_bounds_are_exact():
    # The mode's bound is the exact interval of the mathematical value (it must hold for
    # operations a simplification creates too, which may leave the dtype).
    x = ir.Var("x", "int32")
    d = Analyzer().const_int_bound(x + 1)
    assert (d.min_value, d.max_value) == (INT32_MIN, INT32_MAX)
    a = Analyzer(assume_no_overflow=True)
    b = a.const_int_bound(x + 1)
    assert (b.min_value, b.max_value) == (INT32_MIN + 1, INT32_MAX + 1)
    s = a.const_int_bound(x - 1)
    assert (s.min_value, s.max_value) == (INT32_MIN - 1, INT32_MAX - 1)


def test_simplify_uses_the_mode():
    x = ir.Var("x", "int32")
    e = ir.FloorDiv(ir.Mul(x, i32(4)), i32(2))
    want = ir.Mul(x, i32(2))
    assert not ir.structural_equal(Analyzer().simplify(e), want)
    got = Analyzer(assume_no_overflow=True).simplify(e)
    assert ir.structural_equal(got, want), got


def test_clone_keeps_the_mode():
    x, y = ir.Var("x", "int32"), ir.Var("y", "int32")
    a = Analyzer(assume_no_overflow=True)
    a.bind(x, ir.Range(0, 16))
    c = a.clone()
    assert c.assume_no_overflow is True
    assert c.can_prove(y + 1 > y)
    d = Analyzer().clone()
    assert d.assume_no_overflow is False
    assert not d.can_prove(y + 1 > y)


def test_switching_after_a_bind_is_a_value_error():
    x = ir.Var("x", "int32")
    a = Analyzer()
    a.bind(x, ir.Range(0, 8))
    with pytest.raises(ValueError, match="before any variable is bound"):
        a._handle.set_assume_no_overflow(True)
    assert a.assume_no_overflow is False
    b = Analyzer()
    with b.constraint_scope(x < 8):
        with pytest.raises(ValueError, match="before any variable is bound"):
            b._handle.set_assume_no_overflow(True)
    assert b.assume_no_overflow is False


@pytest.mark.parametrize("bad", [1, 0, "yes", None, 1.0])
def test_constructor_rejects_a_non_bool(bad):
    with pytest.raises(TypeError, match="assume_no_overflow must be a bool"):
        Analyzer(assume_no_overflow=bad)


def _z3_verdict(a, cond):
    """'proved' or 'refuted': what the Z3 prover alone answered (its counters tell)."""
    before = a.z3_stats()
    cx = a.z3_counterexample(cond)
    after = a.z3_stats()
    if after["proved"] == before["proved"] + 1:
        assert cx is None
        return "proved"
    if cx is not None:
        return "refuted"
    return "unknown"


@needs_z3
def test_z3_models_each_mode():
    x = ir.Var("x", "int32")
    cond = ir.EQ(ir.FloorDiv(ir.Mul(x, i32(2)), i32(2)), x)
    wrap = Analyzer()
    assert _z3_verdict(wrap, cond) == "refuted"
    # x * 2 wraps: the counterexample is one where it does.
    cx = wrap.z3_counterexample(cond)
    assert [abs(v) for v in cx.values()] == [2**30]
    assert _z3_verdict(Analyzer(assume_no_overflow=True), cond) == "proved"


@needs_z3
def test_z3_verdicts_are_not_shared_across_modes():
    x = ir.Var("x", "int32")
    cond = ir.EQ(ir.FloorDiv(ir.Mul(x, i32(2)), i32(2)), x)
    first, second = Analyzer(), Analyzer(assume_no_overflow=True)
    assert _z3_verdict(first, cond) == "refuted"
    assert _z3_verdict(second, cond) == "proved"
    assert _z3_verdict(first, cond) == "refuted"
    # A clone of an analyzer that asked in one mode, switched (nothing bound yet) to the other.
    a = Analyzer()
    assert _z3_verdict(a, cond) == "refuted"
    c = a.clone()
    c._handle.set_assume_no_overflow(True)
    assert c.assume_no_overflow is True
    assert _z3_verdict(c, cond) == "proved"
    assert _z3_verdict(a, cond) == "refuted"
