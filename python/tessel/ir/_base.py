"""Base classes of the Python node types, and the conversions from Python values to IR values.

Every node class is registered with tvm-ffi under its C++ type key ("tessel.ir.<Name>"), so an
object that crosses the FFI comes back as an instance of the class registered here. Fields are the
C++ reflection fields, read-only, under their C++ names.
"""

from __future__ import annotations

from typing import Any

import tvm_ffi
from tvm_ffi import Object

from .. import _lib


def ffi_func(name: str):
    """The libtessel global function ``name``; a RuntimeError when this build lacks it."""
    fn = _lib.get_global_func(name)
    if fn is None:
        raise RuntimeError(f"tessel: global function {name!r} is not registered in {_lib.LIB_PATH}")
    return fn


class Node(Object):
    """Common base of the tessel IR node classes: ``str()`` gives the text format."""

    def __str__(self) -> str:
        as_text = _lib.get_global_func("tessel.ir.AsText")
        if as_text is None:  # the printer is not part of this build
            return repr(self)
        return as_text(self)

    def script(self) -> str:
        """The text format (TVM's name for it): the same as ``str(node)``."""
        return str(self)

    def show(self) -> None:
        """Prints the text format."""
        print(str(self))


def to_dtype(value: Any, what: str = "dtype") -> tvm_ffi.dtype:
    """A tvm-ffi dtype from a string or dtype; "bool" means uint1, as in the C++ DataType."""
    if isinstance(value, tvm_ffi.dtype):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        raise TypeError(f"{what}: expected a dtype string such as 'int32', got {type(value).__name__}")
    if text == "bool" or text.startswith("boolx"):
        text = "uint1" + text[4:]
    try:
        return tvm_ffi.dtype(text)
    except Exception as err:  # tvm-ffi raises a plain error on unknown names
        raise ValueError(f"{what}: {text!r} is not a data type") from err


def const(value: Any, dtype: Any = None):
    """An IR constant: int -> int32 IntImm, float -> float32 FloatImm, bool -> bool IntImm,
    unless ``dtype`` is given."""
    from .expr import FloatImm, IntImm  # noqa: PLC0415 (the classes need this module first)

    if isinstance(value, bool):
        return IntImm(dtype or "bool", int(value))
    if isinstance(value, int):
        dt = to_dtype(dtype or "int32")
        if dt.type_code == 2 or dt.type_code == 4:  # float / bfloat: an int spelled for a float
            return FloatImm(dt, float(value))
        return IntImm(dt, value)
    if isinstance(value, float):
        return FloatImm(dtype or "float32", value)
    raise TypeError(f"cannot make an IR constant from {type(value).__name__} {value!r}")


def to_expr(value: Any, what: str) -> PrimExpr:
    """``value`` as a PrimExpr: PrimExprs pass, Python numbers become constants, strings
    StringImm; anything else is a TypeError naming ``what``."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, int, float)):
        return const(value)
    if isinstance(value, str):
        from .expr import StringImm  # noqa: PLC0415

        return StringImm(value)
    raise TypeError(f"{what}: expected a PrimExpr or a Python number, got {type(value).__name__}")


def _scalar_dtype_like(value: Any, other: PrimExpr) -> Any:
    """The dtype a Python number takes next to ``other`` (as in TVM: ``x + 1`` keeps x's type)."""
    dt = other.dtype
    code, bits = dt.type_code, dt.bits
    if isinstance(value, bool) or (code == 1 and bits == 1) or code == 6 or code == 3:
        return None  # bools, and numbers next to bools or handles, keep their own type
    if isinstance(value, float) and code not in (2, 4):
        return None  # a float next to an integer expression stays float32
    return tvm_ffi.dtype(f"{'bfloat' if code == 4 else {0: 'int', 1: 'uint', 2: 'float'}[code]}{bits}")


def to_expr_pair(a: Any, b: Any, what: str) -> tuple:
    """Both operands as PrimExprs; a Python number takes the dtype of the other operand."""
    if isinstance(a, PrimExpr) and isinstance(b, (bool, int, float)):
        return a, const(b, _scalar_dtype_like(b, a))
    if isinstance(b, PrimExpr) and isinstance(a, (bool, int, float)):
        return const(a, _scalar_dtype_like(a, b)), b
    return to_expr(a, f"{what} a"), to_expr(b, f"{what} b")


def to_expr_list(values: Any, what: str) -> list:
    if isinstance(values, (PrimExpr, int, float)):
        raise TypeError(f"{what}: expected a list of expressions, got a single {type(values).__name__}")
    try:
        items = list(values)
    except TypeError as err:
        raise TypeError(f"{what}: expected a list of expressions, got {type(values).__name__}") from err
    return [to_expr(v, f"{what}[{i}]") for i, v in enumerate(items)]


def _binary(op_name: str, swap: bool = False):
    def method(self, other):
        if not isinstance(other, (PrimExpr, bool, int, float)):
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        return ffi_func("tessel.op." + op_name)(*to_expr_pair(a, b, op_name))

    method.__name__ = op_name
    return method


def _is_bool(expr: PrimExpr) -> bool:
    dt = expr.dtype
    return (dt.type_code == 1 and dt.bits == 1) or dt.type_code == 6


def _logical_or_bitwise(self: "PrimExpr", other: Any, which: str, swap: bool):
    if not isinstance(other, (PrimExpr, bool, int, float)):
        return NotImplemented
    a, b = to_expr_pair(*((other, self) if swap else (self, other)), which)
    name = f"logical_{which}" if _is_bool(a) and _is_bool(b) else f"bitwise_{which}"
    return ffi_func("tessel.op." + name)(a, b)


@tvm_ffi.register_object("tessel.ir.PrimExpr")
class PrimExpr(Node):
    """An expression. Arithmetic and comparison operators build folded expressions through the
    "tessel.op.*" helpers (type promotion and constant folding as in C++). ``==`` and ``!=`` stay
    Python identity; use ``tessel.ir.eq`` / ``ne`` to build an equality expression and
    ``tessel.ir.structural_equal`` to compare two expressions."""

    __add__ = _binary("add")
    __radd__ = _binary("add", swap=True)
    __sub__ = _binary("sub")
    __rsub__ = _binary("sub", swap=True)
    __mul__ = _binary("mul")
    __rmul__ = _binary("mul", swap=True)
    __truediv__ = _binary("div")
    __rtruediv__ = _binary("div", swap=True)
    __floordiv__ = _binary("floordiv")
    __rfloordiv__ = _binary("floordiv", swap=True)
    __mod__ = _binary("floormod")
    __rmod__ = _binary("floormod", swap=True)
    __lt__ = _binary("lt")
    __le__ = _binary("le")
    __gt__ = _binary("gt")
    __ge__ = _binary("ge")
    __lshift__ = _binary("shift_left")
    __rlshift__ = _binary("shift_left", swap=True)
    __rshift__ = _binary("shift_right")
    __rrshift__ = _binary("shift_right", swap=True)
    __xor__ = _binary("bitwise_xor")
    __rxor__ = _binary("bitwise_xor", swap=True)

    # & and | on two bools are the logical operators (there is no `and` overload in Python).
    def __and__(self, other):
        return _logical_or_bitwise(self, other, "and", swap=False)

    def __rand__(self, other):
        return _logical_or_bitwise(self, other, "and", swap=True)

    def __or__(self, other):
        return _logical_or_bitwise(self, other, "or", swap=False)

    def __ror__(self, other):
        return _logical_or_bitwise(self, other, "or", swap=True)

    def __invert__(self):
        name = "logical_not" if _is_bool(self) else "bitwise_not"
        return ffi_func("tessel.op." + name)(self)

    def __neg__(self):
        return ffi_func("tessel.op.neg")(self)

    def __bool__(self) -> bool:
        # `if x < n:` on a symbolic comparison would silently be True: refuse it.
        raise ValueError(
            f"cannot use the expression {self} as a Python bool; compare with "
            "tessel.ir.structural_equal, or build a condition with tessel.ir.eq / lt / ..."
        )

    # Object.__eq__ is identity; keep __hash__ consistent with it (defining comparison methods
    # above does not touch either).
    __hash__ = Object.__hash__

    def astype(self, dtype: Any) -> PrimExpr:
        """This expression cast to ``dtype`` (folded for constants)."""
        return ffi_func("tessel.op.cast")(to_dtype(dtype), self)
