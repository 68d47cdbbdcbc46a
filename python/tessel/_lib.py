"""Finds and loads libtessel, so that its node types and global functions are registered.

Search order: the TESSEL_LIBRARY_PATH environment variable (the library file, or a folder holding
it), the installed package's ``tessel/lib/``, then the source tree's ``build/lib/`` (development use
through scripts/setup.sh).
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import tvm_ffi  # loads libtvm_ffi first: libtessel resolves its symbols against it

# CMake names shared libraries .dylib on macOS (where the Metal runtime is built).
LIB_NAME = "libtessel.dylib" if sys.platform == "darwin" else "libtessel.so"


def candidate_paths() -> list[Path]:
    """Every place libtessel is looked for, in order."""
    paths = []
    env = os.environ.get("TESSEL_LIBRARY_PATH")
    if env:
        p = Path(env)
        paths.append(p / LIB_NAME if p.is_dir() else p)
    here = Path(__file__).resolve().parent
    paths.append(here / "lib" / LIB_NAME)
    paths.append(here.parent.parent / "build" / "lib" / LIB_NAME)
    return paths


def _load() -> tuple[ctypes.CDLL, Path]:
    tried = candidate_paths()
    for path in tried:
        if path.is_file():
            # RTLD_GLOBAL: compiled kernels and plugins loaded later resolve tessel symbols here.
            return ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL), path
    listing = "\n  ".join(str(p) for p in tried)
    raise ImportError(
        f"tessel: cannot find {LIB_NAME}; looked in:\n  {listing}\n"
        "Build it with ./scripts/setup.sh, or set TESSEL_LIBRARY_PATH to the library or its folder."
    )


LIB, LIB_PATH = _load()


def get_global_func(name: str):
    """The global function ``name`` of libtessel, or None when this build does not have it."""
    return tvm_ffi.get_global_func(name, allow_missing=True)
