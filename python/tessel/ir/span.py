"""Source spans: where a statement was written (``stmt.span``; None when unknown)."""

from __future__ import annotations

import tvm_ffi
from tvm_ffi import Object

from ._base import ffi_func


@tvm_ffi.register_object("tessel.ir.Span")
class Span(Object):
    """A source name and a 1-based line and column (``source_name``, ``line``, ``column``).
    Structural equality of statements ignores spans; ``str()`` gives ``file:line:col``."""

    def __init__(self, source_name: str, line: int, column: int) -> None:
        self.__init_handle_by_constructor__(ffi_func("tessel.ir.Span"), source_name, line, column)

    def __str__(self) -> str:
        return ffi_func("tessel.ir.SpanToString")(self)

    def __repr__(self) -> str:
        return f"Span({str(self)!r})"
