"""A Python function's or class's source as the C++ parser reads it: the text from its ``def`` or
``class`` line on, dedented, with the line and column offsets that map positions back to the
user's file, and the values of the names it captures from the enclosing scopes."""

from __future__ import annotations

import ast
import inspect
import re
import types
from dataclasses import dataclass
from typing import Any, Dict, Optional

from ..ir._base import Node


class ScriptError(SyntaxError, ValueError):
    """An error in a kernel written in Python: ``filename``, ``lineno``, ``offset`` and ``text``
    point at the user's source (so tracebacks show the line with a caret). A ValueError too, like
    the errors of ``tessel.parse``."""


@dataclass
class Source:
    """The part of a file the parser reads: ``text`` starts at the ``def`` / ``class`` line."""

    text: str
    filename: str
    line_offset: int  # lines of the file above the first line of text
    col_offset: int  # columns removed from every line by dedenting
    tree: ast.AST  # the def or class node, its positions relative to text


def get_source(obj: Any, what: str) -> Source:
    """The source of a function or class, or a ScriptError saying why there is none."""
    try:
        lines, first = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or inspect.getfile(obj)
    except (OSError, TypeError) as err:
        name = getattr(obj, "__qualname__", repr(obj))
        raise ScriptError(
            f"{what}: the source of {name!r} is not available ({err}); a kernel defined in a "
            "REPL or with exec() has no source file to read. Write the kernel as text and use "
            "tessel.parse(text) instead."
        ) from None
    # A function defined in a one-line lambda-like context or with exotic indentation is read as
    # Python would: the indentation of its first line is removed from every line.
    indent = len(lines[0]) - len(lines[0].lstrip(" \t"))
    if "\t" in lines[0][:indent]:
        raise ScriptError(f"{what}: tabs in the indentation of {filename} are not supported")
    stripped = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip(" ") for ln in lines]
    full = "".join(stripped)
    try:
        module = ast.parse(full)
    except SyntaxError as err:
        raise ScriptError(
            err.msg,
            (filename, (err.lineno or 1) + first - 1, (err.offset or 1) + indent, err.text, None, None),
        ) from None
    node = module.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        raise ScriptError(f"{what}: expected a def or a class, found {type(node).__name__}")
    # Decorators are Python's business; the parser starts at `def` / `class`.
    head = node.lineno - 1
    text = "".join(stripped[head:])
    tree = ast.parse(text).body[0]
    return Source(text, filename, first - 1 + head, indent, tree)


def _is_ir(value: Any) -> bool:
    return isinstance(value, Node)


def _dtype_text(value: Any) -> Optional[str]:
    """The dtype string of a tvm-ffi, NumPy or torch dtype (or a NumPy scalar type), else None."""
    import tvm_ffi  # noqa: PLC0415

    if isinstance(value, tvm_ffi.dtype):
        return str(value)
    mod = type(value).__module__
    if mod.startswith("numpy"):
        try:
            import numpy as np  # noqa: PLC0415

            if isinstance(value, np.dtype):
                return str(value)
        except ImportError:
            return None
    if isinstance(value, type) and value.__module__ == "numpy":
        import numpy as np  # noqa: PLC0415

        if issubclass(value, np.generic):
            return str(np.dtype(value))
    if mod == "torch" and type(value).__name__ == "dtype":
        return str(value).replace("torch.", "")
    return None


_UNSET = object()


def convert_value(name: str, value: Any) -> Any:
    """A captured Python value as the parser takes it, or _UNSET when it is of a kind that cannot
    appear in a kernel (the caller reports it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            return _UNSET
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        return value
    if _is_ir(value):
        return value
    try:
        import numpy as np  # noqa: PLC0415

        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return float(value)
    except ImportError:
        pass
    dtype = _dtype_text(value)
    if dtype is not None:
        return dtype
    return _UNSET


def _ignored(value: Any) -> bool:
    """Names bound to these are the kernel's vocabulary (T, I, modules), not captured values."""
    from . import ir as _ir_ns, tir as _tir_ns  # noqa: PLC0415

    return value is _tir_ns or value is _ir_ns or isinstance(value, types.ModuleType)


def captured_values(
    src: Source,
    func_globals: Dict[str, Any],
    closure: Dict[str, Any],
    definer_locals: Dict[str, Any],
    local_names: set,
    what: str,
) -> Dict[str, Any]:
    """The values of the free names of the kernel's source, looked up as Python would (closure,
    the defining scope at decoration time, globals; builtins are the parser's own). A name of an
    unsupported kind is a ScriptError at its first use."""
    out: Dict[str, Any] = {}
    seen = set()
    decorators = set()
    for dec in getattr(src.tree, "decorator_list", []):
        decorators.update(id(n) for n in ast.walk(dec))
    for node in ast.walk(src.tree):
        if id(node) in decorators or not isinstance(node, ast.Name):
            continue
        name = node.id
        if name in seen or name in local_names:
            continue
        seen.add(name)
        value = _UNSET
        for scope in (closure, definer_locals, func_globals):
            if name in scope:
                value = scope[name]
                break
        if value is _UNSET or _ignored(value):
            continue  # a builtin (range, min, ...), a symbolic name the parser declares, or T
        converted = convert_value(name, value)
        if converted is _UNSET:
            line = src.line_offset + node.lineno
            col = src.col_offset + node.col_offset + 1
            text = src.text.splitlines()[node.lineno - 1]
            kind = type(value).__name__
            raise ScriptError(
                f"{what}: captured variable {name!r} is a {kind}; a kernel can use captured ints, "
                "floats, bools, strings, dtypes and tessel IR objects",
                (src.filename, line, col, " " * src.col_offset + text, None, None),
            )
        out[name] = converted
    return out


_LOCATION = re.compile(r"^(?P<file>.*):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$")


def reraise(err: Exception) -> None:
    """A parser ValueError ("file:line:col: error: message", source line, caret) as a ScriptError
    with its position; other errors unchanged."""
    text = str(err)
    first, _, rest = text.partition("\n")
    m = _LOCATION.match(first)
    if not m:
        raise err
    source_line = rest.split("\n")[0] if rest else None
    new = ScriptError(
        m.group("msg"),
        (m.group("file"), int(m.group("line")), int(m.group("col")), source_line, None, None),
    )
    raise new from None


def local_names_of(fn: Any) -> set:
    """Names a function binds itself (parameters and assigned names): never captured."""
    code = getattr(fn, "__code__", None)
    return set(code.co_varnames) if code is not None else set()


def closure_of(fn: Any) -> Dict[str, Any]:
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    out = {}
    if code is None:
        return out
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell: the variable is not bound yet
            pass
    return out

