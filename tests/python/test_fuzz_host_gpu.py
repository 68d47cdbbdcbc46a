"""The host wrapper fuzzer (docs/reliability.md, "Host wrapper fuzzer") on the GPU targets: the
cases of fuzz_host_cases.py against the same five functions written with thread bindings, built
for cuda and for metal.

The checks of a CUDA function's wrapper run in its host C before the launch, and the launch is
the first thing that needs the driver (the cubin loads lazily, per device, at the first launch).
So the CUDA fuzz needs no GPU: its tensors are hand-made DLPack tensors on cuda:0 over host
memory that no kernel reads, every call that must be refused has to raise the TypeError or
ValueError that names the argument, and every call that passes all checks has to stop at the
launch with the runtime's "CUDA driver ... not found" (the child points
TESSEL_CUDA_DRIVER_LIBRARY at a file that does not exist, so this holds on a GPU machine too).

With a GPU and PyTorch, `test_fuzz_cuda_host_wrapper_on_the_gpu` runs the same cases for real:
each array's memory is copied to the GPU as it is laid out (strides, offsets and aliasing kept),
passed as a torch tensor or as a hand-made DLPack tensor over that memory, and copied back after
the call, so the outputs are compared with NumPy and a refused call must leave them unchanged.

Metal runs on the repository's MSL emulator (tests/python/metal_emu.py) when it is built: the
tensors are on metal:0 over host memory, which is what an MTLBuffer is to the emulator, and the
kernels run on the CPU.

Each target's seeds run in child processes and share TESSEL_FUZZ_SECONDS (default 4);
`python tests/python/test_fuzz_host_gpu.py --target T --seed S --case I` replays one case.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import gpu_torch, have_cuda_compiler
from fuzz_host_cases import GPU_KERNELS, FakeTensor, Target, arguments, fuzz, run_seed

SEEDS = [11, 22]
SECONDS = float(os.environ.get("TESSEL_FUZZ_SECONDS", "4"))
# Where the CUDA children look for the driver: nowhere, so that no call reaches a GPU.
NO_DRIVER = "/nonexistent/tessel-fuzz/libcuda.so.1"


# ---- cuda, no GPU: host memory on cuda:0, calls stop at the launch ----
def _fake_present(device):
    def present(fuzzer, a):
        import tvm_ffi

        return tvm_ffi.from_dlpack(FakeTensor(a, device=device))

    return present


CUDA_NO_GPU = Target(
    "cuda -arch=sm_80", GPU_KERNELS, (2, 0), [(1, 0), (8, 0), (3, 0), (2, 1), (13, 0), (99, 0)],
    present=_fake_present((2, 0)), launch_error="CUDA driver (" + NO_DRIVER + ") not found")


# ---- cuda on a GPU: the arrays' memory copied to the GPU as laid out ----
def _span(a):
    """The bytes [lo, hi) that `a`'s elements cover, relative to its first element."""
    if a.size == 0:
        return 0, 0
    lo = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s > 0) + a.itemsize
    return lo, hi


_TORCH_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32",
                 "float64", "complex64"]


def _on_gpu(fuzzer, a):
    """The address of `a`'s first element in a GPU copy of its memory (one copy per array and
    case, so that aliases stay aliases), and that copy; the copy goes back after the call."""
    torch = gpu_torch()
    cache = fuzzer.__dict__.setdefault("gpu_copies", {})
    lo, hi = _span(a)
    key = (a.ctypes.data + lo, hi - lo)
    if key not in cache:
        if hi > lo:
            raw = np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(key[0]))
            g = torch.from_numpy(raw.copy()).cuda()

            def back(raw=raw, g=g):
                torch.cuda.synchronize()  # whatever stream the launch went to
                raw[:] = g.cpu().numpy()

            fuzzer.after.append(back)
        else:
            g = torch.zeros(16, dtype=torch.uint8, device="cuda")
        cache[key] = g
    g = cache[key]
    return g.data_ptr() - lo, g


def _gpu_present(fuzzer, a):
    torch = gpu_torch()
    first, g = _on_gpu(fuzzer, a)
    elems = [s // a.itemsize for s in a.strides]
    if (a.dtype.name in _TORCH_DTYPES and first == g.data_ptr() and a.size > 0
            and all(s >= 0 and s % a.itemsize == 0 for s in a.strides)
            and g.numel() % a.itemsize == 0 and fuzzer.rng.random() < 0.5):
        return g.view(getattr(torch, a.dtype.name)).as_strided(a.shape, elems)
    return _gpu_fake(fuzzer, a, data=first)


def _gpu_fake(fuzzer, base, **kw):
    import tvm_ffi

    kw.setdefault("device", (2, 0))
    if "data" not in kw:
        kw["data"] = _on_gpu(fuzzer, base)[0]
    return tvm_ffi.from_dlpack(FakeTensor(base, **kw))


CUDA_GPU = Target(
    "cuda", GPU_KERNELS, (2, 0), [(1, 0), (8, 0), (3, 0), (2, 1), (13, 0), (99, 0)],
    present=_gpu_present, fake=_gpu_fake)


# ---- metal on the emulator ----
def _metal_present(fuzzer, a):
    import metal_emu

    if fuzzer.rng.random() < 0.5:
        return metal_emu.as_metal(a)
    return _fake_present((8, 0))(fuzzer, a)


def _metal_context():
    import metal_emu

    return metal_emu.installed("forward", 0)


METAL_EMU = Target(
    "metal", GPU_KERNELS, (8, 0), [(1, 0), (2, 0), (4, 1), (8, 1), (13, 0), (99, 0)],
    present=_metal_present, context=_metal_context)

TARGETS = {"cuda-no-gpu": CUDA_NO_GPU, "cuda-gpu": CUDA_GPU, "metal-emu": METAL_EMU}


def _metal_emu_missing():
    import metal_emu

    return None if metal_emu.available() else metal_emu.UNAVAILABLE_REASON


def _run(target, seed, env=None):
    run_seed(__file__, seed, SECONDS / len(SEEDS), ["--target", target], env)


@pytest.mark.skipif(not have_cuda_compiler(), reason="no NVRTC or nvcc to build for cuda")
@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_cuda_host_wrapper_without_a_gpu(seed):
    _run("cuda-no-gpu", seed, {"TESSEL_CUDA_DRIVER_LIBRARY": NO_DRIVER})


@pytest.mark.skipif(gpu_torch() is None, reason="needs a CUDA GPU and PyTorch")
@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_cuda_host_wrapper_on_the_gpu(seed):
    _run("cuda-gpu", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_metal_host_wrapper_on_the_emulator(seed):
    missing = _metal_emu_missing()
    if missing:
        pytest.skip(missing)
    _run("metal-emu", seed)


def regressions():
    """What the fuzzer found: an empty tensor sized a grid of 0 blocks, which the launch refused
    (`add_kernel: grid x = 0: launch dimensions must be at least 1`, naming the kernel rather than
    anything the caller passed) where target c returns. Now no launch happens, so with no driver
    an empty call returns and a call of one element stops at the launch."""
    import tessel
    import tvm_ffi

    add = tessel.build(GPU_KERNELS, target=CUDA_NO_GPU.name)["add"]
    for n, want in [(0, None), (1, CUDA_NO_GPU.launch_error)]:
        a = [tvm_ffi.from_dlpack(FakeTensor(np.zeros(n, "float32"), device=(2, 0)))
             for _ in range(3)]
        try:
            add(*a)
            got = None
        except RuntimeError as err:
            got = str(err)
        assert (got is None) if want is None else (want in got), (n, got)
    print("ok")
    return 0


def test_regressions_in_a_child():
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc to build for cuda")
    env = {**os.environ, "TESSEL_CUDA_DRIVER_LIBRARY": NO_DRIVER}
    proc = subprocess.run([sys.executable, __file__, "--regressions"], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"


def test_empty_tensors_launch_nothing_on_metal():
    missing = _metal_emu_missing()
    if missing:
        pytest.skip(missing)
    import metal_emu
    import tessel

    add = tessel.build(GPU_KERNELS, target="metal")["add"]
    with metal_emu.installed():
        before = metal_emu.stats()["launches"]
        add(*[metal_emu.as_metal(np.zeros(0, "float32")) for _ in range(3)])
        assert metal_emu.stats()["launches"] == before


if __name__ == "__main__":
    opts = arguments(extra=lambda ap: (
        ap.add_argument("--target", choices=sorted(TARGETS)),
        ap.add_argument("--regressions", action="store_true")))
    if opts.regressions:
        sys.exit(regressions())
    if opts.target == "cuda-no-gpu":
        os.environ.setdefault("TESSEL_CUDA_DRIVER_LIBRARY", NO_DRIVER)
    # A GPU copy of the span family's 8 GiB views would not fit: not on the GPU.
    sys.exit(fuzz(opts.seed, opts.seconds, opts.case, TARGETS[opts.target],
                  big=opts.target != "cuda-gpu"))
