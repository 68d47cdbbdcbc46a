"""Metal contexts from Python: which command buffer a tessel Metal kernel is encoded into, and
when that work is submitted (docs/metal.md, "Framework contexts").

A launch of a kernel built with ``target="metal"`` finds its context in this order: the calling
thread's context (set with :func:`context` or :func:`use_torch_mps`), a context in tvm-ffi's
stream slot for ``kDLMetal``, then tessel's own queue for the device ("tessel.default"). With a
framework's context the kernel is encoded into that framework's current command buffer, in order
with the framework's own work, and the framework submits it. With tessel's own queue, launches
are batched into one pending command buffer that runs only once it is committed:
:func:`synchronize` does that and waits.

```python
import torch, tessel, tessel.metal

mod = tessel.build(text, target="metal")
with tessel.metal.use_torch_mps():          # encode into PyTorch's MPS command buffer
    y = torch.randn(n, device="mps") * 2    # torch writes
    mod["vector_add_gpu"](x, y, z)          # tessel reads y after torch's write, writes z
    w = z + 1                               # torch reads z after tessel's write
print(w.cpu())                              # torch's own synchronization; none needed in between

mod["vector_add_gpu"](x, y, z)              # no context set: tessel's queue
tessel.metal.synchronize()                  # commit it and wait for the GPU
```

Everything here runs on the calling CPU thread and only sets or reads per-thread state in
libtessel_runtime; GPU work happens at the kernel launches and commits. Importing this module
needs neither Metal nor PyTorch: on other platforms the calls work, and a launch says that the
Metal runtime is not available.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from typing import Any, Iterator, Tuple

from . import _lib

__all__ = ["context", "current_context", "synchronize", "runtime_available", "use_torch_mps"]

_SET_THREAD_CONTEXT = "tessel.runtime.metal_set_thread_context"
_FIND_CONTEXT = "tessel.runtime.metal_find_context"
_EXECUTOR_NAME = "tessel.runtime.metal_executor_name"
_COMMIT = "tessel.runtime.metal_commit"


def _global(name: str) -> Any:
    f = _lib.get_global_func(name)
    if f is None:
        raise RuntimeError(
            f"tessel.metal: {_lib.LIB_PATH} has no global function {name!r}: this libtessel was "
            "built before tessel's Metal launch path; rebuild it (scripts/setup.sh)"
        )
    return f


def _as_int64(address: int) -> int:
    """An address as the int64 the runtime's globals take (addresses at or above 2**63 wrap)."""
    if not 0 <= address < 1 << 64:
        raise ValueError(f"tessel.metal: {address:#x} is not an address")
    return address - (1 << 64) if address >= 1 << 63 else address


def _address(obj: Any) -> int:
    """The address of a ``TesselMetalContext`` given as an int, a ctypes pointer, None (no
    context), or an object whose ``__tessel_metal_context__`` (an attribute or a method) gives
    one of those."""
    if obj is None:
        return 0
    if isinstance(obj, bool):
        raise TypeError("tessel.metal.context: expected a context address, got a bool")
    if isinstance(obj, int):
        return _as_int64(obj)
    if isinstance(obj, ctypes.c_void_p):
        return _as_int64(obj.value or 0)
    if isinstance(obj, ctypes._Pointer):  # pointer(TesselMetalContext-like Structure)
        return _as_int64(ctypes.cast(obj, ctypes.c_void_p).value or 0)
    hook = getattr(obj, "__tessel_metal_context__", None)
    if hook is not None:
        value = hook() if callable(hook) else hook
        if isinstance(value, (int, ctypes.c_void_p)) and not isinstance(value, bool):
            return _address(value)
        raise TypeError(
            f"tessel.metal.context: {type(obj).__name__}.__tessel_metal_context__ gave "
            f"{type(value).__name__}, expected an int address"
        )
    raise TypeError(
        "tessel.metal.context: expected the address of a TesselMetalContext (int or ctypes "
        f"pointer), None, or an object with __tessel_metal_context__; got {type(obj).__name__}"
    )


@contextlib.contextmanager
def context(address_or_object: Any) -> Iterator[int]:
    """Sets the calling thread's Metal context for the block and restores the previous one
    after it (also when the block raises); blocks nest.

    ``address_or_object`` is the address of a ``TesselMetalContext``
    (include/tessel/runtime/metal_context.h) as an int or a ctypes pointer, an object with
    ``__tessel_metal_context__``, or None, which sets no context: launches in the block then use
    the tvm-ffi stream slot or tessel's queue. The context must stay valid during the block; the
    object given is kept referenced until the block ends. Yields the address set.

    Only the calling thread is affected: each thread that launches kernels sets its own.
    """
    address = _address(address_or_object)
    set_context = _global(_SET_THREAD_CONTEXT)
    previous = set_context(address)
    try:
        yield address
    finally:
        set_context(previous)


def current_context(device_id: int = 0) -> Tuple[str, str]:
    """``(source, name)`` of the context a launch on metal:``device_id`` from this thread would
    use now: source is "thread", "stream", "default" (tessel's queue) or "none" (no Metal runtime
    on this platform, or no device); name is the context's, e.g. "torch.mps" or
    "tessel.default" ("" when none). On a Mac the first call for a device creates tessel's queue
    for it."""
    source, name = _global(_FIND_CONTEXT)(int(device_id))
    return str(source), str(name)


def synchronize(device_id: int = 0) -> None:
    """Submits what the context a launch would use (see :func:`current_context`) holds for
    metal:``device_id`` and waits until the GPU has finished it; raises the error of a command
    buffer that failed on the GPU. With tessel's queue this commits its pending command buffer;
    with "torch.mps" it commits PyTorch's current MPS stream and waits, like
    ``torch.mps.synchronize()`` for that stream. RuntimeError when the context offers no commit
    or no Metal runtime is available."""
    _global(_COMMIT)(int(device_id), True)


def runtime_available() -> bool:
    """Whether this libtessel_runtime has the Metal runtime (built on macOS with the Metal
    framework). False elsewhere, including when only a test emulator is installed."""
    f = _lib.get_global_func(_EXECUTOR_NAME)
    return f is not None and str(f()) == "metal"


_torch_mps_lock = threading.Lock()
_torch_mps_address = None


def _torch_mps_context_address() -> int:
    global _torch_mps_address
    with _torch_mps_lock:
        if _torch_mps_address is None:
            from .contrib import torch_mps

            _torch_mps_address = torch_mps.context_address()
        return _torch_mps_address


@contextlib.contextmanager
def use_torch_mps() -> Iterator[int]:
    """Encodes tessel's Metal launches from this thread into PyTorch's MPS command buffer for the
    block: each launch runs on torch's MPS serial queue (inline when already on it) with torch's
    current command buffer and compute encoder, so it is ordered with torch's own MPS work and no
    ``torch.mps.synchronize()`` is needed between torch and tessel; torch submits the work.

    The first use builds the adapter (python/tessel/contrib/torch_mps/provider.mm) with
    ``torch.utils.cpp_extension.load`` (compiler output under torch's extension cache; later
    processes reuse it). Needs macOS with PyTorch's MPS backend; RuntimeError otherwise.
    Yields the context's address."""
    with context(_torch_mps_context_address()) as address:
        yield address
