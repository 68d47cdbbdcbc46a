"""PrimFunc, GlobalVar and IRModule."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import tvm_ffi

from ._base import Node, ffi_func, to_dtype
from .expr import Var
from .stmt import Buffer, Stmt


def _build(obj: Any, name: str, *args: Any) -> None:
    obj.__init_handle_by_constructor__(ffi_func("tessel.ir." + name), *args)


@tvm_ffi.register_object("tessel.ir.PrimFunc")
class PrimFunc(Node):
    """A low-level tensor function: scalar or handle ``params``, ``buffer_map`` from handle
    params to the Buffers they are viewed as, ``attrs`` ("global_symbol", ...)."""

    def __init__(
        self,
        params: Sequence[Var],
        body: Stmt,
        buffer_map: Optional[dict] = None,
        attrs: Optional[dict] = None,
        ret_type: Any = "void",
    ) -> None:
        params = list(params)
        for i, p in enumerate(params):
            if not isinstance(p, Var):
                raise TypeError(f"PrimFunc params[{i}]: expected Var, got {type(p).__name__}")
        if not isinstance(body, Stmt):
            raise TypeError(f"PrimFunc body: expected Stmt, got {type(body).__name__}")
        bmap = dict(buffer_map or {})
        for k, v in bmap.items():
            if not isinstance(k, Var) or not isinstance(v, Buffer):
                raise TypeError(
                    "PrimFunc buffer_map: expected Var -> Buffer entries, got "
                    f"{type(k).__name__} -> {type(v).__name__}"
                )
        _build(self, "PrimFunc", params, body, bmap, attrs or {}, to_dtype(ret_type, "PrimFunc ret_type"))


@tvm_ffi.register_object("tessel.ir.GlobalVar")
class GlobalVar(Node):
    """The name of a function of a module, as the op of a Call."""

    def __init__(self, name_hint: str) -> None:
        if not isinstance(name_hint, str):
            raise TypeError(f"GlobalVar: name_hint must be a str, got {type(name_hint).__name__}")
        _build(self, "GlobalVar", name_hint)


@tvm_ffi.register_object("tessel.ir.IRModule")
class IRModule(Node):
    """Named PrimFuncs."""

    def __init__(self, functions: Optional[dict] = None, attrs: Optional[dict] = None) -> None:
        fns = dict(functions or {})
        for k, v in fns.items():
            if not isinstance(k, str) or not isinstance(v, PrimFunc):
                raise TypeError(
                    "IRModule functions: expected str -> PrimFunc entries, got "
                    f"{type(k).__name__} -> {type(v).__name__}"
                )
        _build(self, "IRModule", fns, attrs or {})

    def __getitem__(self, name: str) -> PrimFunc:
        return self.functions[name]

    def function_names(self) -> list:
        return sorted(str(k) for k in self.functions.keys())
