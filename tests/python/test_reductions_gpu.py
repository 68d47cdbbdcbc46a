"""The row softmax, LayerNorm and RMSNorm kernels of issue 15 (examples/softmax_gpu_fast.py,
examples/layernorm_gpu.py, examples/rmsnorm_gpu.py).

On any machine: the examples are what bench/cuda_reductions.py generates; each builds for
`cuda -arch=sm_90` with 16-byte global loads and stores (float4 / uint4, `ld.global.v4` in the PTX)
and warp shuffles; and, through the MSL execution harness, each kernel variant (warp per row, block
of 128, 256 and 1024 threads per row, the scalar fallback) gives NumPy's answer. On a machine with a
CUDA GPU and PyTorch: every dtype and kernel variant against torch, ragged row lengths included."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
import tvm_ffi
from conftest import REPO, gpu_torch, have_cuda_compiler

import tessel

_spec = importlib.util.spec_from_file_location("cuda_reductions",
                                               REPO / "bench" / "cuda_reductions.py")
gen = importlib.util.module_from_spec(_spec)
sys.modules["cuda_reductions"] = gen  # dataclasses look their module up there
_spec.loader.exec_module(gen)

OPS = sorted(gen.EXAMPLES)
needs_compiler = pytest.mark.skipif(not have_cuda_compiler(), reason="no NVRTC or nvcc")


def example_path(op):
    return REPO / "examples" / f"{gen.EXAMPLES[op][0]}.py"


def function_name(op, dtype):
    return f"{gen.EXAMPLES[op][1]}_{gen.SHORT[dtype]}"


@pytest.mark.parametrize("op", OPS)
def test_example_is_the_generators_output(op):
    assert example_path(op).read_text() == gen.example_text(op), (
        f"regenerate: python bench/cuda_reductions.py --emit {op} > {example_path(op)}")


_cuda_built = {}


def cuda_module(op):
    if op not in _cuda_built:
        _cuda_built[op] = tessel.build(example_path(op).read_text(), target="cuda -arch=sm_90")
    return _cuda_built[op]


@needs_compiler
@pytest.mark.parametrize("op", OPS)
def test_cuda_source_has_wide_accesses_and_shuffles(op):
    mod = cuda_module(op)
    assert sorted(mod.function_names) == sorted(function_name(op, dt) for dt in gen.DTYPES)
    src = mod.get_source("cuda")
    # Per dtype: warp per row, blocks of 128, 256 and 1024 threads per row, the scalar fallback.
    assert src.count("__global__") == len(gen.DISPATCH) * len(gen.DTYPES) == 5 * len(gen.DTYPES)
    assert "__launch_bounds__(1024)" in src and "__launch_bounds__(128)" in src
    for wide in ["tsl_wide_load<float4>", "tsl_wide_load<uint4>", "tsl_wide_store("]:
        assert wide in src, wide
    assert "__shfl_xor_sync(0xffffffffu" in src
    # The fp32 warp kernel: its row is read as 8 float4 and written as 8 float4 per lane.
    warp = src.split(f"{function_name(op, 'float32')}_kernel(")[1].split("__global__")[0]
    assert warp.count("tsl_wide_load<float4>(A") == 8
    assert warp.count("tsl_wide_store(B") == 8
    ptx = tvm_ffi.get_global_func("tessel.codegen.CompileCUDAToPTX")(src, "sm_90")
    assert "ld.global.v4.f32" in ptx or "ld.global.v4.u32" in ptx
    assert "st.global.v4" in ptx and "shfl.sync.bfly.b32" in ptx


# ---- every variant on the CPU, through the MSL execution harness ----

def numpy_reference(op, x, w=None, b=None):
    x = x.astype(np.float64)
    if op == "softmax":
        e = np.exp(x - x.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)
    if op == "layernorm":
        mu = x.mean(1, keepdims=True)
        var = ((x - mu) ** 2).mean(1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * w + b
    return x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6) * w


def inputs(op, n, m, rng):
    ins = [rng.standard_normal((n, m)) * 3]
    if op != "softmax":
        ins.append(1 + 0.5 * rng.standard_normal(m))
    if op == "layernorm":
        ins.append(0.5 * rng.standard_normal(m))
    return ins


# (n, m): warp per row (5 rows: a partial block of 4), block of 128 (2048, 4096), of 256 (4104),
# of 1024 (20000), the scalar kernel for lengths 16 bytes do not divide (33, 4097) and past 32768.
EMU_SHAPES = [(5, 1024), (3, 1000), (3, 33), (2, 2048), (2, 4096), (2, 4104), (2, 4097),
              (1, 20000), (1, 33000)]


@pytest.mark.parametrize("op", OPS)
def test_every_variant_in_the_msl_harness(op):
    metal_emu = pytest.importorskip("metal_emu")
    if not metal_emu.available():
        pytest.skip(metal_emu.UNAVAILABLE_REASON)
    mod = tessel.build(example_path(op).read_text(), target="metal")
    rng = np.random.default_rng(15)
    for dtype, atol in [("float32", 1e-5), ("float16", 1e-2)]:
        for n, m in EMU_SHAPES:
            ins = [a.astype(dtype) for a in inputs(op, n, m, rng)]
            y = np.full((n, m), np.nan, dtype)
            with metal_emu.installed("random", n * m):
                mod[function_name(op, dtype)](*[metal_emu.as_metal(a) for a in ins + [y]])
            want = numpy_reference(op, *[a.astype(np.float64) for a in ins])
            np.testing.assert_allclose(y.astype(np.float64), want, rtol=1e-3, atol=atol,
                                       err_msg=f"{op} {dtype} {n}x{m}")


# ---- on the GPU, against torch ----

torch = gpu_torch()
needs_gpu = pytest.mark.skipif(torch is None, reason="needs PyTorch and a CUDA GPU (the device "
                               "machine runs these; CI has none)")

# Ragged lengths (33, 1000, 4097, 33000) and each variant's range, with row counts no block divides.
GPU_SHAPES = [(1, 1), (7, 33), (9, 1000), (4099, 1024), (5, 2048), (300, 4096), (3, 4097),
              (65, 8192), (2, 8200), (17, 32768), (2, 33000)]


@needs_gpu
@pytest.mark.parametrize("dtype", gen.DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_matches_torch_on_the_gpu(op, dtype):
    mod = tessel.build(example_path(op).read_text(), target="cuda")
    fn = mod[function_name(op, dtype)]
    ref = gen.torch_reference(op)
    for n, m in GPU_SHAPES:
        ins, y = gen.make_args(op, n, m, getattr(torch, dtype))
        y.fill_(float("nan"))
        fn(*ins, y)
        want = ref(*ins)
        rtol, atol = gen.TOL[dtype]
        torch.testing.assert_close(y.float(), want.float(), rtol=rtol, atol=atol,
                                   msg=lambda s: f"{op} {dtype} {n}x{m}: {s}")
