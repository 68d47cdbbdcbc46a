"""The text format (docs/text_format.md) from Python: print with ``as_text`` (or ``str(node)``),
read with ``parse`` and ``parse_expr``. Both are the C++ printer and parser."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .ir._base import ffi_func, to_dtype
from .ir.expr import Var


def as_text(node: Any) -> str:
    """The canonical text of an IRModule, PrimFunc, Stmt, PrimExpr, Buffer, Range, ..."""
    return ffi_func("tessel.ir.AsText")(node)


def parse(text: str, source_name: str = "<string>") -> Any:
    """An IRModule for ``@I.ir_module`` text, a PrimFunc for a lone ``@T.prim_func``. Errors are
    ValueErrors whose message is ``source_name:line:col: error: ...``."""
    if not isinstance(text, str):
        raise TypeError(f"parse: text must be a str, got {type(text).__name__}")
    return ffi_func("tessel.ir.ParseText")(text, source_name)


def parse_expr(text: str, vars: Optional[Mapping[str, Any]] = None) -> Any:  # noqa: A002
    """A standalone expression; ``vars`` maps each free name to a Var (reused) or a dtype."""
    if not isinstance(text, str):
        raise TypeError(f"parse_expr: text must be a str, got {type(text).__name__}")
    table = {}
    for name, v in (vars or {}).items():
        # A dtype crosses as its text, which both DataType and String conversions accept.
        table[name] = v if isinstance(v, Var) else str(to_dtype(v, f"parse_expr vars[{name!r}]"))
    return ffi_func("tessel.ir.ParseExpr")(text, table)
