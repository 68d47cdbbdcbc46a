"""Targets: what a module is compiled for, parsed from strings such as ``"c"``,
``"cuda -arch=sm_90"`` or ``"metal"``::

    t = tessel.target.Target("cuda -arch=sm_90")
    t.kind, dict(t.attrs), t.str   # ("cuda", {"arch": "sm_90"}, "cuda -arch=sm_90")

An unknown kind or option, or a malformed one, is a ValueError naming it.
"""

from __future__ import annotations

import tvm_ffi

from .ir._base import Node, ffi_func

__all__ = ["Target", "kinds"]


@tvm_ffi.register_object("tessel.target.Target")
class Target(Node):
    """A parsed target string: ``kind``, ``attrs`` (options without their '-') and ``str``."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(
                f"Target: expected a target string such as 'c', got {type(text).__name__}"
            )
        self.__init_handle_by_constructor__(ffi_func("tessel.target.Target"), text)

    def __str__(self) -> str:
        return str(self.str)

    def __repr__(self) -> str:
        return f"Target({str(self.str)!r})"


def kinds() -> list:
    """The target kinds, e.g. ["c", "cuda", "metal"]."""
    return [str(k) for k in ffi_func("tessel.target.TargetKinds")()]
