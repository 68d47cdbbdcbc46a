"""``from tessel.script import tir as T``: the TVMScript names a kernel written in Python uses.

Only the decorator runs Python code: ``@T.prim_func`` reads the function's source and hands it to
the C++ parser, which gives every other ``T.*`` name its meaning (docs/text_format.md). The other
names here exist so that Python can evaluate a kernel's annotations and defaults when it defines
the function (``A: T.Buffer((128,), "float32")``, ``BLOCK: T.constexpr = 64``); calling them
outside a kernel does nothing useful.

Symbolic shapes in annotations: without ``from __future__ import annotations`` Python evaluates
``T.Buffer((n,), "float32")`` when it defines the function, so ``n`` must be a known name there.
Either write the dim as a string, ``T.Buffer(("n",), "float32")`` (TVM's own spelling), or put
``from __future__ import annotations`` at the top of the file, which leaves annotations unevaluated.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from . import _frontend


def prim_func(
    fn: Optional[Callable] = None, *, private: bool = False, s_tir: bool = False,
    check_well_formed: bool = True,
) -> Any:
    """Parses the decorated function into a tessel PrimFunc. ``private=True``: no global symbol
    (otherwise the function's name is its global symbol). ``s_tir`` and ``check_well_formed`` are
    accepted for TVMScript compatibility. Errors are ``tessel.script.ScriptError`` (a SyntaxError
    and a ValueError) pointing at the file, line and column of the mistake."""
    del s_tir, check_well_formed

    def wrap(f: Callable) -> Any:
        caller = sys._getframe(1)
        if _frontend._is_class_body(caller):
            return _frontend._ModuleFunction(f, private)
        definer = caller.f_locals if caller.f_code.co_name != "<module>" else {}
        return _frontend.parse_function(f, dict(definer), private)

    if fn is None:
        return wrap
    caller = sys._getframe(1)
    if _frontend._is_class_body(caller):
        return _frontend._ModuleFunction(fn, private)
    definer = caller.f_locals if caller.f_code.co_name != "<module>" else {}
    return _frontend.parse_function(fn, dict(definer), private)


class _Placeholder:
    """A T.* name as Python sees it while defining a kernel: callable, indexable, inert."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> "_Placeholder":
        return self

    def __getitem__(self, item: Any) -> "_Placeholder":
        return self

    def __getattr__(self, name: str) -> "_Placeholder":
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(f"{self._name}.{name}")

    def __repr__(self) -> str:
        return f"T.{self._name}"


#: The annotation of a keyword-only compile-time parameter: ``*, BLOCK: T.constexpr = 128``.
constexpr = _Placeholder("constexpr")

Buffer = _Placeholder("Buffer")
Tensor = Buffer
handle = _Placeholder("handle")

_DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
    "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e5m2",
]
for _name in _DTYPES:
    globals()[_name] = _Placeholder(_name)
del _name


def __getattr__(name: str) -> Any:
    # Every other T.* name (T.grid, T.block, T.exp, ...) is read by the parser, never run.
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder(name)
