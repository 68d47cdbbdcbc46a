"""Tile programs on Hopper (issue 16): layout inference plans each T.Kernel, and a T.Pipelined loop
of T.copy into shared tiles and T.gemm becomes a warp-specialized TMA + wgmma pipeline on sm_90a
(src/transform/tile_layout_inference.h, src/transform/lower_tile_ops_hopper.cc). The plan explains
itself in the IR (TESSEL_DUMP_IR shows it); kernels it cannot take say why and go SIMT; the
examples match NumPy on the CPU, compile to wgmma and TMA with NVRTC here, and match torch on the
H200 (the device machine runs those)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

import tessel

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "tile_gemm_hopper.py").read_text()
GELU = (ROOT / "examples" / "tile_gemm_gelu.py").read_text()


def get(name):
    return tvm_ffi.get_global_func(name)


def planned(text, arch="sm_90a"):
    """The module after the tile lowering for `arch`, printed."""
    name = "LowerTileOpsHopper" if arch == "sm_90a" else "LowerTileOpsGPU"
    mod = get("tessel.ir.ParseModule")(text, "<test>")
    return str(get("tessel.transform.RunPass")(get("tessel.transform.GetPass")(name), mod))


def test_the_plan_of_the_gemm_is_warp_specialized_and_says_so():
    ir = planned(GEMM)
    assert ('"tessel.tile_plan": "warp-specialized: 2 consumer warpgroup(s) run wgmma, a producer '
            'warpgroup issues TMA into 3 stages; persistent: at most 132 blocks walk the 2-D grid\'s '
            'tiles"') in ir
    assert '"A_s": "128-byte swizzle: T.copy by TMA, read by wgmma"' in ir
    assert '"C_f": "wgmma accumulator m64n256 (warpgroup w: rows 64w..64w+63): C of T.gemm' in ir
    # The fallback kernel for tensors TMA cannot describe, under the host test.
    assert "SIMT: the fallback of the warp-specialized kernel" in ir
    assert "K % 8 == 0" in ir and ir.count("T.ptx_tma_load(") == 2


@pytest.mark.parametrize("old,new,reason", [
    ("threads=256", "threads=128",
     "M = 128; with 128 threads the warpgroups cover M = 64"),
    ("T.gemm(A_s, B_s, C_f, transpose_B=True)", "T.gemm(A_s, B_s, C_f, transpose_B=True)\n"
     "            T.atomic_add(C[by * 128, bx * 256], C_f)",
     "the T.Pipelined loop at line 22 holds T.atomic_add at line 26; the warp-specialized form "
     "takes T.copy, T.gemm, T.reduce, T.fill and T.Parallel there"),
    ("num_stages=3", "num_stages=7", "7 stages of its tiles take 344064 bytes of shared memory"),
    ("T.copy(C_f, C[by * 128, bx * 256])", "T.copy(C_f, C[by * 128, bx * 256])\n"
     "        T.copy(A_s, C[0, 0])", "T.copy at line 27 uses shared tile A_s"),
    ('A_s = T.alloc_shared((128, 64), "float16")', 'A_s = T.alloc_shared((128, 64), "float32")',
     "TMA copies float16 / bfloat16 tiles without conversion here"),
])
def test_kernels_the_warp_specialized_form_cannot_take_say_why(old, new, reason):
    assert old in GEMM
    ir = planned(GEMM.replace(old, new, 1))
    assert '"tessel.tile_plan": "SIMT: ' in ir
    assert reason in ir


def test_clear_accum_overwrites_c_at_every_call_on_every_target():
    # T.gemm(..., clear_accum=True) is C = A B, each call: in a K loop only the last K tile counts,
    # on the CPU and on Hopper alike (an earlier Hopper lowering zeroed at the first call only).
    text = GEMM.replace("        T.clear(C_f)\n", "").replace(
        "T.gemm(A_s, B_s, C_f, transpose_B=True)",
        "T.gemm(A_s, B_s, C_f, transpose_B=True, clear_accum=True)")
    ir = planned(text)
    calls = [line for line in ir.splitlines() if "T.ptx_wgmma_mma_async(" in line]
    assert len(calls) == 4 and "T.Select" not in "".join(calls)
    scales = [re.search(r'dtype="uint64"\)(?: \+ T.uint64\(\d+\))?, (\d), "m64n256k16"', c)
              .group(1) for c in calls]
    assert scales == ["0", "1", "1", "1"]
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 128)).astype("float16")
    b = rng.standard_normal((256, 128)).astype("float16")
    c = np.zeros((128, 256), "float16")
    tessel.build(text, target="c")["tile_gemm_hopper"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
    want = a[:, 64:].astype("float32") @ b[:, 64:].astype("float32").T
    np.testing.assert_allclose(c.astype("float32"), want, rtol=1e-2, atol=1e-2)


def test_other_targets_plan_simt_and_say_so():
    assert "SIMT: the target is not CUDA; the warp-specialized form (TMA, wgmma) needs sm_90a" \
        in planned(GEMM, arch="")


def test_the_wgmma_element_is_the_inverse_of_the_accumulator_layout():
    from tessel import tile

    frag = tile.distribute(tile.wgmma_accumulator(256), 0, 2)
    element = get("tessel.tile.WgmmaElement")
    seen = set()
    for t in range(256):
        for r in range(128):
            i, j = element(t, r)
            assert frag.at(i, j) == (t, r)
            seen.add((i, j))
    assert len(seen) == 128 * 256


@pytest.mark.parametrize("m,n,k", [(70, 300, 100), (128, 256, 64), (1, 1, 1)])
def test_the_examples_match_numpy_on_the_cpu(m, n, k):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype("float16")
    b = rng.standard_normal((n, k)).astype("float16")
    bias = rng.standard_normal(n).astype("float16")
    ref = a.astype("float32") @ b.astype("float32").T
    c = np.zeros((m, n), "float16")
    tessel.build(GEMM, target="c")["tile_gemm_hopper"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
    np.testing.assert_allclose(c.astype("float32"), ref, rtol=1e-2, atol=1e-2)
    x = ref + bias.astype("float32")
    ref = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    tessel.build(GELU, target="c")["tile_gemm_gelu"](
        *(tvm_ffi.from_dlpack(v) for v in (a, b, bias, c)))
    np.testing.assert_allclose(c.astype("float32"), ref, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("text", [GEMM, GELU], ids=["gemm", "gelu"])
def test_the_examples_compile_to_tma_and_wgmma_for_sm_90a(text):
    src = tessel.build(text, target="cuda -arch=sm_90a").get_source("cuda")
    fast, slow = src.split("__global__")[1:3]
    assert "__launch_bounds__(384)" in fast and "__launch_bounds__(256)" in slow
    assert fast.count("tsl_tma_load_2d(") == 2 and fast.count("tsl_wgmma_m64n256k16_f16_00(") == 4
    assert "tsl_setmaxnreg_dec<40>" in fast and "tsl_mbarrier_wait" in fast
    # The epilogue: 64 x 64 boxes of the swizzled staging tile, stored by TMA.
    assert fast.count("tsl_tma_store_2d(") == 4
    assert "wgmma" not in slow and "tma" not in slow
    # One dynamic shared memory symbol per alignment: a shared one took the 16-byte alignment of
    # the fallback and misaligned the TMA ring on the H200.
    assert "__align__(1024) unsigned char tsl_dyn_smem_1024[]" in fast
    # The fallback runs T.gemm on mma.sync, its tiles swizzled too (SwizzleLayoutLate).
    assert "tsl_mma_m16n8k16_f16(" in slow and "tsl_ldmatrix<4, 0>" in slow


from conftest import gpu_torch as _cuda_torch  # noqa: E402


needs_gpu = pytest.mark.skipif(_cuda_torch() is None,
                               reason="needs PyTorch and a CUDA GPU (the device machine runs these)")


@needs_gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("m,n,k", [(128, 256, 64), (4096, 4096, 4096), (200, 300, 72),
                                   (1, 1, 8), (1000, 520, 1000), (300, 200, 100), (64, 96, 0)])
def test_the_tile_gemm_matches_torch_on_the_gpu(dtype, m, n, k):
    # K = 100 (rows of 200 bytes), N = 300 (C's rows of 600 bytes) and K = 0 take the SIMT
    # fallback; the others the TMA pipeline.
    torch = _cuda_torch()
    t = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda").to(t)
    b = torch.randn(n, k, device="cuda").to(t)
    c = torch.full((m, n), float("nan"), device="cuda").to(t)
    f = tessel.build(GEMM.replace('"float16"', f'"{dtype}"'), target="cuda -arch=sm_90a")
    f["tile_gemm_hopper"](a, b, c)
    # The reference on the CPU: in this process torch's float32 GPU matmul raised std::bad_alloc
    # after a tessel kernel ran (see docs/tile.md); the CPU is independent of that.
    ref = (a.cpu().float() @ b.cpu().float().T).to(t).float()
    torch.testing.assert_close(c.cpu().float(), ref, rtol=2e-2, atol=2e-1)


@needs_gpu
@pytest.mark.parametrize("m,n,k", [(256, 512, 128), (333, 700, 264)])
def test_the_gelu_epilogue_matches_torch_on_the_gpu(m, n, k):
    torch = _cuda_torch()
    import torch.nn.functional as F

    a = torch.randn(m, k, device="cuda").half()
    b = torch.randn(n, k, device="cuda").half()
    bias = torch.randn(n, device="cuda").half()
    c = torch.full((m, n), float("nan"), device="cuda").half()
    tessel.build(GELU, target="cuda -arch=sm_90a")["tile_gemm_gelu"](a, b, bias, c)
    a, b, bias = a.cpu().float(), b.cpu().float(), bias.cpu().float()
    ref = F.gelu(a @ b.T + bias, approximate="tanh")
    torch.testing.assert_close(c.cpu().float(), ref, rtol=2e-2, atol=2e-1)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_the_epilogue_stores_pairs_where_the_tma_store_reads_them(dtype):
    # 16-bit outputs are staged as packed pairs, one 32-bit store per two accumulator registers
    # (with one 16-bit store a register, ptxas kept the 128 addresses live across the persistent
    # loop and spilled them). Every pair must land where the 128-byte-swizzled 64 x 64 boxes of
    # the TMA store read its two elements: evaluate the generated index for every consumer thread
    # and pair, against the accumulator layout and the swizzle.
    from test_tile_ops import have_cuda_compiler

    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    src = tessel.build(GEMM.replace('"float16"', f'"{dtype}"'),
                       target="cuda -arch=sm_90a").get_source("cuda")
    fast = src.split("__global__")[1]
    stores = re.findall(r"\(\(uint32_t\*\)C_stage\)\[(.*)\] = tsl_cvt_pack_(b?f16)\("
                        r"C_f_local\[tsl_mul_i32\(k, 2\)\], "
                        r"C_f_local\[tsl_add_i32\(tsl_mul_i32\(k, 2\), 1\)\]\);", fast)
    assert len(stores) == 1 and "for (int32_t k = 0; k < 64; ++k)" in fast, stores
    assert "C_stage[" not in fast.replace("((uint32_t*)C_stage)[", "")
    helpers = {"tsl_add_i32": lambda a, b: a + b, "tsl_mul_i32": lambda a, b: a * b,
               "tsl_floordiv_i32": lambda a, b: a // b, "tsl_floormod_i32": lambda a, b: a % b,
               "tsl_shl_i32": lambda a, b: a << b}
    index = eval("lambda threadIdx_x, k: " + stores[0][0].replace("(int32_t)", ""), helpers)
    seen = set()
    for tx in range(256):
        w, warp, lane = tx // 128, tx // 32 % 4, tx % 32
        for k in range(64):
            r = 2 * k
            row = 16 * warp + 8 * (r // 2 % 2) + lane // 4
            col = 8 * (r // 4) + 2 * (lane % 4)
            flat = (w * 4 + col // 64) * 4096 + row * 64 + col % 64
            swizzled = flat ^ (((flat >> 6) & 7) << 3)
            got = index(tx, k)
            assert 2 * got == swizzled, (tx, k, got, swizzled)
            seen.add(got)
    assert seen == set(range(256 * 128 // 2))


def test_ptxas_keeps_the_persistent_gemm_in_registers(tmp_path):
    # Measured with the element-wise staging stores: 164 bytes of spill stores and loads (the
    # epilogue's addresses, computed before the persistent loop). Needs nvcc (ptxas's report).
    import shutil
    import subprocess

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.skip("needs nvcc for ptxas -v")
    cu = tmp_path / "gemm.cu"
    cu.write_text(tessel.build(GEMM, target="cuda -arch=sm_90a").get_source("cuda"))
    out = subprocess.run([nvcc, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "gemm.cubin"),
                          "-Xptxas", "-v", "-diag-suppress", "177", str(cu)],
                         capture_output=True, text=True, check=True)
    report = (out.stdout + out.stderr).split("Compiling entry function 'tile_gemm_hopper_kernel'")
    assert len(report) == 2, out.stderr
    kernel = report[1].split("Compiling entry function")[0]
    assert "0 bytes spill stores, 0 bytes spill loads" in kernel, kernel
