"""tessel.arith.Analyzer from Python: every method, constraint scopes, clones, errors."""

import pytest

from tessel import arith, ir
from tessel.arith import Analyzer, ConstIntBound, IntSet, ModularSet


def var(name="x", dtype="int32"):
    return ir.Var(name, dtype)


def test_const_int_bound_of_bound_var():
    x = var()
    a = Analyzer()
    a.bind(x, ir.Range(0, 64))
    b = a.const_int_bound(x * 4 + 3)
    assert isinstance(b, ConstIntBound)
    assert (b.min_value, b.max_value) == (3, 255)


def test_const_int_bound_infinities_mirror_tvm():
    assert ConstIntBound.POS_INF == 2**63 - 1 and ConstIntBound.NEG_INF == -(2**63)
    b = Analyzer().const_int_bound(var("n", "int64"))
    assert (b.min_value, b.max_value) == (ConstIntBound.NEG_INF, ConstIntBound.POS_INF)
    b32 = Analyzer().const_int_bound(var())
    assert (b32.min_value, b32.max_value) == (-(2**31), 2**31 - 1)
    assert "ConstIntBound[-inf, +inf]" == repr(Analyzer().const_int_bound(var("m", "int64")))


def test_python_ints_are_expressions():
    a = Analyzer()
    b = a.const_int_bound(7)
    assert (b.min_value, b.max_value) == (7, 7)
    assert int(a.simplify(5)) == 5
    assert a.can_prove(True) and not a.can_prove(False)


def test_modular_set():
    x = var()
    m = Analyzer().modular_set(x * 8 + 3)
    assert isinstance(m, ModularSet)
    assert (m.coeff, m.base) == (8, 3)
    c = Analyzer().modular_set(ir.const(10))
    assert (c.coeff, c.base) == (0, 10)


def test_int_set_with_range_and_intset_domains():
    x, y = var("x"), var("y")
    a = Analyzer()
    s = a.int_set(x * 2 + 1, {x: ir.Range(0, 8)})
    assert isinstance(s, IntSet)
    assert (int(s.min_value), int(s.max_value)) == (1, 15)
    s2 = a.int_set(x + y, {x: IntSet.interval(0, 3), y: IntSet.single_point(10)})
    assert (int(s2.min_value), int(s2.max_value)) == (10, 13)
    s3 = a.int_set(x, {x: IntSet.from_range(ir.Range(4, 4))})
    assert (int(s3.min_value), int(s3.max_value)) == (4, 7)
    assert IntSet.everything().is_everything()
    assert IntSet.single_point(3).is_single_point()
    assert not IntSet.interval(0, 3).is_single_point()
    ev = arith.eval_set(x + 1, {x: ir.Range(0, 4)})
    assert (int(ev.min_value), int(ev.max_value)) == (1, 4)


def test_int_set_symbolic_end():
    x, n = var("x"), var("n")
    s = Analyzer().int_set(x, {x: ir.Range(0, n)})
    assert int(s.min_value) == 0
    assert ir.structural_equal(s.max_value, n - 1)


def test_int_set_errors():
    x = var()
    a = Analyzer()
    with pytest.raises(TypeError, match="Range or an IntSet"):
        a.int_set(x, {x: (0, 4)})
    with pytest.raises(TypeError, match="dom_map key"):
        a.int_set(x, {"x": ir.Range(0, 4)})
    with pytest.raises(TypeError, match="cannot be constructed"):
        IntSet()


def test_simplify_folds_known_values():
    x = var()
    a = Analyzer()
    a.bind(x, ir.Range(0, 8))
    # x // 8 is 0 on [0, 8): the bound makes it a constant.
    r = a.simplify(ir.floordiv(x, 8) + 3)
    assert ir.structural_equal(r, ir.const(3))
    assert ir.structural_equal(a.simplify(x + 0, steps=0), x)


def test_simplify_steps_checked():
    with pytest.raises(ValueError, match="steps"):
        Analyzer().simplify(var(), steps=-1)
    with pytest.raises(TypeError, match="steps"):
        Analyzer().simplify(var(), steps="2")
    with pytest.raises(TypeError, match="steps must be an int, got bool"):
        Analyzer().simplify(var(), steps=True)


def test_python_values_checked_in_cpp():
    # The Python methods pass their arguments straight to C++, which checks them.
    a = Analyzer()
    five = a.simplify(5)
    assert isinstance(five, ir.IntImm) and five.value == 5 and str(five.dtype) == "int32"
    assert a.simplify(True).dtype == ir.const(True).dtype
    assert a.can_prove(True) and not a.can_prove(False)
    with pytest.raises(TypeError, match="simplify: expected a PrimExpr or a Python int, got str"):
        a.simplify("x + 1")
    with pytest.raises(TypeError, match="can_prove: expected a PrimExpr or a Python int, got float"):
        a.can_prove(1.5)
    with pytest.raises(ValueError, match="can_prove: -4294967296 does not fit in int32"):
        a.can_prove(-(2**32))
    assert a.can_prove(var() * 0 <= 0, strength=arith.ProofStrength.SYMBOLIC_BOUND)


def test_rewrite_and_canonical_simplify_are_equivalences():
    # Whatever stages this build has, the result must be the same value: check on the domain.
    x = var()
    a = Analyzer()
    a.bind(x, ir.Range(0, 64))
    e = ir.floordiv(x, 8) * 8 + ir.floormod(x, 8)
    for f in (a.rewrite_simplify, a.canonical_simplify, a.simplify):
        r = f(e)
        assert a.can_prove_equal(r, x) or a.can_prove(ir.eq(r - x, 0)) or \
            ir.structural_equal(r, e) or _agrees_everywhere(r, e, x, range(64))


def _agrees_everywhere(a_expr, b_expr, x, values):
    for v in values:
        ana = Analyzer()
        ana.bind(x, v)
        if int(ana.simplify(a_expr)) != int(ana.simplify(b_expr)):
            return False
    return True


def test_can_prove_with_bindings():
    i, j = var("i"), var("j")
    a = Analyzer()
    a.bind(i, ir.Range(0, 16))
    a.bind(j, ir.Range(0, 4))
    assert a.can_prove(i * 4 + j < 64)
    assert not a.can_prove(i * 4 + j < 63)
    assert a.can_prove(i * 4 + j < 64, strength="symbolic_bound")


def test_can_prove_is_sound_under_wraparound():
    x = var()
    assert not Analyzer().can_prove(x + 1 > x)  # false at INT32_MAX


def test_can_prove_strength_checked():
    a = Analyzer()
    with pytest.raises(ValueError, match="strength"):
        a.can_prove(var() < 3, strength="strong")
    with pytest.raises(TypeError, match="strength"):
        a.can_prove(var() < 3, strength=1)
    assert arith.ProofStrength.SYMBOLIC_BOUND == "symbolic_bound"


def test_can_prove_non_bool_is_type_error():
    with pytest.raises(TypeError):
        Analyzer().can_prove(var() + 1)


def test_can_prove_equal_and_helpers():
    x = var()
    a = Analyzer()
    a.bind(x, ir.Range(0, 8))
    assert a.can_prove_equal(x + 1, x + 1)
    assert a.can_prove_equal(ir.floordiv(x, 8), 0)
    assert not a.can_prove_equal(x, 0)
    assert a.can_prove_greater_equal(x, 0) and not a.can_prove_greater_equal(x, 1)
    assert a.can_prove_less(x, 8) and not a.can_prove_less(x, 7)


def test_bind_value_and_int():
    x, n = var("x"), var("n", "int64")
    a = Analyzer()
    a.bind(x, 5)
    assert a.can_prove(ir.eq(x, 5))
    a.bind(n, 7)  # the int takes n's dtype
    b = a.const_int_bound(n)
    assert (b.min_value, b.max_value) == (7, 7)


def test_bind_rebind_needs_override():
    x = var()
    a = Analyzer()
    a.bind(x, ir.Range(0, 8))
    a.bind(x, ir.Range(0, 8))  # the same binding again is fine
    with pytest.raises(ValueError, match="already bound"):
        a.bind(x, ir.Range(0, 4))
    a.bind(x, ir.Range(0, 4), allow_override=True)
    assert a.const_int_bound(x).max_value == 3


def test_bind_errors():
    a = Analyzer()
    with pytest.raises(TypeError, match="tessel.ir.Var"):
        a.bind("x", ir.Range(0, 4))
    with pytest.raises(TypeError, match="PrimExpr or a Python int"):
        a.bind(var(), 1.5)
    with pytest.raises(TypeError):
        a.bind(var("n", "int64"), var("m", "int32"))  # dtype mismatch is the C++ TypeError


def test_update():
    x = var()
    a = Analyzer()
    a.update(x, ConstIntBound(1, 10))
    b = a.const_int_bound(x)
    assert (b.min_value, b.max_value) == (1, 10)
    a.update(x, ModularSet(4, 1))
    m = a.modular_set(x)
    assert (m.coeff, m.base) == (4, 1)
    with pytest.raises(TypeError, match="ConstIntBound or a ModularSet"):
        a.update(x, ir.Range(0, 4))
    with pytest.raises(ValueError):
        a.update(x, ConstIntBound(0, 3))  # different bound without override
    a.update(x, ConstIntBound(0, 3), override=True)
    assert a.const_int_bound(x).max_value == 3


def test_constraint_scope():
    x = var()
    a = Analyzer()
    with a.constraint_scope(x < 10):
        assert a.const_int_bound(x).max_value == 9
        assert a.can_prove(x < 11)
    assert a.const_int_bound(x).max_value == 2**31 - 1
    assert not a.can_prove(x < 11)


def test_constraint_scope_nested():
    x = var()
    a = Analyzer()
    with a.constraint_scope(0 <= x):
        with a.constraint_scope(x < 16):
            b = a.const_int_bound(x)
            assert (b.min_value, b.max_value) == (0, 15)
        b = a.const_int_bound(x)
        assert (b.min_value, b.max_value) == (0, 2**31 - 1)
    assert a.const_int_bound(x).min_value == -(2**31)


def test_constraint_scope_pops_on_exception():
    x = var()
    a = Analyzer()
    with pytest.raises(RuntimeError, match="inside"):
        with a.constraint_scope(x < 10):
            with a.constraint_scope(x >= 2):
                raise RuntimeError("inside")
    b = a.const_int_bound(x)
    assert (b.min_value, b.max_value) == (-(2**31), 2**31 - 1)
    assert not a.can_prove(x < 10)


def test_constraint_scope_checks():
    a = Analyzer()
    with pytest.raises(TypeError, match="bool"):
        a.constraint_scope(var() + 1)
    scope = a.constraint_scope(var() < 3)
    with scope:
        pass
    with pytest.raises(RuntimeError, match="only once"):
        with scope:
            pass


def test_clone_copies_bindings_and_is_independent():
    x, y = var("x"), var("y")
    a = Analyzer()
    a.bind(x, ir.Range(0, 8))
    c = a.clone()
    assert c.const_int_bound(x).max_value == 7
    c.bind(y, ir.Range(0, 4))
    assert a.const_int_bound(y).max_value == 2**31 - 1  # the original does not see it
    a.bind(x, ir.Range(0, 100), allow_override=True)
    assert c.const_int_bound(x).max_value == 7  # nor the clone the original's re-binding


def test_clone_inside_scope_keeps_the_facts():
    x = var()
    a = Analyzer()
    with a.constraint_scope(x < 10):
        c = a.clone()
    assert not a.can_prove(x < 10)
    assert c.can_prove(x < 10)  # the clone keeps the scope's fact for good
    with c.constraint_scope(x >= 5):
        assert c.const_int_bound(x).min_value == 5
        assert a.const_int_bound(x).min_value == -(2**31)
    assert c.const_int_bound(x).max_value == 9


def test_results_print():
    a = Analyzer()
    assert repr(a.modular_set(var() * 4)) == "ModularSet(coeff=4, base=0)"
    assert "IntSet[" in repr(a.int_set(var(), {}))


def test_expression_type_errors():
    a = Analyzer()
    with pytest.raises(TypeError, match="simplify"):
        a.simplify("x + 1")
    with pytest.raises(TypeError, match="const_int_bound"):
        a.const_int_bound(1.5)
    with pytest.raises(ValueError, match="does not fit"):
        a.simplify(2**40)


def test_bind_refuses_an_empty_range():
    """A range of extent 0 or less would make every later fact about the variable vacuous
    (y == 0 and y == 5 both "proved"): it is a ValueError naming the variable."""
    a = arith.Analyzer()
    y = ir.Var("y")
    for extent in (-3, 0):
        with pytest.raises(ValueError, match=r"Bind: y: the range with min 0 and extent .* is empty"):
            a.bind(y, ir.Range(0, extent))
    assert not a.can_prove(y == 0) and not a.can_prove(y == 5)
    # A symbolic extent that may be positive is accepted.
    n = ir.Var("n")
    a.bind(n, ir.Range(1, 100))
    a.bind(y, ir.Range(0, n))
    assert a.can_prove(y < n)
    m = ir.Var("m")
    a.bind(m, ir.Range(-10, 5))  # m in [-10, -6]: a range of y over [0, m) is empty for sure
    with pytest.raises(ValueError, match="is empty"):
        a.bind(ir.Var("z"), ir.Range(0, m))
