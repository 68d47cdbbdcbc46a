"""Operator overloads go through the folding helpers: promotion, exact folding, identities."""

import pytest

from tessel import ir


def const_value(e):
    assert isinstance(e, (ir.IntImm, ir.FloatImm)), f"not folded: {e!r}"
    return e.value


@pytest.mark.parametrize(
    "fn, expected",
    [
        (lambda a, b: a + b, 9),
        (lambda a, b: a - b, -5),
        (lambda a, b: a * b, 14),
        (lambda a, b: a // b, 0),
        (lambda a, b: a % b, 2),
        (lambda a, b: a << b, 256),
        (lambda a, b: a >> b, 0),
        (lambda a, b: a & b, 2),
        (lambda a, b: a | b, 7),
        (lambda a, b: a ^ b, 5),
        (lambda a, b: ir.min(a, b), 2),
        (lambda a, b: ir.max(a, b), 7),
    ],
)
def test_integer_folding(fn, expected):
    assert const_value(fn(ir.const(2), ir.const(7))) == expected


def test_floor_and_trunc_division_differ_on_negatives():
    assert const_value(ir.const(-7) // 2) == -4
    assert const_value(ir.const(-7) % 2) == 1
    assert const_value(ir.truncdiv(-7, 2)) == -3
    assert const_value(ir.truncmod(-7, 2)) == -1
    assert const_value(ir.floordiv(7, -2)) == -4


def test_unary():
    assert const_value(-ir.const(5)) == -5
    assert const_value(~ir.const(0)) == -1
    x = ir.Var("x")
    assert type(-x) in (ir.Sub, ir.Mul)  # negation of a variable is built, not folded
    p = ir.Var("p", "bool")
    assert type(~p) is ir.Not


def test_comparisons_build_bool_expressions():
    x = ir.Var("x")
    for e, cls in [(x < 1, ir.LT), (x <= 1, ir.LE), (x > 1, ir.GT), (x >= 1, ir.GE),
                   (ir.eq(x, 1), ir.EQ), (ir.ne(x, 1), ir.NE)]:
        assert type(e) is cls and str(e.dtype) == "uint1"
    assert const_value(ir.const(1) < 2) == 1
    assert const_value(ir.eq(3, 4)) == 0


def test_python_eq_is_identity_not_an_expression():
    x, y = ir.Var("x"), ir.Var("x")
    assert (x == x) is True
    assert (x == y) is False
    assert (x != y) is True
    assert len({x, y, x}) == 2  # hashable by identity


def test_symbolic_bool_is_refused():
    x = ir.Var("x")
    with pytest.raises(ValueError, match="Python bool"):
        bool(x < 3)
    assert bool(ir.const(1) < 2)  # a folded constant is fine


def test_identities():
    x = ir.Var("x")
    assert (x + 0).same_as(x)
    assert (x * 1).same_as(x)
    assert const_value(x * 0) == 0
    assert (0 + x).same_as(x)


def test_python_scalars_take_the_other_operand_dtype():
    n = ir.Var("n", "int64")
    e = n + 1
    assert e.dtype == "int64" and e.b.dtype == "int64"
    r = 1 - n
    assert type(r) is ir.Sub and r.a.dtype == "int64"
    h = ir.Var("h", "float16")
    assert (h * 2).dtype == "float16"
    assert (ir.Var("i") * 0.5).dtype == "float32"  # an integer next to a float is promoted


def test_promotion_and_wrapping():
    x = ir.Var("x")
    n = ir.Var("n", "int64")
    assert (x + n).dtype == "int64"
    assert const_value(ir.IntImm("int8", 127) + 1) == -128
    assert const_value(ir.IntImm("uint8", 0) - 1) == 255
    assert const_value(ir.const(2.5) * 2) == 5.0


def test_bool_and_or_are_logical():
    p, q = ir.Var("p", "bool"), ir.Var("q", "bool")
    assert type(p & q) is ir.And
    assert type(p | q) is ir.Or
    x = ir.Var("x")
    assert type(x & 3) is ir.Call  # bitwise on integers is an intrinsic call


def test_cast_select_if_then_else():
    x = ir.Var("x")
    assert x.astype("int64").dtype == "int64"
    assert const_value(ir.cast("int8", 300)) == 44
    assert ir.select(x < 1, x, 2).dtype == "int32"
    assert const_value(ir.select(True, 1, 2)) == 1
    assert ir.if_then_else(x < 1, x, 2).dtype == "int32"


def test_division_by_constant_zero_is_an_error():
    with pytest.raises(Exception, match="zero"):
        ir.const(1) // 0
