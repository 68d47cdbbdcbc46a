"""``from tessel.script import ir as I``: ``@I.ir_module`` on a class whose methods are
``@T.prim_func`` kernels gives a tessel IRModule (the functions keyed by name; each one not private
has its name as its global symbol)."""

from __future__ import annotations

import sys
from typing import Any

from . import _frontend


def ir_module(cls: Any = None, *, check_well_formed: bool = True) -> Any:
    del check_well_formed

    def wrap(c: Any) -> Any:
        caller = sys._getframe(1)
        definer = caller.f_locals if caller.f_code.co_name != "<module>" else {}
        return _frontend.parse_module(c, dict(definer))

    if cls is None:
        return wrap
    caller = sys._getframe(1)
    definer = caller.f_locals if caller.f_code.co_name != "<module>" else {}
    return _frontend.parse_module(cls, dict(definer))
