"""Kernels built for target c called with PyTorch CPU tensors (tvm-ffi takes them through DLPack).
PyTorch is not a dependency: CI has no torch and skips this file; the GPU machine runs it."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (CI never downloads it)")

from tessel.examples_cpu import EXAMPLES_CPU, build_example  # noqa: E402


def _func(name):
    return build_example(next(e for e in EXAMPLES_CPU if e.name == name))[0][name]


@pytest.mark.parametrize("n", [1, 7, 1000, 100003])
def test_vector_add_with_torch_tensors(n):
    a, b = torch.randn(n), torch.randn(n)
    c = torch.empty(n)
    _func("vector_add")(a, b, c)
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


def test_matmul_and_softmax_with_torch_tensors():
    a, b = torch.randn(33, 65), torch.randn(65, 17)
    c = torch.empty(33, 17)
    _func("matmul")(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    x, y = torch.randn(7, 300), torch.empty(7, 300)
    _func("softmax_row")(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


def test_take_fill_with_torch_int_tensors():
    a = torch.arange(12, dtype=torch.int32).reshape(4, 3)
    idx = torch.tensor([0, 3, -1, 4, 2], dtype=torch.int64)
    out = torch.empty(5, 3, dtype=torch.int32)
    _func("take_fill")(a, idx, -7, out)
    want = np.where(((idx.numpy() >= 0) & (idx.numpy() < 4))[:, None],
                    a.numpy()[np.clip(idx.numpy(), 0, 3)], -7)
    assert out.numpy().tolist() == want.tolist()


def test_torch_errors_name_the_parameter():
    a = torch.randn(8)
    with pytest.raises(TypeError, match=r"^vector_add: B.dtype: expected float32, got float64$"):
        _func("vector_add")(a, torch.randn(8, dtype=torch.float64), torch.empty(8))
    with pytest.raises(ValueError, match=r"^vector_add: A.strides\[0\]: expected 1 \(compact\), got 2$"):
        _func("vector_add")(torch.randn(16)[::2], torch.randn(8), torch.empty(8))
