"""Structural equality: bound variables compare by binding position, free ones by identity."""

from tessel import ir


def test_alpha_equivalent_let():
    x, y = ir.Var("x"), ir.Var("y")
    a = ir.Let(x, 1, x + 2)
    b = ir.Let(y, 1, y + 2)
    assert ir.structural_equal(a, b)
    assert ir.structural_hash(a) == ir.structural_hash(b)
    c = ir.Let(y, 1, y + 3)
    assert not ir.structural_equal(a, c)


def test_alpha_equivalent_for():
    A = ir.decl_buffer("A", [8])
    i, j = ir.Var("i"), ir.Var("j")
    a = ir.For(i, 0, 8, "serial", ir.BufferStore(A, 0.0, [i]))
    b = ir.For(j, 0, 8, "serial", ir.BufferStore(A, 0.0, [j]))
    assert ir.structural_equal(a, b)
    ir.assert_structural_equal(a, b)


def test_free_vars_compare_by_identity_unless_mapped():
    x, y = ir.Var("x"), ir.Var("x")
    assert ir.structural_equal(x + 1, x + 1)
    assert not ir.structural_equal(x + 1, y + 1)
    assert ir.structural_equal(x + 1, y + 1, map_free_vars=True)
    assert ir.structural_hash(x + 1, map_free_vars=True) == ir.structural_hash(y + 1, map_free_vars=True)


def test_names_are_ignored_but_values_are_not():
    x = ir.Var("x")
    assert ir.structural_equal(ir.Let(ir.Var("a"), x, x), ir.Let(ir.Var("b"), x, x))
    assert not ir.structural_equal(ir.const(1), ir.const(2))
    assert not ir.structural_equal(ir.const(1), ir.IntImm("int64", 1))


def test_assert_structural_equal_names_the_mismatch():
    import pytest

    with pytest.raises(AssertionError, match="first mismatch"):
        ir.assert_structural_equal(ir.const(1) + ir.Var("x"), ir.Var("y") + 2)
