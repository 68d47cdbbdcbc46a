"""The "torch.mps" Metal context: builds provider.mm (beside this file) into a small PyTorch
extension with ``torch.utils.cpp_extension.load`` and gives the address of its
``TesselMetalContext``, which ``tessel.metal.use_torch_mps()`` sets as the thread's context
(docs/metal.md, "PyTorch MPS").

The build runs once per process, on the first call, with the local C++ compiler (Xcode's clang);
torch keeps the compiled extension in its extension cache (``TORCH_EXTENSIONS_DIR``) and later
processes load it from there unless the source, the flags or the context header changed. It
needs macOS with PyTorch's MPS backend; elsewhere the calls raise RuntimeError, and importing
this module needs nothing.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from pathlib import Path
from typing import Any

__all__ = ["PROVIDER", "header_dir", "build", "context_address"]

_HERE = Path(__file__).resolve().parent
#: The adapter's source, the only tessel file that includes PyTorch headers.
PROVIDER = _HERE / "provider.mm"
_HEADER = Path("tessel") / "runtime" / "metal_context.h"
_NAME = "tessel_torch_mps"

_lock = threading.Lock()
_module: Any = None


def header_dir() -> Path:
    """The include folder with tessel/runtime/metal_context.h: the installed package's
    ``tessel/include`` (wheels built on macOS ship it), else the source tree's ``include/``."""
    candidates = [_HERE.parents[1] / "include", _HERE.parents[3] / "include"]
    for c in candidates:
        if (c / _HEADER).is_file():
            return c
    listing = ", ".join(str(c / _HEADER) for c in candidates)
    raise RuntimeError(f"tessel.contrib.torch_mps: cannot find the context header; looked for {listing}")


def _require_torch_mps() -> Any:
    need = ("tessel.metal.use_torch_mps needs PyTorch with the MPS backend (macOS on Apple "
            "silicon)")
    try:
        import torch
    except ImportError as err:
        raise RuntimeError(f"{need}; PyTorch is not installed ({err})") from err
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    if sys.platform != "darwin" or mps is None or not mps.is_available():
        raise RuntimeError(f"{need}; on this machine torch.backends.mps.is_available() is False "
                           f"(platform {sys.platform}, torch {torch.__version__})")
    return torch


def build(verbose: bool = False) -> Any:
    """The compiled adapter (a Python extension module with ``context_address()``); built on the
    first call in the process. RuntimeError without PyTorch's MPS backend."""
    global _module
    with _lock:
        if _module is None:
            _require_torch_mps()
            from torch.utils.cpp_extension import load

            include = header_dir()
            # The header's hash among the flags: torch rebuilds when the ABI it declares changes.
            digest = hashlib.sha256((include / _HEADER).read_bytes()).hexdigest()[:16]
            _module = load(
                name=_NAME,
                sources=[str(PROVIDER)],
                extra_include_paths=[str(include)],
                extra_cflags=["-O2", f"-DTESSEL_METAL_CONTEXT_HEADER_SHA={digest}"],
                extra_ldflags=["-framework", "Metal", "-framework", "Foundation",
                               "-framework", "MetalPerformanceShaders",
                               "-framework", "MetalPerformanceShadersGraph"],
                verbose=verbose,
            )
        return _module


def context_address() -> int:
    """The address of the adapter's static ``TesselMetalContext`` ("torch.mps"), valid for the
    life of the process; builds the adapter on the first call."""
    return int(build().context_address())
