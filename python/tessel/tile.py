"""Tile layouts (include/tessel/tile/layout.h), the vocabulary of tile-level programming::

    from tessel import tile
    acc = tile.wgmma_accumulator(256)            # the 64 x 256 accumulator of one warpgroup
    two = tile.distribute(acc, 0, 2)             # 128 x 256 over two warpgroups (256 threads)
    two.at(70, 9)                                # (thread, register) = (152, 5)
    two.check(dense=True)                        # "" : every element on one register of one thread

A ``Layout`` sends a shared-memory tile's logical indices to physical ones (``swizzled`` gives the
layout of wgmma and TMA); a ``Fragment`` sends a register tile's indices to (thread, register).
Both are expressions over their own index variables; ``check`` decides by enumerating the tile.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import tvm_ffi

from .ir._base import Node, const
from .ir.expr import Var


def _f(name: str) -> Any:
    return tvm_ffi.get_global_func("tessel.tile." + name)


def _e(v: Any) -> Any:
    return const(v) if isinstance(v, int) else v


@tvm_ffi.register_object("tessel.tile.Layout")
class Layout(Node):
    """Logical indices -> physical indices."""

    @property
    def shape(self) -> tuple:
        return tuple(_f("LayoutShape")(self))

    def at(self, *point: int) -> tuple:
        return tuple(_f("LayoutAt")(self, list(point)))

    def check(self, size: int) -> str:
        """What is wrong with the layout as a permutation of ``size`` elements ("" if nothing)."""
        return str(_f("CheckLayout")(self, size))


@tvm_ffi.register_object("tessel.tile.Fragment")
class Fragment(Node):
    """Logical indices (and a replica) -> (thread, register)."""

    @property
    def shape(self) -> tuple:
        return tuple(_f("FragmentShape")(self))

    def at(self, *point: int, rep: int = 0) -> tuple:
        return tuple(_f("FragmentAt")(self, list(point), rep))

    def check(self, dense: bool = False) -> str:
        """What is wrong with the fragment ("" if nothing); ``dense``: every register used too."""
        return str(_f("CheckFragment")(self, dense))


def layout(shape: Sequence[int], fn: Callable[..., Sequence[Any]]) -> Layout:
    """The layout whose physical indices are ``fn(i0, i1, ...)``."""
    vars_ = [Var(f"i{d}") for d in range(len(shape))]
    index = [_e(e) for e in fn(*vars_)]
    return _f("Layout")(vars_, list(shape), index)


def fragment(shape: Sequence[int], fn: Callable[..., tuple], threads: int, locals_: int,
             replicate: int = 1) -> Fragment:
    """The fragment with ``(thread, register) = fn(i0, i1, ..., rep)``."""
    vars_ = [Var(f"i{d}") for d in range(len(shape))]
    rep = Var("rep")
    thread, local = fn(*vars_, rep)
    return _f("Fragment")(vars_, list(shape), rep, replicate, _e(thread), _e(local), threads,
                          locals_)


def wgmma_accumulator(n: int) -> Fragment:
    return _f("WgmmaAccumulator")(n)


def mma_accumulator() -> Fragment:
    return _f("MmaAccumulator")()


def distribute(f: Fragment, dim: int, times: int) -> Fragment:
    return _f("Distribute")(f, dim, times)


def repeat(f: Fragment, dim: int, times: int) -> Fragment:
    return _f("Repeat")(f, dim, times)


def replicated(shape: Sequence[int], threads: int) -> Fragment:
    return _f("Replicated")(list(shape), threads)


def swizzled(rows: int, cols: int, elem_bytes: int, swizzle_bytes: int) -> Layout:
    return _f("SwizzledLayout")(rows, cols, elem_bytes, swizzle_bytes)
