"""Structural equality and hashing (tvm-ffi's, driven by the nodes' reflection): variables are
compared by where they are bound, names are ignored. Free variables are equal only to themselves
unless ``map_free_vars`` is set, when they may map one-to-one onto the other side's."""

from __future__ import annotations

from typing import Any, Optional

import tvm_ffi.structural as _structural


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    return bool(_structural.structural_equal(lhs, rhs, map_free_vars=map_free_vars))


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    return int(_structural.structural_hash(node, map_free_vars=map_free_vars))


def first_mismatch(lhs: Any, rhs: Any, map_free_vars: bool = False) -> Optional[Any]:
    """The access paths (lhs, rhs) of the first difference, or None when equal."""
    return _structural.get_first_structural_mismatch(lhs, rhs, map_free_vars=map_free_vars)


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raises AssertionError naming the first mismatch and printing both sides."""
    if structural_equal(lhs, rhs, map_free_vars):
        return
    raise AssertionError(
        f"not structurally equal; first mismatch at {first_mismatch(lhs, rhs, map_free_vars)}\n"
        f"--- lhs ---\n{lhs}\n--- rhs ---\n{rhs}"
    )
