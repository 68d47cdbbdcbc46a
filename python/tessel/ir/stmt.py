"""Buffers, statements and the pieces of blocks. Constructors call the C++ constructors
("tessel.ir.<Name>"); keyword defaults mirror the C++ ones."""

from __future__ import annotations

import enum
from typing import Any, Optional, Sequence

import tvm_ffi

from ._base import Node, PrimExpr, const, ffi_func, to_dtype, to_expr, to_expr_list
from .expr import Range, Var


def _build(obj: Any, name: str, *args: Any) -> None:
    obj.__init_handle_by_constructor__(ffi_func("tessel.ir." + name), *args)


def _check(value: Any, cls: type, what: str) -> Any:
    if not isinstance(value, cls):
        raise TypeError(f"{what}: expected {cls.__name__}, got {type(value).__name__}")
    return value


def _check_list(values: Any, cls: type, what: str) -> list:
    if isinstance(values, Node):
        raise TypeError(f"{what}: expected a list of {cls.__name__}, got a single {type(values).__name__}")
    return [_check(v, cls, f"{what}[{i}]") for i, v in enumerate(values)]


DEFAULT_BUFFER_ALIGNMENT = 64


@tvm_ffi.register_object("tessel.ir.Buffer")
class Buffer(Node):
    """A typed, shaped view of memory reached through the handle ``data`` (arguments in the C++
    order). With ``data=None`` a fresh pointer variable named after the buffer is made. Defaults
    are the text format's: compact strides, elem_offset 0, scope "global", alignment 64,
    offset_factor 1. See also ``decl_buffer``."""

    def __init__(
        self,
        name: str,
        data: Optional[Var],
        dtype: Any,
        shape: Sequence[Any],
        strides: Sequence[Any] = (),
        elem_offset: Any = 0,
        scope: str = "global",
        data_alignment: int = DEFAULT_BUFFER_ALIGNMENT,
        offset_factor: int = 1,
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"Buffer: name must be a str, got {type(name).__name__}")
        dt = to_dtype(dtype, f"Buffer {name!r} dtype")
        if data is None:
            data = Var.pointer(name, dt, scope)
        _build(
            self,
            "Buffer",
            name,
            _check(data, Var, f"Buffer {name!r} data"),
            dt,
            to_expr_list(shape, f"Buffer {name!r} shape"),
            to_expr_list(strides, f"Buffer {name!r} strides"),
            to_expr(elem_offset, f"Buffer {name!r} elem_offset"),
            scope,
            data_alignment,
            offset_factor,
        )

    def __getitem__(self, indices: Any) -> PrimExpr:
        """``A[i, j]``: a BufferLoad."""
        from .expr import BufferLoad  # noqa: PLC0415

        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, indices)


def decl_buffer(name: str, shape: Sequence[Any], dtype: Any = "float32", scope: str = "global") -> Buffer:
    """A buffer over a fresh data variable, with the default layout (as C++ MakeBuffer)."""
    return Buffer(name, None, dtype, shape, scope=scope)


class ForKind(enum.IntEnum):
    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4


_FOR_KIND_NAMES = {
    "serial": ForKind.SERIAL,
    "parallel": ForKind.PARALLEL,
    "vectorized": ForKind.VECTORIZED,
    "unroll": ForKind.UNROLLED,
    "thread_binding": ForKind.THREAD_BINDING,
}


class IterVarType(enum.IntEnum):
    DATA_PAR = 0
    COMM_REDUCE = 2
    ORDERED = 3
    OPAQUE = 4


_ITER_TYPE_NAMES = {
    "spatial": IterVarType.DATA_PAR,
    "reduce": IterVarType.COMM_REDUCE,
    "scan": IterVarType.ORDERED,
    "opaque": IterVarType.OPAQUE,
}


def _enum(value: Any, names: dict, enum_cls: type, what: str) -> int:
    if isinstance(value, str):
        if value not in names:
            raise ValueError(f"{what}: unknown name {value!r}; expected one of {sorted(names)}")
        return int(names[value])
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected a {enum_cls.__name__} or its name, got {type(value).__name__}")
    try:
        return int(enum_cls(value))
    except ValueError as err:
        raise ValueError(f"{what}: {value} is not a {enum_cls.__name__}") from err


@tvm_ffi.register_object("tessel.ir.Stmt")
class Stmt(Node):
    """A statement. ``span`` says where it was written (a Span, or None)."""

    def with_span(self, span: Any) -> "Stmt":
        """A copy of this statement whose span is ``span`` (a Span or None)."""
        return ffi_func("tessel.ir.StmtWithSpan")(self, span)


@tvm_ffi.register_object("tessel.ir.LetStmt")
class LetStmt(Stmt):
    def __init__(self, var: Var, value: Any, body: Stmt) -> None:
        _build(self, "LetStmt", _check(var, Var, "LetStmt var"), to_expr(value, "LetStmt value"),
               _check(body, Stmt, "LetStmt body"))


@tvm_ffi.register_object("tessel.ir.AttrStmt")
class AttrStmt(Stmt):
    def __init__(self, node: Any, attr_key: str, value: Any, body: Stmt) -> None:
        _build(self, "AttrStmt", node, attr_key, to_expr(value, "AttrStmt value"),
               _check(body, Stmt, "AttrStmt body"))


@tvm_ffi.register_object("tessel.ir.AssertStmt")
class AssertStmt(Stmt):
    """Checks ``condition`` at run time; ``message`` is a str or a StringImm."""

    def __init__(self, condition: Any, message: Any, body: Stmt) -> None:
        _build(self, "AssertStmt", to_expr(condition, "AssertStmt condition"),
               to_expr(message, "AssertStmt message"), _check(body, Stmt, "AssertStmt body"))


@tvm_ffi.register_object("tessel.ir.BufferStore")
class BufferStore(Stmt):
    def __init__(self, buffer: Buffer, value: Any, indices: Sequence[Any]) -> None:
        _build(self, "BufferStore", _check(buffer, Buffer, "BufferStore buffer"),
               to_expr(value, "BufferStore value"), to_expr_list(indices, "BufferStore indices"))


@tvm_ffi.register_object("tessel.ir.Allocate")
class Allocate(Stmt):
    def __init__(
        self,
        buffer_var: Var,
        dtype: Any,
        extents: Sequence[Any],
        condition: Any,
        body: Stmt,
        annotations: Optional[dict] = None,
    ) -> None:
        _build(self, "Allocate", _check(buffer_var, Var, "Allocate buffer_var"),
               to_dtype(dtype, "Allocate dtype"), to_expr_list(extents, "Allocate extents"),
               to_expr(condition, "Allocate condition"), _check(body, Stmt, "Allocate body"),
               annotations or {})


@tvm_ffi.register_object("tessel.ir.DeclBuffer")
class DeclBuffer(Stmt):
    def __init__(self, buffer: Buffer, body: Stmt) -> None:
        _build(self, "DeclBuffer", _check(buffer, Buffer, "DeclBuffer buffer"),
               _check(body, Stmt, "DeclBuffer body"))


@tvm_ffi.register_object("tessel.ir.For")
class For(Stmt):
    """``loop_var`` over [min, min + extent). ``kind`` is a ForKind or its text-format name
    ("serial", "parallel", "vectorized", "unroll", "thread_binding")."""

    def __init__(
        self,
        loop_var: Var,
        min: Any,  # noqa: A002 (the C++ field name)
        extent: Any,
        kind: Any,
        body: Stmt,
        thread_tag: str = "",
        annotations: Optional[dict] = None,
    ) -> None:
        _build(self, "For", _check(loop_var, Var, "For loop_var"), to_expr(min, "For min"),
               to_expr(extent, "For extent"), _enum(kind, _FOR_KIND_NAMES, ForKind, "For kind"),
               _check(body, Stmt, "For body"), thread_tag, annotations or {})


@tvm_ffi.register_object("tessel.ir.While")
class While(Stmt):
    def __init__(self, condition: Any, body: Stmt) -> None:
        _build(self, "While", to_expr(condition, "While condition"), _check(body, Stmt, "While body"))


@tvm_ffi.register_object("tessel.ir.IfThenElse")
class IfThenElse(Stmt):
    def __init__(self, condition: Any, then_case: Stmt, else_case: Optional[Stmt] = None) -> None:
        if else_case is not None:
            _check(else_case, Stmt, "IfThenElse else_case")
        _build(self, "IfThenElse", to_expr(condition, "IfThenElse condition"),
               _check(then_case, Stmt, "IfThenElse then_case"), else_case)


@tvm_ffi.register_object("tessel.ir.SeqStmt")
class SeqStmt(Stmt):
    def __init__(self, seq: Sequence[Stmt]) -> None:
        _build(self, "SeqStmt", _check_list(seq, Stmt, "SeqStmt seq"))


@tvm_ffi.register_object("tessel.ir.Evaluate")
class Evaluate(Stmt):
    def __init__(self, value: Any) -> None:
        _build(self, "Evaluate", to_expr(value, "Evaluate value"))


@tvm_ffi.register_object("tessel.ir.IterVar")
class IterVar(Node):
    """A block iteration variable over ``dom``; ``iter_type`` is an IterVarType or its name
    ("spatial", "reduce", "scan", "opaque")."""

    def __init__(self, var: Var, dom: Range, iter_type: Any) -> None:
        _build(self, "IterVar", _check(var, Var, "IterVar var"), _check(dom, Range, "IterVar dom"),
               _enum(iter_type, _ITER_TYPE_NAMES, IterVarType, "IterVar iter_type"))


@tvm_ffi.register_object("tessel.ir.BufferRegion")
class BufferRegion(Node):
    def __init__(self, buffer: Buffer, region: Sequence[Range]) -> None:
        _build(self, "BufferRegion", _check(buffer, Buffer, "BufferRegion buffer"),
               _check_list(region, Range, "BufferRegion region"))

    @staticmethod
    def full(buffer: Buffer) -> "BufferRegion":
        """The whole of ``buffer``."""
        _check(buffer, Buffer, "BufferRegion.full buffer")
        return BufferRegion(buffer, [Range(const(0, e.dtype), e) for e in buffer.shape])


@tvm_ffi.register_object("tessel.ir.MatchBufferRegion")
class MatchBufferRegion(Node):
    def __init__(self, buffer: Buffer, source: BufferRegion) -> None:
        _build(self, "MatchBufferRegion", _check(buffer, Buffer, "MatchBufferRegion buffer"),
               _check(source, BufferRegion, "MatchBufferRegion source"))


@tvm_ffi.register_object("tessel.ir.Block")
class Block(Stmt):
    def __init__(
        self,
        iter_vars: Sequence[IterVar],
        reads: Sequence[BufferRegion],
        writes: Sequence[BufferRegion],
        name_hint: str,
        body: Stmt,
        init: Optional[Stmt] = None,
        alloc_buffers: Sequence[Buffer] = (),
        match_buffers: Sequence[MatchBufferRegion] = (),
        annotations: Optional[dict] = None,
    ) -> None:
        if init is not None:
            _check(init, Stmt, "Block init")
        _build(self, "Block", _check_list(iter_vars, IterVar, "Block iter_vars"),
               _check_list(reads, BufferRegion, "Block reads"),
               _check_list(writes, BufferRegion, "Block writes"), name_hint,
               _check(body, Stmt, "Block body"), init,
               _check_list(alloc_buffers, Buffer, "Block alloc_buffers"),
               _check_list(match_buffers, MatchBufferRegion, "Block match_buffers"),
               annotations or {})


@tvm_ffi.register_object("tessel.ir.BlockRealize")
class BlockRealize(Stmt):
    def __init__(self, iter_values: Sequence[Any], predicate: Any, block: Block) -> None:
        _build(self, "BlockRealize", to_expr_list(iter_values, "BlockRealize iter_values"),
               to_expr(predicate, "BlockRealize predicate"), _check(block, Block, "BlockRealize block"))
