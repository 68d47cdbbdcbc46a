"""tessel's Metal runtime on a real Apple GPU (scripts/test_metal_mac.sh runs it): the
Metal-capable examples against NumPy (the ones Metal cannot express, grid_sync and big_smem, are refused before any launch: test_metal_examples.py), both on tessel's own queue and in PyTorch's MPS context;
ordering with torch ops without torch.mps.synchronize(); sliced tensors (setBuffer offsets);
eight threads launching one kernel; MLX arrays through DLPack; the threadgroup memory limits;
and a compile error that quotes the MSL.

Every test that launches is skipped, with the reason, unless this is macOS with a Metal GPU and
libtessel_runtime has the Metal runtime; those that need PyTorch's MPS backend or MLX skip
without them. Only test_module_bytes_match_the_runtime runs elsewhere (it keeps the hand-made
modules below honest against the runtime's parser)."""

from __future__ import annotations

import struct
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

import tessel
import tessel.metal

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

ON_MAC = sys.platform == "darwin"
RUNTIME = ON_MAC and tessel.metal.runtime_available()
try:
    GPU = RUNTIME and tessel.metal.current_context(0)[0] == "default"
except Exception:  # e.g. the device list failed: the tests would say why, the skip reason tells
    GPU = False
WHY = "needs macOS with a Metal GPU and tessel built with the Metal runtime"
if not ON_MAC:
    WHY += f" (this is {sys.platform})"
elif not RUNTIME:
    WHY += " (libtessel_runtime has no Metal runtime: build it on macOS with the Metal framework)"
elif not GPU:
    WHY += " (no Metal device: MTLCopyAllDevices and MTLCreateSystemDefaultDevice found none)"
needs_gpu = pytest.mark.skipif(not GPU, reason=WHY)

try:
    import torch

    HAS_MPS = ON_MAC and torch.backends.mps.is_available()
except ImportError:
    torch = None
    HAS_MPS = False
needs_mps = pytest.mark.skipif(not (GPU and HAS_MPS),
                               reason=WHY if not GPU else "needs PyTorch with the MPS backend")
try:
    import mlx.core as mx
except ImportError:
    mx = None
needs_mlx = pytest.mark.skipif(not (GPU and mx is not None),
                               reason=WHY if not GPU else "needs MLX (pip install mlx)")

MODES = ["default", "torch"]  # tessel's queue, or PyTorch's MPS context
_built: dict = {}


def kernel(example: str, name: str | None = None):
    if example not in _built:
        _built[example] = tessel.build((EXAMPLES / f"{example}.py").read_text(), target="metal")
    return _built[example][name or example]


class Run:
    """Launches in one mode. "default": torch's work is synchronized before tessel's queue runs,
    and tessel's queue is synchronized after. "torch": the launches go into torch's MPS command
    buffer and only torch's own synchronization (a copy to the CPU) is used."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def __call__(self, f, *args):
        if self.mode == "torch":
            with tessel.metal.use_torch_mps():
                assert tessel.metal.current_context(0) == ("thread", "torch.mps")
                f(*args)
        else:
            torch.mps.synchronize()
            f(*args)
            tessel.metal.synchronize()


@pytest.fixture(params=MODES)
def run(request):
    return Run(request.param)


def mps(*shape):
    return torch.randn(*shape, device="mps", dtype=torch.float32)


def host(t) -> np.ndarray:
    return t.cpu().numpy()


# ---- the examples against NumPy ------------------------------------------------------------------


@needs_mps
@pytest.mark.parametrize("n", [1, 255, 1000, (1 << 20) + 3])
def test_vector_add(run, n):
    a, b, c = mps(n), mps(n), torch.empty(n, device="mps")
    run(kernel("vector_add_gpu"), a, b, c)
    np.testing.assert_array_equal(host(c), host(a) + host(b))


@needs_mps
@pytest.mark.parametrize("rows,cols", [(1, 1), (7, 33), (64, 1000), (3, 70000)])
def test_softmax(run, rows, cols):
    x, y = mps(rows, cols) * 4, torch.empty(rows, cols, device="mps")
    run(kernel("softmax_gpu"), x, y)
    xs = host(x).astype(np.float64)
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    np.testing.assert_allclose(host(y), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


@needs_mps
@pytest.mark.parametrize("m,k,n", [(32, 32, 32), (64, 96, 128), (256, 512, 128)])
def test_matmul(run, m, k, n):
    a, b, c = mps(m, k), mps(k, n), torch.empty(m, n, device="mps")
    run(kernel("matmul_gpu"), a, b, c)
    want = host(a).astype(np.float64) @ host(b).astype(np.float64)
    np.testing.assert_allclose(host(c), want, rtol=1e-4, atol=1e-3)


@needs_mps
def test_block_reduce_shared(run):
    a, b = mps(32768), torch.empty(256, device="mps")
    run(kernel("block_reduce_shared"), a, b)
    want = host(a).astype(np.float64).reshape(256, 128).sum(axis=1)
    np.testing.assert_allclose(host(b), want, rtol=1e-5, atol=1e-4)


@needs_mps
def test_attr_thread_extent(run):
    a, b = mps(4096), torch.empty(4096, device="mps")
    run(kernel("attr_thread_extent"), a, b)
    np.testing.assert_array_equal(host(b), host(a) + np.float32(1))


@needs_mps
@pytest.mark.parametrize("m", [1, 100, 1000, 8192])  # 8192 floats: all 32 KB of threadgroup memory
def test_smem_symbolic(run, m):
    a, b = mps(7, m), torch.empty(7, m, device="mps")
    run(kernel("smem_symbolic"), a, b)
    np.testing.assert_array_equal(host(b), host(a)[:, ::-1])


@needs_mps
def test_pdl_pair(run):
    a, b, c = mps(1 << 20), torch.empty(1 << 20, device="mps"), torch.empty(1 << 20, device="mps")
    run(kernel("pdl_pair", "pdl_producer"), a, b)
    run(kernel("pdl_pair", "pdl_consumer"), b, c)
    np.testing.assert_array_equal(host(c), host(a) * np.float32(2) + np.float32(1))


# ---- PyTorch MPS ---------------------------------------------------------------------------------


@needs_mps
def test_torch_ordering_without_synchronize():
    # torch writes x, tessel reads it and writes z, torch reads z: all in torch's command buffers,
    # and the only synchronization is the copies to the CPU at the end. Large tensors and many
    # rounds, each with new values, so that a launch ordered wrongly reads stale data.
    n, rounds = 1 << 22, 16
    vadd = kernel("vector_add_gpu")
    outs = []
    with tessel.metal.use_torch_mps():
        for k in range(rounds):
            x = torch.full((n,), float(k), device="mps") * 3
            y = torch.ones(n, device="mps")
            z = torch.empty(n, device="mps")
            vadd(x, y, z)
            outs.append(z * 2 + 1)
    for k, w in enumerate(outs):
        assert torch.equal(w.cpu(), torch.full((n,), 2.0 * (3 * k + 1) + 1)), k


@needs_mps
def test_torch_context_commit():
    with tessel.metal.use_torch_mps():
        a, c = mps(4096), torch.empty(4096, device="mps")
        kernel("attr_thread_extent")(a, c)
        tessel.metal.synchronize()  # commits torch's stream and waits
    np.testing.assert_array_equal(host(c), host(a) + np.float32(1))
    assert tessel.metal.current_context(0) == ("default", "tessel.default")


@needs_mps
def test_sliced_tensors_bind_with_byte_offsets(run):
    # Views with a storage offset reach the kernel as setBuffer offsets (4 and 12 bytes here);
    # the elements around the view stay untouched.
    base_a = mps(4096 + 8)
    base_b = torch.zeros(4096 + 8, device="mps")
    a, b = base_a[1:4097], base_b[3:4099]
    run(kernel("attr_thread_extent"), a, b)
    whole = host(base_b)
    np.testing.assert_array_equal(whole[3:4099], host(base_a)[1:4097] + np.float32(1))
    assert not whole[:3].any() and not whole[4099:].any()


@needs_mps
def test_sliced_tensors_vectorized(run):
    # vector_add_gpu moves packed_float4s, which need only their elements' 4-byte alignment:
    # views at byte offsets 4, 8 and 12.
    n = 1000
    base = mps(2, n + 16)
    a, b = base[0, 1:n + 1], base[1, 2:n + 2]
    out = torch.zeros(n + 16, device="mps")
    c = out[3:n + 3]
    run(kernel("vector_add_gpu"), a, b, c)
    np.testing.assert_array_equal(host(c), host(a) + host(b))
    assert not host(out)[:3].any() and not host(out)[n + 3:].any()


@needs_mps
@pytest.mark.parametrize("mode", MODES)
def test_eight_threads_one_kernel(mode):
    # Eight threads launch the same kernel (the first launch compiles it) on their own tensors.
    vadd = kernel("attr_thread_extent")
    inputs = [mps(4096) for _ in range(8)]
    outputs = [[torch.empty(4096, device="mps") for _ in range(20)] for _ in range(8)]
    torch.mps.synchronize()
    errors = []
    start = threading.Barrier(8, timeout=60)

    def worker(i):
        try:
            start.wait()
            if mode == "torch":
                with tessel.metal.use_torch_mps():
                    for out in outputs[i]:
                        vadd(inputs[i], out)
            else:
                for out in outputs[i]:
                    vadd(inputs[i], out)
                tessel.metal.synchronize()
        except Exception as e:  # reported below, with the thread
            errors.append((i, e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    torch.mps.synchronize()
    for i in range(8):
        want = host(inputs[i]) + np.float32(1)
        for out in outputs[i]:
            np.testing.assert_array_equal(host(out), want)


# ---- MLX -----------------------------------------------------------------------------------------


@needs_mlx
def test_mlx_arrays_through_dlpack():
    # MLX arrays go through DLPack (their __dlpack__ evaluates them and exports the MTLBuffer and
    # its byte offset); tessel runs on its own queue, so the output is read after synchronize().
    n = (1 << 20) + 3
    a, b = mx.random.normal((n,)), mx.random.normal((n,))
    c = mx.zeros((n,), dtype=mx.float32)
    mx.eval(a, b, c)
    kernel("vector_add_gpu")(a, b, c)
    tessel.metal.synchronize()
    np.testing.assert_array_equal(np.array(c), np.array(a) + np.array(b))


# ---- limits and errors, through hand-made modules ------------------------------------------------


def _string(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def metal_module_bytes(source: str, kernels, msl: str = "3.0", fast_math: bool = False) -> bytes:
    """The tessel_metal bytes format (include/tessel/runtime/metal_module.h). `kernels`: tuples
    (name, params, args_index, args_bytes, tg_static, tg_dynamic, max_threads), each param
    (kind, (code, bits, lanes), slot) with kind 0 = buffer, 1 = scalar."""
    out = bytearray(b"TSLMETAL") + struct.pack("<I", 1) + _string(source.encode())
    out += _string(msl.encode()) + struct.pack("<II", 1 if fast_math else 0, len(kernels))
    for name, params, args_index, args_bytes, tg_static, tg_dynamic, max_threads in kernels:
        out += _string(name.encode()) + struct.pack("<I", len(params))
        for kind, (code, bits, lanes), slot in params:
            out += struct.pack("<BBBHI", kind, code, bits, lanes, slot)
        out += struct.pack("<IIIBI", args_index, args_bytes, tg_static, tg_dynamic, max_threads)
    return bytes(out)


def load_metal_module(source: str, kernels, **kw):
    load = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.tessel_metal")
    return load(metal_module_bytes(source, kernels, **kw))


FLOAT32 = (2, 32, 1)  # kDLFloat
BROKEN_MSL = """#include <metal_stdlib>
using namespace metal;
kernel void broken(device float* a [[buffer(0)]]) {
  a[0] = not_declared_anywhere;
}
"""
TG_MSL = """#include <metal_stdlib>
using namespace metal;
kernel void tg(device float* a [[buffer(0)]], threadgroup float* dyn [[threadgroup(0)]],
               uint t [[thread_position_in_threadgroup]]) {
  threadgroup float fixed[6144];  // 24 KB the kernel table below does not declare
  fixed[t] = dyn[t];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  a[t] = fixed[(t + 1) % 32];
}
"""


def test_module_bytes_match_the_runtime():
    info = tvm_ffi.get_global_func("tessel.runtime.metal_module_info")(
        metal_module_bytes(BROKEN_MSL, [("broken", [(0, FLOAT32, 0)], 1, 0, 0, 0, 0)]))
    assert info["msl_version"] == "3.0" and not info["fast_math"]
    (k,) = info["kernels"]
    assert k["name"] == "broken" and tuple(k["params"][0]) == ("buffer", "float32", 0)


@needs_gpu
def test_compile_error_quotes_the_msl():
    mod = load_metal_module(BROKEN_MSL, [("broken", [(0, FLOAT32, 0)], 1, 0, 0, 0, 0)])
    for _ in range(2):  # a failed compile is not cached: the second launch fails the same way
        with pytest.raises(RuntimeError) as err:
            mod["broken"](0, 1, 1, 1, 1, 1, 1, 0, None)
        message = str(err.value)
        assert "not_declared_anywhere" in message and "program_source:4:" in message
        assert "  4 |   a[0] = not_declared_anywhere;" in message


@needs_gpu
def test_threadgroup_memory_limit_of_the_device():
    # The table claims no static threadgroup memory, so the launch plan accepts 16 KB of dynamic
    # memory; the pipeline knows its 24 KB array, and the runtime refuses the 40 KB total.
    mod = load_metal_module(TG_MSL, [("tg", [(0, FLOAT32, 0)], 1, 0, 0, 1, 0)])
    with pytest.raises(ValueError, match=r"tg: needs \d+ bytes of threadgroup memory \(16384 "
                                         r"dynamic \+ \d+ static\)"):
        mod["tg"](0, 1, 1, 1, 32, 1, 1, 16384, None)


@needs_mps
def test_threadgroup_memory_limit_of_a_launch():
    a, b = mps(2, 8193), torch.empty(2, 8193, device="mps")  # 8193 floats: 4 bytes too many
    with pytest.raises(ValueError, match="32768"):
        kernel("smem_symbolic")(a, b)
