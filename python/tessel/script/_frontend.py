"""Decorated kernels: ``@T.prim_func`` and ``@I.ir_module`` parse a Python function's or class's
source with the C++ parser (the same one that reads text files), and ``template`` gives the jit
a function it can specialize on its ``T.constexpr`` parameters."""

from __future__ import annotations

import inspect
from typing import Any, Dict, Optional

from ..ir._base import ffi_func
from . import _source
from ._source import ScriptError


def _parse(src: _source.Source, values: Dict[str, Any], private: bool) -> Any:
    try:
        return ffi_func("tessel.ir.ParseSource")(
            src.text, src.filename, src.line_offset, src.col_offset, True, private, values
        )
    except ValueError as err:
        _source.reraise(err)


def _is_class_body(frame: Any) -> bool:
    """Whether a decorator runs in a class body (an @I.ir_module's functions)."""
    names = frame.f_locals
    return "__module__" in names and "__qualname__" in names and frame.f_code.co_name != "<module>"


class _ModuleFunction:
    """What ``@T.prim_func`` gives inside an ``@I.ir_module`` class body: the function, parsed
    later with the whole class."""

    def __init__(self, fn: Any, private: bool) -> None:
        self.fn = fn
        self.private = private


def _constexpr_marker(annotation: Any) -> bool:
    from . import tir  # noqa: PLC0415

    if annotation is tir.constexpr:
        return True
    # `from __future__ import annotations` leaves the annotation as its text.
    return isinstance(annotation, str) and annotation.replace(" ", "") in ("T.constexpr", "constexpr")


class FunctionTemplate:
    """A kernel function before its compile-time values are known. ``constexprs`` maps each
    keyword-only ``T.constexpr`` parameter to its default (``inspect.Parameter.empty`` when it has
    none); ``specialize(**values)`` parses the function with those values (and the names it
    captures) substituted and returns the PrimFunc, whose global symbol is ``name``."""

    def __init__(self, fn: Any, definer_locals: Dict[str, Any], what: str = "tessel.jit") -> None:
        if not inspect.isfunction(fn):
            raise TypeError(f"{what}: expected a Python function, got {type(fn).__name__}")
        self.fn = fn
        self.name = fn.__name__
        self._what = what
        self._src = _source.get_source(fn, what)
        self.filename = self._src.filename
        self.lineno = self._src.line_offset + 1
        self._definer_locals = definer_locals
        self.constexprs: Dict[str, Any] = {}
        for p in inspect.signature(fn).parameters.values():
            if p.kind == p.KEYWORD_ONLY and _constexpr_marker(p.annotation):
                self.constexprs[p.name] = p.default

    def captured(self) -> Dict[str, Any]:
        """The values of the names the kernel captures, read now."""
        return _source.captured_values(
            self._src,
            self.fn.__globals__,
            _source.closure_of(self.fn),
            self._definer_locals,
            _source.local_names_of(self.fn),
            self._what,
        )

    def values_for(self, **values: Any) -> Dict[str, Any]:
        """Every T.constexpr parameter's value: ``values`` over the defaults. A TypeError names an
        unknown parameter or one without a value."""
        for name in values:
            if name not in self.constexprs:
                known = ", ".join(self.constexprs) or "none"
                raise TypeError(
                    f"{self.name}: unknown compile-time parameter {name!r} (T.constexpr "
                    f"parameters: {known})"
                )
        out = {}
        for name, default in self.constexprs.items():
            if name in values:
                out[name] = values[name]
            elif default is not inspect.Parameter.empty:
                out[name] = default
            else:
                raise TypeError(f"{self.name}: compile-time parameter {name!r} needs a value")
        return out

    def specialize(self, **values: Any) -> Any:
        params = self.values_for(**values)
        table = self.captured()
        for name, value in params.items():
            converted = _source.convert_value(name, value)
            if converted is _source._UNSET:
                raise TypeError(
                    f"{self.name}: compile-time parameter {name!r} is a {type(value).__name__}; "
                    "expected an int, float, bool, str, dtype or tessel IR object"
                )
            table[name] = converted
        return _parse(self._src, table, private=False)

    def __repr__(self) -> str:
        return f"<tessel FunctionTemplate {self.name} at {self.filename}:{self.lineno}>"


def template(fn: Any, definer_locals: Optional[Dict[str, Any]] = None) -> FunctionTemplate:
    """A FunctionTemplate of ``fn`` (for tessel.jit). ``definer_locals``: the local names of the
    scope that defined it, when it was not the module (a decorator passes its caller's)."""
    return FunctionTemplate(fn, definer_locals or {})


def parse_function(fn: Any, definer_locals: Dict[str, Any], private: bool) -> Any:
    """The PrimFunc of a function decorated with @T.prim_func (T.constexpr parameters take their
    defaults)."""
    tmpl = FunctionTemplate(fn, definer_locals, what="T.prim_func")
    params = tmpl.values_for()
    table = tmpl.captured()
    table.update({k: _source.convert_value(k, v) for k, v in params.items()})
    return _parse(tmpl._src, table, private=private)


def parse_module(cls: Any, definer_locals: Dict[str, Any]) -> Any:
    """The IRModule of a class decorated with @I.ir_module."""
    if not inspect.isclass(cls):
        raise TypeError(f"I.ir_module: expected a class, got {type(cls).__name__}")
    src = _source.get_source(cls, "I.ir_module")
    local_names = set()
    closure: Dict[str, Any] = {}
    func_globals: Dict[str, Any] = {}
    for name, member in vars(cls).items():
        local_names.add(name)
        if isinstance(member, _ModuleFunction):
            local_names |= _source.local_names_of(member.fn)
            closure.update(_source.closure_of(member.fn))
            func_globals = member.fn.__globals__
    if not func_globals:
        import sys  # noqa: PLC0415

        func_globals = vars(sys.modules.get(cls.__module__, object()))
    table = _source.captured_values(
        src, func_globals, closure, definer_locals, local_names, "I.ir_module"
    )
    try:
        return ffi_func("tessel.ir.ParseSource")(
            src.text, src.filename, src.line_offset, src.col_offset, True, False, table
        )
    except ValueError as err:
        _source.reraise(err)


__all__ = ["FunctionTemplate", "ScriptError", "template", "parse_function", "parse_module"]
