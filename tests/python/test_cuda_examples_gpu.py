"""Every GPU example in examples/ built for CUDA by tessel and checked against PyTorch on a real GPU.
Skipped, with the reason, where PyTorch or a CUDA device is missing (CI); run on the GPU machine."""

from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (CI never downloads it)")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device on this machine", allow_module_level=True)

import tessel  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_built = {}


def kernel(example, name=None):
    if example not in _built:
        _built[example] = tessel.build((EXAMPLES / f"{example}.py").read_text(), target="cuda")
    return _built[example][name or example]


def cuda(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda").to(dtype)


@pytest.mark.parametrize("n", [1, 255, 256, 1000, (1 << 20) + 3])
def test_vector_add_gpu(n):
    a, b = cuda(n), cuda(n)
    c = torch.empty_like(a)
    kernel("vector_add_gpu")(a, b, c)
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


@pytest.mark.parametrize("rows,cols", [(1, 1), (7, 33), (64, 1000), (128, 4096), (3, 70000)])
def test_softmax_gpu(rows, cols):
    x = cuda(rows, cols) * 4
    y = torch.empty_like(x)
    kernel("softmax_gpu")(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("m,k,n", [(32, 32, 32), (64, 96, 128), (256, 512, 128)])
def test_matmul_gpu(m, k, n):
    a, b = cuda(m, k), cuda(k, n)
    c = torch.empty(m, n, device="cuda")
    kernel("matmul_gpu")(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-3)


def test_pdl_pair_producer_then_consumer():
    n = 1 << 20
    a = cuda(n)
    b, c = torch.empty_like(a), torch.empty_like(a)
    for _ in range(5):
        kernel("pdl_pair", "pdl_producer")(a, b)
        kernel("pdl_pair", "pdl_consumer")(b, c)
    torch.testing.assert_close(c, a * 2 + 1, rtol=0, atol=0)


def test_grid_sync_reads_other_blocks_writes():
    a, b = torch.zeros(4096, device="cuda"), torch.zeros(4096, device="cuda")
    kernel("grid_sync")(a, b)
    idx = torch.arange(4096, device="cuda")
    want = (((idx // 128 + 1) % 32) * 128 + idx % 128).float()
    torch.testing.assert_close(b, want, rtol=0, atol=0)


def test_big_dynamic_shared_memory():
    a = cuda(6, 24576)  # 96 KB of shared memory per block
    b = torch.empty_like(a)
    kernel("big_smem")(a, b)
    torch.testing.assert_close(b, a.flip(1), rtol=0, atol=0)


def test_symbolic_shared_size_grows_between_calls():
    for m in [100, 1000, 12000, 20000, 40000, 12000]:  # 0.4 KB .. 160 KB, then back down
        a = cuda(3, m)
        b = torch.empty_like(a)
        kernel("smem_symbolic")(a, b)
        torch.testing.assert_close(b, a.flip(1), rtol=0, atol=0, msg=f"m = {m}")


def test_too_much_shared_memory_is_a_clear_error():
    a = cuda(1, 80000)  # 320 KB: more than any GPU's per-block maximum
    b = torch.empty_like(a)
    with pytest.raises(ValueError, match=r"^smem_symbolic_kernel: needs 320000 bytes of dynamic "
                                         r"shared memory \(\+ 0 static\), more than the \d+ bytes"):
        kernel("smem_symbolic")(a, b)


def test_launch_on_a_non_default_stream_is_ordered():
    n = 1 << 24
    a, b = cuda(n), cuda(n)
    c = torch.empty_like(a)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = a * 3  # queued on s; the kernel must run after it on the same stream
        kernel("vector_add_gpu")(x, b, c)
        y = c * 1
    s.synchronize()
    torch.testing.assert_close(y, a * 3 + b, rtol=0, atol=0)


def test_tensors_on_cpu_are_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match=r"^vector_add_gpu: A.device: expected cuda"):
        kernel("vector_add_gpu")(torch.zeros(8), cuda(8), cuda(8))
