"""tessel.metal's Python face on any platform: the thread's context set and restored by
``tessel.metal.context`` (nested, on error, per thread), the forms a context may be given in,
``synchronize`` reaching the context's commit, and the messages without the runtime's globals or
without PyTorch's MPS backend. The contexts are mocks: ctypes structures laid out like
``TesselMetalContext`` (include/tessel/runtime/metal_context.h) with Python callbacks, so nothing
here needs a GPU; test_metal_gpu.py runs kernels on a Mac."""

from __future__ import annotations

import ctypes
import sys
import threading

import pytest

import tessel.metal as metal
from tessel import _lib
from tessel.contrib import torch_mps

HAS_GLOBALS = all(
    _lib.get_global_func(n) is not None
    for n in ("tessel.runtime.metal_set_thread_context", "tessel.runtime.metal_find_context",
              "tessel.runtime.metal_commit", "tessel.runtime.metal_executor_name")
)
needs_globals = pytest.mark.skipif(
    not HAS_GLOBALS, reason="libtessel has no tessel.runtime.metal_* globals (built before the "
    "Metal launch path)")

MAGIC = 0x434D5354  # "TSMC"
ABI_VERSION = 1
WITH_ENCODER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p,
                                ctypes.c_void_p)
COMMIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)
LAST_ERROR = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)  # const char*, kept alive here


class ContextStruct(ctypes.Structure):
    _fields_ = [
        ("magic", ctypes.c_uint32),
        ("abi_version", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("self", ctypes.c_void_p),
        ("with_encoder", WITH_ENCODER),
        ("commit", COMMIT),
        ("last_error", LAST_ERROR),
    ]


class MockContext:
    """A TesselMetalContext whose commit records its calls (or fails with `error`)."""

    def __init__(self, name: str, *, commit: bool = True, error: str = "",
                 abi_version: int = ABI_VERSION) -> None:
        self.commits: list = []
        self._name = name.encode()
        self._error = ctypes.create_string_buffer(error.encode())
        self._with_encoder = WITH_ENCODER(lambda self_, dev, body, user: 1)
        self._commit = COMMIT(self._on_commit)
        self._last_error = LAST_ERROR(lambda self_: ctypes.addressof(self._error))
        self.struct = ContextStruct(MAGIC, abi_version, self._name, None, self._with_encoder,
                                    self._commit if commit else COMMIT(), self._last_error)

    def _on_commit(self, self_, device_id, wait):
        self.commits.append((device_id, wait))
        return 1 if self._error.value else 0

    @property
    def address(self) -> int:
        return ctypes.addressof(self.struct)


def test_import_and_availability():
    assert isinstance(metal.runtime_available(), bool)
    if sys.platform != "darwin":
        assert metal.runtime_available() is False
    assert set(metal.__all__) == {"context", "current_context", "synchronize",
                                  "runtime_available", "use_torch_mps"}


@needs_globals
def test_context_sets_nests_and_restores():
    before = metal.current_context(0)
    outer, inner = MockContext("test.outer"), MockContext("test.inner")
    with metal.context(outer.address) as address:
        assert address == outer.address
        assert metal.current_context(0) == ("thread", "test.outer")
        with metal.context(inner.address):
            assert metal.current_context(0) == ("thread", "test.inner")
        assert metal.current_context(0) == ("thread", "test.outer")
        with metal.context(None):
            assert metal.current_context(0)[0] != "thread"
        assert metal.current_context(0) == ("thread", "test.outer")
    assert metal.current_context(0) == before


@needs_globals
def test_context_restored_when_the_block_raises():
    before = metal.current_context(0)
    ctx = MockContext("test.raises")
    with pytest.raises(KeyError):
        with metal.context(ctx.address):
            raise KeyError("inside")
    assert metal.current_context(0) == before


@needs_globals
def test_context_is_per_thread():
    ctx, other = MockContext("test.main"), MockContext("test.other")
    seen = {}

    def worker():
        seen["before"] = metal.current_context(0)
        with metal.context(other.address):
            seen["inside"] = metal.current_context(0)
            barrier.wait()  # the main thread checks its own context meanwhile
            barrier.wait()

    barrier = threading.Barrier(2, timeout=30)
    with metal.context(ctx.address):
        t = threading.Thread(target=worker)
        t.start()
        barrier.wait()
        assert metal.current_context(0) == ("thread", "test.main")
        barrier.wait()
        t.join(30)
    assert seen["before"][0] != "thread"
    assert seen["inside"] == ("thread", "test.other")


@needs_globals
def test_context_accepts_pointers_and_objects():
    ctx = MockContext("test.forms")

    class WithAttribute:
        __tessel_metal_context__ = ctx.address

    class WithMethod:
        def __tessel_metal_context__(self):
            return ctypes.c_void_p(ctx.address)

    forms = [ctx.address, ctypes.c_void_p(ctx.address), ctypes.pointer(ctx.struct),
             WithAttribute(), WithMethod()]
    for form in forms:
        with metal.context(form):
            assert metal.current_context(0) == ("thread", "test.forms"), form
    for bad in [True, "0x1234", 1.5, -1, 1 << 64]:
        with pytest.raises((TypeError, ValueError)):
            with metal.context(bad):
                pass


@needs_globals
def test_synchronize_commits_and_waits_through_the_context():
    ctx = MockContext("test.commit")
    with metal.context(ctx.address):
        metal.synchronize()
        metal.synchronize(device_id=0)
    assert ctx.commits == [(0, 1), (0, 1)]


@needs_globals
def test_synchronize_reports_the_context_error():
    ctx = MockContext("test.fails", error="the GPU caught fire")
    with metal.context(ctx.address):
        with pytest.raises(RuntimeError, match="the GPU caught fire"):
            metal.synchronize()


@needs_globals
def test_synchronize_without_a_commit():
    ctx = MockContext("test.nocommit", commit=False)
    with metal.context(ctx.address):
        with pytest.raises(RuntimeError, match="test.nocommit"):
            metal.synchronize()


@needs_globals
def test_unknown_abi_version_is_refused():
    ctx = MockContext("test.future", abi_version=99)
    with metal.context(ctx.address):
        with pytest.raises(Exception, match="99"):
            metal.current_context(0)


def test_missing_globals_say_so(monkeypatch):
    monkeypatch.setattr(_lib, "get_global_func", lambda name: None)
    with pytest.raises(RuntimeError, match="metal_set_thread_context.*rebuild"):
        with metal.context(None):
            pass
    with pytest.raises(RuntimeError, match="metal_commit"):
        metal.synchronize()
    assert metal.runtime_available() is False


def test_torch_adapter_needs_mps():
    assert torch_mps.PROVIDER.is_file()
    assert (torch_mps.header_dir() / "tessel" / "runtime" / "metal_context.h").is_file()
    try:
        import torch
        has_mps = sys.platform == "darwin" and torch.backends.mps.is_available()
    except ImportError:
        has_mps = False
    if has_mps:
        pytest.skip("PyTorch's MPS backend is available: test_metal_gpu.py builds the adapter")
    with pytest.raises(RuntimeError, match="needs PyTorch with the MPS backend"):
        torch_mps.context_address()
    with pytest.raises(RuntimeError, match="needs PyTorch with the MPS backend"):
        with metal.use_torch_mps():
            pass
