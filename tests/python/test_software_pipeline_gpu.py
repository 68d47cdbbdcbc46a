"""The software-pipelined matmul of test_software_pipeline.py on a CUDA GPU (sm_80 or newer): the
cp.async ring at S = 2, 3, 4 against torch at sizes every tile divides and sizes none does
(zero-filled edges, 4-byte copies where rows are not 16-byte aligned), and a timing print (not a
timed test) of S = 1 (no pipelining), 2 and 3 on a 2048^3 fp32 and fp16 matmul."""

from __future__ import annotations

import pytest

import tessel
from conftest import gpu_torch, run_in_fresh_process
from test_software_pipeline import gpu_mm, gpu_mm_if_else, verify, lower

torch = gpu_torch()

pytestmark = pytest.mark.skipif(
    torch is None or torch.cuda.get_device_capability() < (8, 0),
    reason="needs PyTorch and a CUDA GPU of sm_80 or newer (cp.async); the device machine runs "
           "these")

_built: dict[tuple, tessel.Module] = {}


def build(m, n, k, dtype, stages):
    key = (m, n, k, dtype, stages)
    if key not in _built:
        _built[key] = tessel.build(gpu_mm(m, n, k, dtype, stages), target="cuda")
    return _built[key]


def run(m, n, k, dtype, stages):
    t = getattr(torch, dtype)
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=g).to(t)
    b = torch.randn(k, n, device="cuda", generator=g).to(t)
    c = torch.full((m, n), float("nan"), device="cuda")
    build(m, n, k, dtype, stages)["mm"](a, b, c)
    torch.cuda.synchronize()
    want = (a.double() @ b.double()).float()
    torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-3 * k ** 0.5)


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("m,n,k,dtype", [
    (256, 256, 256, "float32"),      # every tile full, 16-byte copies
    (1024, 512, 2048, "float16"),
    (200, 136, 1000, "float16"),     # ragged M, N and K: zero-filled vectors
    (100, 70, 77, "float32"),        # rows of 77 floats: 4-byte copies, per-lane guards
    (64, 64, 32, "float32"),         # a single k-tile: the prologue's other slots stay empty
])
def test_pipelined_matmul_matches_torch(m, n, k, dtype, stages):
    run(m, n, k, dtype, stages)
    assert verify(lower(gpu_mm(m, n, k, dtype, stages), "cuda -arch=sm_80")) == []


@pytest.mark.parametrize("m,n,k", [(200, 136, 1000), (64, 64, 32), (130, 72, 40)])
def test_zero_filling_cp_async_matches_torch(m, n, k):
    # B's ragged vectors as cp.async with src-size 0 past the edges (test_software_pipeline.py).
    g = torch.Generator(device="cuda").manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", generator=g).half()
    b = torch.randn(k, n, device="cuda", generator=g).half()
    c = torch.full((m, n), float("nan"), device="cuda")
    mod = tessel.build(gpu_mm_if_else(m, n, k, "float16"), target="cuda")
    # Where every tile is whole the guard is proved and goes: nothing to fill.
    ragged = n % 64 != 0 or k % 32 != 0
    assert ("tsl_cp_async_zfill<16>" in mod.get_source("cuda")) == ragged
    mod["mm"](a, b, c)
    torch.testing.assert_close(c, (a.double() @ b.double()).float(), rtol=1e-3, atol=1e-3 * k ** 0.5)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_source_off_16_byte_alignment_takes_the_plain_copies(dtype):
    # A view one element into its storage: compact and element-aligned, so the host wrapper takes
    # it, but no longer 16-byte aligned: the copies test the base and do not use cp.async. In a
    # fresh process: on the H200 (2026-12-02) the float32 case failed with "misaligned address",
    # which poisons the process's CUDA context for every later test.
    run_in_fresh_process(OFF_ALIGNMENT, dtype)


OFF_ALIGNMENT = """
import sys
sys.path.insert(0, sys.argv[1])
import torch, tessel
from test_software_pipeline import gpu_mm
m = n = k = 256
t = getattr(torch, sys.argv[2])
a = torch.randn(m * k + 1, device="cuda").to(t)[1:].view(m, k)
b = torch.randn(k, n, device="cuda").to(t)
c = torch.full((m, n), float("nan"), device="cuda")
# cuBLAS before the build: see the known bug in conftest.py.
want = (a.double() @ b.double()).float()
tessel.build(gpu_mm(m, n, k, sys.argv[2], 3), target="cuda")["mm"](a, b, c)
torch.cuda.synchronize()
torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-2)
"""


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_timing_print_one_two_three_stages(dtype):
    size = 2048
    t = getattr(torch, dtype)
    a = torch.randn(size, size, device="cuda").to(t)
    b = torch.randn(size, size, device="cuda").to(t)
    c = torch.empty(size, size, device="cuda")
    line = [f"\n{dtype} {size}^3 matmul (64x64 tiles, CUDA cores):"]
    for stages in (1, 2, 3):
        f = build(size, size, size, dtype, stages)["mm"]
        for _ in range(3):
            f(a, b, c)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        reps = 20
        start.record()
        for _ in range(reps):
            f(a, b, c)
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end) / reps
        line.append(f"S={stages}: {ms:.3f} ms ({2 * size ** 3 / ms / 1e9:.1f} TFLOP/s)")
        torch.testing.assert_close(c, (a.float() @ b.float()), rtol=1e-2, atol=1e-1)
    print("  ".join(line))
