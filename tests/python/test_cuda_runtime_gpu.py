"""The CUDA runtime on a real GPU: launches through the tessel_cuda module with every launch
attribute (PDL, cooperative), dynamic shared memory past 48 KB and growing between calls, torch
streams, concurrent launches from Python threads, and the launch checks' messages.

Needs PyTorch with a CUDA device (the H200 machine); skipped elsewhere with the reason. Results are
checked against torch on the same data."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (the GPU tests need it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device (torch.cuda.is_available() is False)", allow_module_level=True)

import tessel  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_MAJOR, _MINOR = torch.cuda.get_device_capability()
TARGET = f"cuda -arch=sm_{_MAJOR}{_MINOR}"
_CACHE: dict = {}


def build_text(text: str):
    if text not in _CACHE:
        _CACHE[text] = tessel.build(text, target=TARGET)
    return _CACHE[text]


def example(name: str):
    return build_text((EXAMPLES / f"{name}.py").read_text())


def dev_randn(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.float32)


@pytest.mark.parametrize("n", [1, 255, 256, 1000, 1 << 20])
def test_vector_add(n):
    a, b, c = dev_randn(n), dev_randn(n), torch.empty(n, device="cuda")
    example("vector_add_gpu")["vector_add_gpu"](a, b, c)
    torch.cuda.synchronize()
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


def test_softmax_and_matmul():
    x, y = dev_randn(37, 1000), torch.empty(37, 1000, device="cuda")
    example("softmax_gpu")["softmax_gpu"](x, y)
    a, b, c = dev_randn(64, 96), dev_randn(96, 128), torch.empty(64, 128, device="cuda")
    example("matmul_gpu")["matmul_gpu"](a, b, c)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_pdl_producer_consumer():
    # The consumer is launched with programmatic stream serialization, so it may start before the
    # producer ends; its pdl_sync still waits for the producer's stores. Many rounds on one stream,
    # each overwriting the data, catch a consumer that reads early.
    mod = example("pdl_pair")
    n = 1 << 22
    a, b, c = dev_randn(n), torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
    for k in range(20):
        a.fill_(float(k))
        mod["pdl_producer"](a, b)
        mod["pdl_consumer"](b, c)
        torch.cuda.synchronize()
        assert torch.equal(c, torch.full_like(c, 2.0 * k + 1.0)), k


def test_cooperative_grid_barrier():
    a, b = torch.zeros(4096, device="cuda"), torch.empty(4096, device="cuda")
    example("grid_sync")["grid_sync"](a, b)
    torch.cuda.synchronize()
    idx = torch.arange(4096, device="cuda")
    want = (((idx // 128 + 1) % 32) * 128 + idx % 128).float()
    assert torch.equal(b, want)


def test_dynamic_shared_memory_above_48k():
    a, b = dev_randn(8, 24576), torch.empty(8, 24576, device="cuda")
    example("big_smem")["big_smem"](a, b)  # 96 KB per block: the runtime raises the limit
    torch.cuda.synchronize()
    assert torch.equal(b, a.flip(1))


def test_symbolic_shared_size_grows_between_calls():
    f = example("smem_symbolic")["smem_symbolic"]
    # 400 B, 20 KB, 80 KB (past the default 48 KB), 160 KB, then small again (the limit stays).
    for m in [100, 5000, 20000, 40000, 100]:
        a, b = dev_randn(3, m), torch.empty(3, m, device="cuda")
        f(a, b)
        torch.cuda.synchronize()
        assert torch.equal(b, a.flip(1)), m


def test_non_default_torch_stream_is_ordered():
    f = example("vector_add_gpu")["vector_add_gpu"]
    n = 1 << 20
    a, b = torch.zeros(n, device="cuda"), dev_randn(n)
    c = torch.empty(n, device="cuda")
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        # The fill runs after a long sleep on s: a launch on any other stream would read zeros.
        torch.cuda._sleep(100_000_000)
        a.fill_(3.0)
        f(a, b, c)
    s.synchronize()
    torch.testing.assert_close(c, b + 3.0, rtol=0, atol=0)


def test_eight_threads_launch_concurrently():
    f = example("vector_add_gpu")["vector_add_gpu"]
    errors = []

    def work(seed):
        try:
            for k in range(25):
                n = 1000 + 37 * seed + k
                a, b = dev_randn(n), dev_randn(n)
                c = torch.empty(n, device="cuda")
                f(a, b, c)
                torch.cuda.current_stream().synchronize()
                if not torch.equal(c, a + b):
                    errors.append(f"thread {seed} round {k}: wrong result")
        except Exception as e:  # noqa: BLE001 - reported below with the thread
            errors.append(f"thread {seed}: {e!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_too_much_shared_memory_is_refused():
    f = example("smem_symbolic")["smem_symbolic"]
    m = 70000  # 280 KB of floats: more than any GPU's per-block shared memory
    a, b = dev_randn(2, m), torch.empty(2, m, device="cuda")
    with pytest.raises(ValueError, match=r"needs 280000 bytes of dynamic shared memory"):
        f(a, b)


GRID_SYNC_ANY = """
# from tvm.script import tir as T

@T.prim_func
def grid_sync_any(A: T.Buffer((n, 1024), "float32"), B: T.Buffer((n, 1024), "float32")):
    T.func_attr({"global_symbol": "grid_sync_any", "target": "cuda", "tir.noalias": True})
    for bx in T.thread_binding(n, thread="blockIdx.x"):
        for tx in T.thread_binding(1024, thread="threadIdx.x"):
            A[bx, tx] = T.Cast("float32", bx)
            T.grid_sync()
            B[bx, tx] = A[(bx + 1) % n, tx]
"""


def test_cooperative_grid_too_large_is_refused():
    f = build_text(GRID_SYNC_ANY)["grid_sync_any"]
    a, b = torch.zeros(6, 1024, device="cuda"), torch.empty(6, 1024, device="cuda")
    f(a, b)
    torch.cuda.synchronize()
    want = ((torch.arange(6, device="cuda") + 1) % 6).float()[:, None].expand(6, 1024)
    assert torch.equal(b, want)
    big = torch.zeros(1_000_000, 1024, device="cuda")
    with pytest.raises(ValueError, match=r"cooperative grid of 1000000 blocks exceeds the \d+ blocks"):
        f(big, big)


def test_cpu_tensor_is_refused():
    f = example("vector_add_gpu")["vector_add_gpu"]
    a = torch.zeros(8)
    with pytest.raises(ValueError, match=r"^vector_add_gpu: A.device: expected cuda, got cpu:0$"):
        f(a, a, a)
