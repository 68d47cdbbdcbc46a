"""Expression helpers over the C++ folding helpers ("tessel.op.*"): operand types are promoted as
in TVM, constants folded exactly for the dtype, identities (x + 0, x * 1) applied. Python numbers
are accepted for any operand; next to an expression they take its dtype (``x + 1`` with int64 x
adds an int64 1), otherwise int -> int32, float -> float32."""

from __future__ import annotations

from typing import Any

from ._base import PrimExpr, ffi_func, to_dtype, to_expr, to_expr_pair


def _binary(name: str, doc: str):
    def fn(a: Any, b: Any) -> PrimExpr:
        return ffi_func("tessel.op." + name)(*to_expr_pair(a, b, name))

    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


add = _binary("add", "a + b")
sub = _binary("sub", "a - b")
mul = _binary("mul", "a * b")
div = _binary("div", "a / b: float division, or truncating division for integers")
truncdiv = _binary("truncdiv", "a / b rounded toward zero (C semantics)")
truncmod = _binary("truncmod", "the remainder of truncdiv (sign of a)")
floordiv = _binary("floordiv", "a // b, rounded toward minus infinity")
floormod = _binary("floormod", "a % b, the remainder of floordiv (sign of b)")
min = _binary("min", "the smaller of a and b")  # noqa: A001 (T.min)
max = _binary("max", "the larger of a and b")  # noqa: A001 (T.max)
eq = _binary("eq", "a == b as an expression (Python == on PrimExpr stays identity)")
ne = _binary("ne", "a != b as an expression (Python != on PrimExpr stays identity)")
lt = _binary("lt", "a < b")
le = _binary("le", "a <= b")
gt = _binary("gt", "a > b")
ge = _binary("ge", "a >= b")
logical_and = _binary("logical_and", "a && b over bools")
logical_or = _binary("logical_or", "a || b over bools")
shift_left = _binary("shift_left", "a << b")
shift_right = _binary("shift_right", "a >> b")
bitwise_and = _binary("bitwise_and", "a & b")
bitwise_or = _binary("bitwise_or", "a | b")
bitwise_xor = _binary("bitwise_xor", "a ^ b")


def neg(a: Any) -> PrimExpr:
    return ffi_func("tessel.op.neg")(to_expr(a, "neg a"))


def logical_not(a: Any) -> PrimExpr:
    return ffi_func("tessel.op.logical_not")(to_expr(a, "logical_not a"))


def bitwise_not(a: Any) -> PrimExpr:
    return ffi_func("tessel.op.bitwise_not")(to_expr(a, "bitwise_not a"))


def cast(dtype: Any, value: Any) -> PrimExpr:
    return ffi_func("tessel.op.cast")(to_dtype(dtype, "cast dtype"), to_expr(value, "cast value"))


def select(cond: Any, true_value: Any, false_value: Any) -> PrimExpr:
    """cond ? t : f with both sides evaluated."""
    return ffi_func("tessel.op.select")(
        to_expr(cond, "select cond"), to_expr(true_value, "select t"), to_expr(false_value, "select f")
    )


def if_then_else(cond: Any, true_value: Any, false_value: Any) -> PrimExpr:
    """cond ? t : f evaluating only the side taken."""
    return ffi_func("tessel.op.if_then_else")(
        to_expr(cond, "if_then_else cond"),
        to_expr(true_value, "if_then_else t"),
        to_expr(false_value, "if_then_else f"),
    )
