"""Kernels written as Python: ``from tessel.script import tir as T, ir as I``.

``@T.prim_func`` and ``@I.ir_module`` read the decorated function's or class's source and give it,
with its file name, position and captured values, to the C++ parser that also reads text files;
``tessel.parse(tessel.as_text(f))`` of the result is structurally equal to it. Errors are
``ScriptError`` (a SyntaxError and a ValueError) at the user's file, line and column.
``template(fn)`` is what ``tessel.jit`` builds on.
"""

from . import ir, tir
from ._frontend import FunctionTemplate, parse_function, parse_module, template
from ._source import ScriptError

__all__ = ["ir", "tir", "FunctionTemplate", "ScriptError", "template", "parse_function",
           "parse_module"]
