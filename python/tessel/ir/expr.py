"""Expression nodes. Constructors call the C++ constructors ("tessel.ir.<Name>"), so the checks
are the C++ ones; Python numbers are accepted wherever an expression is expected (int -> int32,
float -> float32, bool -> bool)."""

from __future__ import annotations

from typing import Any, Optional

import tvm_ffi

from ._base import Node, PrimExpr, ffi_func, to_dtype, to_expr, to_expr_list


def _build(obj: Any, name: str, *args: Any) -> None:
    obj.__init_handle_by_constructor__(ffi_func("tessel.ir." + name), *args)


@tvm_ffi.register_object("tessel.ir.IntImm")
class IntImm(PrimExpr):
    """An integer (or bool) constant: ``IntImm("int64", 3)``."""

    def __init__(self, dtype: Any, value: int) -> None:
        if not isinstance(value, int):  # bool is an int
            raise TypeError(f"IntImm: value must be an int, got {type(value).__name__}")
        _build(self, "IntImm", to_dtype(dtype, "IntImm dtype"), int(value))

    def __bool__(self) -> bool:
        return self.value != 0

    def __int__(self) -> int:
        return int(self.value)


@tvm_ffi.register_object("tessel.ir.FloatImm")
class FloatImm(PrimExpr):
    """A floating-point constant: ``FloatImm("float16", 0.5)``."""

    def __init__(self, dtype: Any, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"FloatImm: value must be a float, got {type(value).__name__}")
        _build(self, "FloatImm", to_dtype(dtype, "FloatImm dtype"), float(value))

    def __float__(self) -> float:
        return float(self.value)


@tvm_ffi.register_object("tessel.ir.StringImm")
class StringImm(PrimExpr):
    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"StringImm: value must be a str, got {type(value).__name__}")
        _build(self, "StringImm", value)


@tvm_ffi.register_object("tessel.ir.Var")
class Var(PrimExpr):
    """A variable; identity matters, not the name. ``Var("n")`` is int32."""

    def __init__(self, name_hint: str, dtype: Any = "int32") -> None:
        if not isinstance(name_hint, str):
            raise TypeError(f"Var: name_hint must be a str, got {type(name_hint).__name__}")
        _build(self, "Var", name_hint, to_dtype(dtype, f"Var {name_hint!r} dtype"))

    @staticmethod
    def pointer(name_hint: str, pointee: Any, storage_scope: str = "global") -> "Var":
        """A handle variable pointing at ``pointee`` elements in ``storage_scope``."""
        return ffi_func("tessel.ir.PointerVar")(
            name_hint, to_dtype(pointee, f"Var.pointer {name_hint!r} pointee"), storage_scope
        )


@tvm_ffi.register_object("tessel.ir.SizeVar")
class SizeVar(Var):
    """A variable known to be non-negative (a symbolic size)."""

    def __init__(self, name_hint: str, dtype: Any = "int32") -> None:
        if not isinstance(name_hint, str):
            raise TypeError(f"SizeVar: name_hint must be a str, got {type(name_hint).__name__}")
        _build(self, "SizeVar", name_hint, to_dtype(dtype, f"SizeVar {name_hint!r} dtype"))


@tvm_ffi.register_object("tessel.ir.Cast")
class Cast(PrimExpr):
    def __init__(self, dtype: Any, value: Any) -> None:
        _build(self, "Cast", to_dtype(dtype, "Cast dtype"), to_expr(value, "Cast value"))


def _binary_node(name: str) -> type:
    def __init__(self, a: Any, b: Any) -> None:
        _build(self, name, to_expr(a, f"{name} a"), to_expr(b, f"{name} b"))

    cls = type(name, (PrimExpr,), {"__init__": __init__, "__module__": __name__, "__slots__": ()})
    cls.__doc__ = f"The {name} node over operands a and b (no folding; see tessel.ir ops for that)."
    return tvm_ffi.register_object("tessel.ir." + name)(cls)


BINARY_NODES = ("Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max")
CMP_NODES = ("EQ", "NE", "LT", "LE", "GT", "GE")
LOGICAL_NODES = ("And", "Or")

Add = _binary_node("Add")
Sub = _binary_node("Sub")
Mul = _binary_node("Mul")
Div = _binary_node("Div")
Mod = _binary_node("Mod")
FloorDiv = _binary_node("FloorDiv")
FloorMod = _binary_node("FloorMod")
Min = _binary_node("Min")
Max = _binary_node("Max")
EQ = _binary_node("EQ")
NE = _binary_node("NE")
LT = _binary_node("LT")
LE = _binary_node("LE")
GT = _binary_node("GT")
GE = _binary_node("GE")
And = _binary_node("And")
Or = _binary_node("Or")


@tvm_ffi.register_object("tessel.ir.Not")
class Not(PrimExpr):
    def __init__(self, a: Any) -> None:
        _build(self, "Not", to_expr(a, "Not a"))


@tvm_ffi.register_object("tessel.ir.Select")
class Select(PrimExpr):
    """condition ? true_value : false_value, both sides evaluated."""

    def __init__(self, condition: Any, true_value: Any, false_value: Any) -> None:
        _build(
            self,
            "Select",
            to_expr(condition, "Select condition"),
            to_expr(true_value, "Select true_value"),
            to_expr(false_value, "Select false_value"),
        )


def _lanes(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: lanes must be an int, got {type(value).__name__}")
    return value


@tvm_ffi.register_object("tessel.ir.Ramp")
class Ramp(PrimExpr):
    """The vector base, base + stride, ..., base + (lanes - 1) * stride."""

    def __init__(self, base: Any, stride: Any, lanes: int) -> None:
        _build(
            self,
            "Ramp",
            to_expr(base, "Ramp base"),
            to_expr(stride, "Ramp stride"),
            _lanes(lanes, "Ramp"),
        )


@tvm_ffi.register_object("tessel.ir.Broadcast")
class Broadcast(PrimExpr):
    def __init__(self, value: Any, lanes: int) -> None:
        _build(self, "Broadcast", to_expr(value, "Broadcast value"), _lanes(lanes, "Broadcast"))


@tvm_ffi.register_object("tessel.ir.Shuffle")
class Shuffle(PrimExpr):
    def __init__(self, vectors: Any, indices: Any) -> None:
        _build(
            self,
            "Shuffle",
            to_expr_list(vectors, "Shuffle vectors"),
            to_expr_list(indices, "Shuffle indices"),
        )


@tvm_ffi.register_object("tessel.ir.Let")
class Let(PrimExpr):
    """``var`` bound to ``value`` in ``body``."""

    def __init__(self, var: Var, value: Any, body: Any) -> None:
        _build(self, "Let", var, to_expr(value, "Let value"), to_expr(body, "Let body"))


@tvm_ffi.register_object("tessel.ir.BufferLoad")
class BufferLoad(PrimExpr):
    def __init__(self, buffer: Any, indices: Any) -> None:
        _build(self, "BufferLoad", buffer, to_expr_list(indices, "BufferLoad indices"))


@tvm_ffi.register_object("tessel.ir.Call")
class Call(PrimExpr):
    """A call of an intrinsic ``op`` (an Op, or its name such as "tir.exp") or of a GlobalVar."""

    def __init__(
        self, dtype: Any, op: Any, args: Any, annotations: Optional[dict] = None
    ) -> None:
        if isinstance(op, str):
            op = Op.get(op)
        _build(
            self,
            "Call",
            to_dtype(dtype, "Call dtype"),
            op,
            to_expr_list(args, "Call args"),
            annotations or {},
        )


@tvm_ffi.register_object("tessel.ir.Range")
class Range(Node):
    """The half-open interval [min, min + extent)."""

    def __init__(self, min: Any, extent: Any) -> None:  # noqa: A002 (the C++ field name)
        _build(self, "Range", to_expr(min, "Range min"), to_expr(extent, "Range extent"))

    @staticmethod
    def from_min_end(begin: Any, end: Any) -> "Range":
        begin = to_expr(begin, "Range.from_min_end begin")
        return Range(begin, ffi_func("tessel.op.sub")(to_expr(end, "Range end"), begin))


@tvm_ffi.register_object("tessel.ir.Op")
class Op(Node):
    """An intrinsic operator from the registry; get one by name with ``Op.get``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("Op cannot be constructed; use tessel.ir.Op.get(name)")

    @staticmethod
    def get(name: str) -> "Op":
        if not isinstance(name, str):
            raise TypeError(f"Op.get: name must be a str, got {type(name).__name__}")
        return ffi_func("tessel.ir.OpGet")(name)

    @staticmethod
    def list_names() -> list:
        return list(ffi_func("tessel.ir.OpListNames")())
