"""The MSL execution harness for tests (tests/metal_emu/README.md): finds and loads
libtessel_metal_emu, and wraps its tvm-ffi globals.

    import metal_emu
    metal_emu.require()                        # skips the test when the harness is not built
    for order, seed in metal_emu.ORDERS:
        with metal_emu.installed(order, seed): # tessel's Metal launches now run on the CPU
            kernel(..., metal_emu.as_metal(a), metal_emu.as_metal(b))

The library is looked up at $TESSEL_METAL_EMU_LIBRARY, next to the libtessel that tessel loaded,
then in the source tree's build/lib.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from pathlib import Path
from typing import Iterator, Sequence

import pytest

import tessel  # noqa: F401  (loads libtessel and libtessel_runtime first)
import tvm_ffi
from tessel import _lib

LIB_NAME = "libtessel_metal_emu.so"
REPO = Path(__file__).resolve().parents[2]

# The thread orders every GPU example runs in: forward, reverse and a seeded random one.
ORDERS: tuple[tuple[str, int], ...] = (("forward", 0), ("reverse", 0), ("random", 20260601))


def parametrize_orders():
    """pytest.mark.parametrize("order,seed", ORDERS), with the order names as ids."""
    return pytest.mark.parametrize("order,seed", ORDERS, ids=[o for o, _ in ORDERS])


def candidate_paths() -> list[Path]:
    paths = []
    env = os.environ.get("TESSEL_METAL_EMU_LIBRARY")
    if env:
        paths.append(Path(env))
    paths.append(Path(_lib.LIB_PATH).resolve().parent / LIB_NAME)
    paths.append(REPO / "build" / "lib" / LIB_NAME)
    return paths


def _load() -> tuple[ctypes.CDLL | None, str]:
    tried = candidate_paths()
    for path in tried:
        if path.is_file():
            # RTLD_GLOBAL like libtessel; the library registers its globals when it loads.
            return ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL), ""
    listing = ", ".join(str(p) for p in tried)
    return None, f"the MSL execution harness ({LIB_NAME}) is not built; looked in {listing}"


LIB, UNAVAILABLE_REASON = _load()


def available() -> bool:
    return LIB is not None


def require() -> None:
    """Skips the calling test, with the reason, when the harness is not built."""
    if LIB is None:
        pytest.skip(UNAVAILABLE_REASON)


def _func(name: str):
    require()
    return tvm_ffi.get_global_func("tessel.testing.metal_emu." + name)


def install(order: str = "forward", seed: int = 0) -> None:
    """Makes the emulator tessel's Metal executor, running threads in `order`."""
    _func("install")(order, seed)


def uninstall() -> None:
    """Restores the executor the matching install replaced."""
    _func("uninstall")()


@contextlib.contextmanager
def installed(order: str = "forward", seed: int = 0) -> Iterator[None]:
    install(order, seed)
    try:
        yield
    finally:
        uninstall()


def _tensor(x):
    return x if isinstance(x, tvm_ffi.Tensor) else tvm_ffi.from_dlpack(x)


def as_metal(array, byte_offset: int = 0) -> tvm_ffi.Tensor:
    """A view of a CPU array (NumPy, or a tvm-ffi Tensor) on device metal:0: same memory, so
    writes of emulated kernels show in the array, which the view keeps alive."""
    return _func("as_metal")(_tensor(array), byte_offset)


def run(
    source: str,
    kernel: str,
    grid: Sequence[int],
    group: Sequence[int],
    buffers: dict[int, object] | Sequence[tuple[object, int]] = (),
    arg_bytes: bytes = b"",
    dyn_tg_bytes: int = 0,
    order: str = "forward",
    seed: int = 0,
) -> None:
    """Runs `kernel` of the MSL `source` directly (no tessel module): buffers map a
    [[buffer(slot)]] to an array (or None), arg_bytes is the constant argument struct."""
    items = buffers.items() if isinstance(buffers, dict) else [(s, a) for a, s in buffers]
    pairs = [[None if a is None else _tensor(a), int(s)] for s, a in items]
    grid3 = list(grid) + [1] * (3 - len(grid))
    group3 = list(group) + [1] * (3 - len(group))
    _func("run")(source, kernel, grid3, group3, dyn_tg_bytes, pairs, bytes(arg_bytes), order, seed)


def stats() -> dict[str, int]:
    """Counters since the process started: launches, groups, threads, threadgroup_barriers,
    simd_rendezvous, compiles, cache_hits, errors."""
    return dict(_func("stats")())


def translate(source: str) -> str:
    """The C++ the harness compiles for `source`."""
    return str(_func("translate")(source))
