"""The row softmax, LayerNorm and RMSNorm kernels of issue 15 (examples/softmax_gpu_fast.py,
examples/layernorm_gpu.py, examples/rmsnorm_gpu.py), and the untimed PROPOSED dispatch of
bench/cuda_reductions.py (packed 16-bit registers, a float32 half in shared memory, staged output).

On any machine: the examples are what bench/cuda_reductions.py generates; both dispatches build
for `cuda -arch=sm_90` with 16-byte global loads and stores (float4 / uint4, `ld.global.v4` in the
PTX) and warp shuffles, PROPOSED with packed 16-bit rows and 16-byte shared-memory accesses; and,
through the MSL execution harness, each kernel variant of each dtype of both gives NumPy's answer
(the shared-memory kernel at a size Metal allows). On a machine with a CUDA GPU and PyTorch: every
dtype and kernel variant of both against torch, ragged row lengths included."""

from __future__ import annotations

import ctypes
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


DISPATCHES = {"examples": gen.DISPATCH, "proposed": gen.PROPOSED}


def dispatch_text(which, op):
    if which == "examples":
        return example_path(op).read_text()
    return gen.example_text(op, gen.PROPOSED)


@pytest.mark.parametrize("op", OPS)
def test_example_is_the_generators_output(op):
    assert example_path(op).read_text() == gen.example_text(op), (
        f"regenerate: python bench/cuda_reductions.py --emit {op} > {example_path(op)}")


_cuda_built = {}


def cuda_module(which, op):
    if (which, op) not in _cuda_built:
        _cuda_built[which, op] = tessel.build(dispatch_text(which, op), target="cuda -arch=sm_90")
    return _cuda_built[which, op]


@needs_compiler
@pytest.mark.parametrize("which", sorted(DISPATCHES))
@pytest.mark.parametrize("op", OPS)
def test_cuda_source_has_wide_accesses_and_shuffles(op, which):
    dispatch = DISPATCHES[which]
    mod = cuda_module(which, op)
    assert sorted(mod.function_names) == sorted(function_name(op, dt) for dt in gen.DTYPES)
    src = mod.get_source("cuda")
    # Each kernel and, after each that loads 16 bytes at a time (all but the scalar ones), its
    # variant for aligned pointers, which loads A, W and Bias without testing their alignment.
    kernels = sum(len(dispatch[dt]) for dt in gen.DTYPES)
    wide = sum(1 for dt in gen.DTYPES for v in dispatch[dt] if v.elems != 0)
    assert src.count("__global__") == kernels + wide
    assert src.count("_aligned(") == wide > 0
    for dt in gen.DTYPES:
        for v in dispatch[dt]:
            assert f"__launch_bounds__({v.threads * v.rows})" in src, (dt, v)
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
    if which == "proposed":
        # Packed rows: float16 as halves, bfloat16 as pairs in 32-bit words (64 elements a thread),
        # and the float32 rows' half in shared memory read back 16 bytes at a time.
        assert "uint16_t x_data[64]" in src and "uint32_t x_data[32]" in src
        assert "ld.shared.v4.f32" in ptx


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


# NumPy has no bfloat16: the harness gets uint16 bits through a DLPack export relabelled bfloat16.
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
DLTENSOR_DTYPE_CODE = 20  # offsetof(DLTensor, dtype.code): data, device (8 + 8), ndim (4)
KDL_BFLOAT = 4


class AsBfloat16:
    """A uint16 NumPy array exported through DLPack as bfloat16 (same bits, same memory)."""

    def __init__(self, bits):
        self.bits = bits

    def __dlpack_device__(self):
        return self.bits.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        capsule = self.bits.__dlpack__()  # the unversioned "dltensor" capsule
        tensor = ctypes.pythonapi.PyCapsule_GetPointer(capsule, b"dltensor")
        ctypes.c_uint8.from_address(tensor + DLTENSOR_DTYPE_CODE).value = KDL_BFLOAT
        return capsule


def bf16_bits(x):
    """Round-to-nearest-even float64 -> bfloat16 bits."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def run_in_harness(metal_emu, fn, op, dtype, n, m, rng):
    """fn on fresh inputs of dtype through the MSL harness: (output, NumPy's answer), float64."""
    ins = inputs(op, n, m, rng)
    if dtype == "bfloat16":
        bits = [bf16_bits(a) for a in ins]
        exact = [bf16_value(b) for b in bits]
        y = np.full((n, m), 0x7FC0, np.uint16)  # NaN
        args = [tvm_ffi.from_dlpack(AsBfloat16(a)) for a in bits + [y]]
    else:
        args = [a.astype(dtype) for a in ins] + [np.full((n, m), np.nan, dtype)]
        exact = [a.astype(np.float64) for a in args[:-1]]
        y = args[-1]
    with metal_emu.installed("random", n * m):
        fn(*[metal_emu.as_metal(a) for a in args])
    got = bf16_value(y) if dtype == "bfloat16" else y.astype(np.float64)
    return got, numpy_reference(op, *exact)


HARNESS_TOL = {"float32": (1e-3, 1e-5), "float16": (1e-3, 1e-2), "bfloat16": (1e-2, 5e-2)}
METAL_THREADGROUP_BYTES = 32768

# (n, m): warp per row (5 rows: a partial block of 4), blocks of 64/128 threads (2048, 4096), of
# 128/256 (4104), of 512/1024 (20000), the scalar kernel for lengths 16 bytes do not divide (33,
# 4097) and past 32768.
EMU_SHAPES = [(5, 1024), (3, 1000), (3, 33), (2, 2048), (2, 4096), (2, 4104), (2, 4097),
              (1, 20000), (1, 33000)]


def picked(dispatch, dtype, m):
    """The variant a dispatching function runs for rows of length m."""
    fits = [v for v in dispatch[dtype][:-1] if m % gen.VEC[dtype] == 0 and m <= v.capacity()]
    return (fits or dispatch[dtype][-1:])[0]


@pytest.mark.parametrize("which", sorted(DISPATCHES))
@pytest.mark.parametrize("op", OPS)
def test_every_variant_in_the_msl_harness(op, which):
    metal_emu = pytest.importorskip("metal_emu")
    if not metal_emu.available():
        pytest.skip(metal_emu.UNAVAILABLE_REASON)
    mod = tessel.build(dispatch_text(which, op), target="metal")
    rng = np.random.default_rng(15)
    for dtype in gen.DTYPES:
        rtol, atol = HARNESS_TOL[dtype]
        for n, m in EMU_SHAPES:
            v = picked(DISPATCHES[which], dtype, m)
            if v.threads * v.shared * 4 > METAL_THREADGROUP_BYTES:
                continue  # test_shared_variant_in_the_msl_harness runs this kernel's code
            got, want = run_in_harness(metal_emu, mod[function_name(op, dtype)], op, dtype, n, m,
                                       rng)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                       err_msg=f"{op} {dtype} {n}x{m}")


@pytest.mark.parametrize("op", OPS)
def test_shared_variant_in_the_msl_harness(op):
    """The float32 kernel that keeps half of each thread's elements in shared memory, at 64 threads
    (8 KB; the dispatched 512-thread one needs more threadgroup memory than Metal allows)."""
    metal_emu = pytest.importorskip("metal_emu")
    if not metal_emu.available():
        pytest.skip(metal_emu.UNAVAILABLE_REASON)
    small = gen.Variant(64, shared=32, staged=True)
    assert any(v.shared == small.shared and v.elems == small.elems and v.staged
               for v in gen.PROPOSED["float32"])
    text = (gen.HEADER + "@I.ir_module\nclass Module:\n"
            + gen.function(op, "float32", "f", [small], depth=1))
    fn = tessel.build(text, target="metal")["f"]
    rng = np.random.default_rng(16)
    for n, m in [(3, small.capacity()), (2, small.capacity() - 12), (4, 8)]:
        got, want = run_in_harness(metal_emu, fn, op, "float32", n, m, rng)
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5, err_msg=f"{op} {n}x{m}")


# ---- on the GPU, against torch ----

torch = gpu_torch()
needs_gpu = pytest.mark.skipif(torch is None, reason="needs PyTorch and a CUDA GPU (the device "
                               "machine runs these; CI has none)")

# Ragged lengths (33, 1000, 4097, 33000) and each variant's range, with row counts no block divides.
GPU_SHAPES = [(1, 1), (7, 33), (9, 1000), (4099, 1024), (5, 2048), (300, 4096), (3, 4097),
              (65, 8192), (2, 8200), (17, 32768), (2, 33000)]


@needs_gpu
@pytest.mark.parametrize("which", sorted(DISPATCHES))
@pytest.mark.parametrize("dtype", gen.DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_matches_torch_on_the_gpu(op, dtype, which):
    fn = cuda_module(which, op)[function_name(op, dtype)]
    ref = gen.torch_reference(op)
    for n, m in GPU_SHAPES:
        ins, y = gen.make_args(op, n, m, getattr(torch, dtype))
        y.fill_(float("nan"))
        fn(*ins, y)
        want = ref(*ins)
        rtol, atol = gen.TOL[dtype]
        torch.testing.assert_close(y.float(), want.float(), rtol=rtol, atol=atol,
                                   msg=lambda s: f"{op} {dtype} {n}x{m}: {s}")
