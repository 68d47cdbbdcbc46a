"""Structural equality and hashing (tvm-ffi's, driven by the nodes' reflection): variables are
compared by where they are bound, names are ignored. Free variables are equal only to themselves
unless ``map_free_vars`` is set, when they may map one-to-one onto the other side's.

tvm-ffi's walks recurse once per level, so each call first measures the depth of its operands
without recursion and raises RecursionError past 2,000 levels of objects (kMaxStructuralDepth,
docs/reliability.md) instead of overflowing the stack."""

from __future__ import annotations

from typing import Any, Optional

import tvm_ffi.structural as _structural

from ._base import ffi_func


def _check_depth(*nodes: Any) -> None:
    check = ffi_func("tessel.ir.CheckStructuralDepth")
    for node in nodes:
        check(node)


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    _check_depth(lhs, rhs)
    return bool(_structural.structural_equal(lhs, rhs, map_free_vars=map_free_vars))


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    _check_depth(node)
    return int(_structural.structural_hash(node, map_free_vars=map_free_vars))


def first_mismatch(lhs: Any, rhs: Any, map_free_vars: bool = False) -> Optional[Any]:
    """The access paths (lhs, rhs) of the first difference, or None when equal."""
    _check_depth(lhs, rhs)
    return _structural.get_first_structural_mismatch(lhs, rhs, map_free_vars=map_free_vars)


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raises AssertionError naming the first mismatch and printing both sides."""
    if structural_equal(lhs, rhs, map_free_vars):
        return
    raise AssertionError(
        f"not structurally equal; first mismatch at {first_mismatch(lhs, rhs, map_free_vars)}\n"
        f"--- lhs ---\n{lhs}\n--- rhs ---\n{rhs}"
    )
