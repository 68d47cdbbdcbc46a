"""Compiling a kernel: ``tessel.build`` lowers a module, generates C, compiles it with the system
C compiler and loads the library through tvm-ffi::

    mod = tessel.build(open("examples/vector_add.py").read())
    mod["vector_add"](a, b, c)          # or mod.vector_add(...); tensors via tvm_ffi.from_dlpack
    mod.export_library("vector_add.so") # loadable later by tvm_ffi.load_module alone

Libraries are cached by a hash of their C source and compiler command (TESSEL_CACHE_DIR), so a
rebuild of the same kernel loads the stored library. docs/codegen.md describes the pipeline.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import tvm_ffi

from .ir._base import Node, ffi_func
from .ir.function import IRModule, PrimFunc
from .target import Target

__all__ = ["CompiledModule", "Module", "build", "lower"]


@tvm_ffi.register_object("tessel.codegen.CompiledModule")
class CompiledModule(Node):
    """What the C++ build returns: the loaded tvm-ffi ``module``, its C ``source``, the
    ``library_path`` in the build cache, ``cache_hit`` and the seconds of each step."""

    def __str__(self) -> str:
        return repr(self)


class Module:
    """A compiled, loaded module. ``mod["name"]`` and ``mod.name`` are its tvm-ffi functions."""

    def __init__(
        self, compiled: CompiledModule, parse_seconds: float, total_seconds: float
    ) -> None:
        self._compiled = compiled
        #: Wall time from the input (text, or IR) to the loaded module, in seconds.
        self.compile_seconds = total_seconds
        #: The same time split into steps: parse, lower, codegen, cc (compile, or cache lookup),
        #: load.
        self.timings = {
            "parse": parse_seconds,
            "lower": float(compiled.lower_seconds),
            "codegen": float(compiled.codegen_seconds),
            "cc": float(compiled.cc_seconds),
            "load": float(compiled.load_seconds),
        }
        if str(compiled.target).split()[0] == "cuda":
            #: Target cuda: compiling the device code (NVRTC or nvcc).
            self.timings["nvcc"] = float(compiled.nvcc_seconds)

    @property
    def library_path(self) -> str:
        """The library file this module was loaded from (in the build cache)."""
        return str(self._compiled.library_path)

    @property
    def cache_hit(self) -> bool:
        """Whether the library was taken from the build cache without compiling."""
        return bool(self._compiled.cache_hit)

    @property
    def target(self) -> str:
        return str(self._compiled.target)

    @property
    def function_names(self) -> list:
        return [str(n) for n in self._compiled.function_names]

    @property
    def ffi_module(self) -> Any:
        """The underlying tvm_ffi.Module."""
        return self._compiled.module

    def get_source(self, fmt: str = "c") -> str:
        """The generated C (``"c"``; for a GPU target the host code, device kernels embedded),
        the CUDA C++ of the device kernels (``"cuda"``, target cuda only), or their MSL
        (``"metal"``, target metal only)."""
        if fmt == "c":
            return str(self._compiled.source)
        kind = str(self._compiled.target).split()[0]
        if fmt in ("cuda", "metal"):
            if kind != fmt:
                raise ValueError(
                    f"get_source: no {'CUDA' if fmt == 'cuda' else 'Metal'} source for target "
                    f"{self.target!r}")
            return str(self._compiled.cuda_source if fmt == "cuda" else self._compiled.metal_source)
        raise ValueError(f"get_source: unknown format {fmt!r} (expected 'c', 'cuda' or 'metal')")

    def export_library(self, path: Any) -> None:
        """Copies the library to ``path``; ``tvm_ffi.load_module(path)`` loads it without tessel."""
        ffi_func("tessel.codegen.CompiledModuleExportLibrary")(self._compiled, os.fspath(path))

    def __getitem__(self, name: str) -> Any:
        if not isinstance(name, str):
            raise TypeError(f"Module[...]: expected a function name, got {type(name).__name__}")
        return ffi_func("tessel.codegen.CompiledModuleGetFunction")(self._compiled, name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as err:
            raise AttributeError(str(err)) from None

    def __contains__(self, name: str) -> bool:
        return name in self.function_names

    def __repr__(self) -> str:
        return (
            f"<tessel.Module {self.function_names} target={self.target!r} at {self.library_path}>"
        )


def _to_module(x: Any, what: str) -> IRModule:
    if isinstance(x, IRModule):
        return x
    if isinstance(x, PrimFunc):
        sym = x.attrs.get("global_symbol") if x.attrs is not None else None
        if not isinstance(sym, str):
            raise ValueError(
                f"{what}: a PrimFunc without a 'global_symbol' attribute has no name; "
                "set T.func_attr({'global_symbol': ...}) or pass an IRModule"
            )
        return IRModule({sym: x})
    if isinstance(x, Path):
        return ffi_func("tessel.ir.ParseModule")(x.read_text(), str(x))
    if isinstance(x, str):
        return ffi_func("tessel.ir.ParseModule")(x, "<string>")
    raise TypeError(
        f"{what}: expected an IRModule, a PrimFunc, text or a pathlib.Path, got {type(x).__name__}"
    )


def _target_str(target: Any) -> str:
    if isinstance(target, Target):
        return str(target.str)
    if isinstance(target, str):
        return target
    raise TypeError(
        f"target: expected a str or a tessel.target.Target, got {type(target).__name__}"
    )


def lower(mod: Any, target: Any = "c") -> IRModule:
    """The module after the lowering pipeline for ``target`` (what the code generator sees)."""
    return ffi_func("tessel.codegen.Lower")(_to_module(mod, "lower"), _target_str(target))


def build(
    mod: Any, target: Any = "c", extra_flags: Optional[Sequence[str]] = None
) -> Module:
    """Compiles ``mod`` (an IRModule, a PrimFunc with a global_symbol, text in the text format,
    or a pathlib.Path of such a file) for ``target`` and loads it. ``extra_flags`` go to the C
    compiler after the fixed ones. Passes run under the current ``transform.PassContext``, so its
    IR dumps and timing apply."""
    start = time.perf_counter()
    module = _to_module(mod, "build")
    parse_seconds = time.perf_counter() - start
    flags = None if extra_flags is None else [str(f) for f in extra_flags]
    compiled = ffi_func("tessel.codegen.Build")(module, _target_str(target), flags)
    return Module(compiled, parse_seconds, time.perf_counter() - start)
