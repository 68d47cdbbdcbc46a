"""Scheduled programs built for CUDA and run on a real GPU against PyTorch: the GPU matmul schedule
of bench/matmul_schedule_gpu.py (shared-memory tiles copied cooperatively, register tiles,
thread bindings, decompose_reduction) at sizes it divides, and a TVM-style schedule with
cache_read/compute_at on sizes no tile divides. The same schedules also run on the Metal
harness (tests/python/test_schedule_cache.py covers the CPU lowering). Skipped, with the
reason, where PyTorch or a CUDA device is missing (CI); run on the GPU machine."""

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (CI never downloads it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device on this machine", allow_module_level=True)

import tessel  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import matmul_schedule_gpu  # noqa: E402

SMALL = """
@T.prim_func
def mm(A: T.Buffer((M, K), "float32"), B: T.Buffer((K, N), "float32"),
       C: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "mm", "tir.noalias": True})
    for i, j, k in T.grid(M, N, K):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


@pytest.mark.parametrize("n", [128, 512, 1024])
def test_bench_schedule_matches_torch(n):
    mod = tessel.build(matmul_schedule_gpu.scheduled(n).mod, target="cuda")
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    c = torch.full((n, n), float("nan"), device="cuda")
    mod["matmul"](a, b, c)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("m,n,k", [(100, 60, 70), (128, 128, 33)])
def test_non_dividing_tiles_with_shared_cache(m, n, k):
    text = SMALL.replace("M", str(m)).replace("N", str(n)).replace("K", str(k))
    sch = tessel.Schedule(text)
    b = sch.get_block("C")
    i, j, kk = sch.get_loops(b)
    bi, ti = sch.split(i, [None, 16])
    bj, tj = sch.split(j, [None, 16])
    k0, k1 = sch.split(kk, [None, 8])
    sch.reorder(bi, bj, ti, tj, k0, k1)
    sch.bind(bi, "blockIdx.y")
    sch.bind(bj, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    a_s = sch.cache_read(b, 0, "shared")
    sch.compute_at(a_s, k0)
    loops = sch.get_loops(a_s)
    f = sch.fuse(*loops[-2:])
    _, ty, tx = sch.split(f, [None, 16, 16])
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")
    mod = tessel.build(sch.mod, target="cuda")
    a, bb = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda")
    mod["mm"](a, bb, c)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.testing.assert_close(c, a @ bb, rtol=1e-4, atol=1e-3)
