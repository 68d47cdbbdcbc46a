"""The fused matmul + row softmax written with tile operations (examples/gemm_softmax.py, issue 16):
one kernel, the product never stored; against NumPy through the C backend, through the SIMT
lowering on the MSL harness in three thread orders, compiled with NVRTC for sm_90a, and against
torch on a CUDA GPU (the device machine runs that)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

import metal_emu
import tessel
from conftest import have_cuda_compiler

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "examples" / "gemm_softmax.py").read_text()


def reference(a, b):
    s = a.astype("float64") @ b.astype("float64").T
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def operands(m, n, k, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype("float16"),
            rng.standard_normal((n, k)).astype("float16"))


@pytest.mark.parametrize("m,n,k", [(100, 200, 70), (64, 256, 32), (1, 1, 1), (130, 7, 0)])
def test_gemm_softmax_matches_numpy_on_the_cpu(m, n, k):
    a, b = operands(m, n, k, m + n + k)
    y = np.full((m, n), np.nan, "float16")
    tessel.build(TEXT, target="c")["gemm_softmax"](*(tvm_ffi.from_dlpack(x) for x in (a, b, y)))
    np.testing.assert_allclose(y.astype("float64"), reference(a, b), atol=1e-3)


def test_a_row_wider_than_the_tile_is_refused_with_the_reason():
    a, b = operands(4, 300, 8, 0)
    y = np.zeros((4, 300), "float16")
    with pytest.raises(Exception, match=r"a row of the product is one 256-column tile; N must be "
                                         r"at most 256"):
        tessel.build(TEXT, target="c")["gemm_softmax"](
            *(tvm_ffi.from_dlpack(x) for x in (a, b, y)))


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
def test_gemm_softmax_on_metal_in_every_thread_order():
    # K tiles of 16: two stages of the 32-wide tiles take 40 KB, Metal allows 32 KB.
    text = TEXT.replace(", 32)", ", 16)").replace("ko * 32", "ko * 16").replace("(K, 32)", "(K, 16)")
    assert text.count("16") >= 5
    mod = tessel.build(text, target="metal")
    a, b = operands(70, 150, 40, 5)
    for order, seed in metal_emu.ORDERS:
        y = np.full((70, 150), np.nan, "float16")
        with metal_emu.installed(order, seed):
            mod["gemm_softmax"](*[metal_emu.as_metal(x) for x in (a, b, y)])
        np.testing.assert_allclose(y.astype("float64"), reference(a, b), atol=1e-3, err_msg=order)


def test_the_plan_on_hopper_is_warp_specialized_with_row_statistics():
    # The reductions after the K loop run on the accumulator's rows, in its four threads each.
    from test_tile_hopper import planned

    ir = planned(TEXT)
    assert ('"tessel.tile_plan": "warp-specialized: 1 consumer warpgroup(s) run wgmma, a producer '
            'warpgroup issues TMA into 2 stages; persistent: at most 132 blocks walk the 1-D grid\'s '
            'tiles"') in ir
    for name in ("row_max", "row_sum"):
        assert (f'"{name}": "one value per wgmma accumulator row, in the row\'s four threads: '
                f'rows of S_f by T.reduce') in ir
    # A fragment that is neither an accumulator nor a row of one cannot sit beside a reduction.
    bad = TEXT.replace('row_sum = T.alloc_fragment((64,), "float32")',
                       'row_sum = T.alloc_fragment((64,), "float32")\n'
                       '        junk = T.alloc_fragment((7,), "float32")\n'
                       '        T.fill(junk, T.float32(0))')
    assert "junk" in bad
    assert ("SIMT: fragment junk is neither a wgmma accumulator nor a row statistic of one"
            in planned(bad))


def test_gemm_softmax_compiles_for_cuda():
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    src = tessel.build(TEXT, target="cuda -arch=sm_90a").get_source("cuda")
    assert "__shfl_xor_sync" in src or "shfl" in src


from conftest import gpu_torch as _cuda_torch  # noqa: E402


@pytest.mark.skipif(_cuda_torch() is None,
                    reason="needs PyTorch and a CUDA GPU (the device machine runs these)")
@pytest.mark.parametrize("m,n,k", [(1000, 200, 256), (64, 256, 32), (300, 64, 104), (130, 1, 40),
                                   (77, 130, 100)])
def test_gemm_softmax_matches_torch_on_the_gpu(m, n, k):
    # The warp-specialized kernel (TMA, wgmma, reductions over the accumulator's rows), and for
    # K = 100 (rows of 200 bytes, which TMA cannot describe) the SIMT one.
    torch = _cuda_torch()
    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    y = torch.full((m, n), float("nan"), device="cuda").half()
    tessel.build(TEXT, target="cuda -arch=sm_90a")["gemm_softmax"](a, b, y)
    want = torch.softmax(a.cpu().float() @ b.cpu().float().T, dim=1)
    torch.testing.assert_close(y.cpu().float(), want, atol=2e-3, rtol=2e-2)
