"""@tessel.jit: calls with numpy arrays (and torch tensors, tvm-ffi tensors), outputs allocated
by the call, constexpr specializations with their recompile reasons, opt-in static and
divisibility specialization, ahead-of-time compile and export."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tvm_ffi

import tessel
from tessel.script import tir as T



@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TESSEL_LOG", raising=False)
    return tmp_path / "cache"


def add_kernel(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
               C: T.Buffer((n,), "float32"), *, SCALE: T.constexpr = 1):
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = A[vi] + B[vi] * T.float32(SCALE)


def scale_kernel(A: T.Buffer((n,), "float32")):
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = A[vi] * T.float32(2)


@pytest.fixture()
def add():
    """A fresh @tessel.jit(out=["C"]) object per test (its in-memory table starts empty)."""
    return tessel.jit(out=["C"])(add_kernel)


@pytest.fixture()
def scale_in_place():
    return tessel.jit(scale_kernel)


def rand(n, seed=0):
    return np.random.default_rng(seed).random(n, dtype=np.float32)


def test_numpy_inputs_output_allocated(add):
    a, b = rand(100), rand(100, 1)
    c = add(a, b)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (100,)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)
    # Another length: the symbolic n is bound by the compiled function, no recompile.
    a2, b2 = rand(37, 2), rand(37, 3)
    np.testing.assert_allclose(add(a2, b2), a2 + b2, rtol=1e-6)
    assert len(add.recompile_reasons) == 1
    assert "first call (SCALE=1)" in add.recompile_reasons[0]
    assert "disk cache miss" in add.recompile_reasons[0]


def test_in_place_kernel_without_outputs(scale_in_place):
    a = rand(50)
    before = a.copy()
    assert scale_in_place(a) is None
    np.testing.assert_allclose(a, before * 2)
    # Compiled and without constexprs: the call goes straight to the compiled function.
    assert scale_in_place(a) is None
    np.testing.assert_allclose(a, before * 4)
    with pytest.raises(TypeError):
        scale_in_place(a, X=1)
    assert len(scale_in_place.recompile_reasons) == 1


def test_shape_mismatch_is_named_by_the_host_wrapper(add):
    with pytest.raises(Exception, match="B"):
        add(rand(10), rand(11))
    with pytest.raises(TypeError, match="2 positional arguments"):
        add(rand(10))


def test_constexpr_specializations_and_recompile_reasons(capfd, monkeypatch):
    monkeypatch.setenv("TESSEL_LOG", "recompile")

    @tessel.jit(out=["C"])
    def axpy(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
             C: T.Buffer((n,), "float32"), *, ALPHA: T.constexpr = 2):
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] * T.float32(ALPHA) + B[vi]

    a, b = rand(16), rand(16, 1)
    np.testing.assert_allclose(axpy(a, b), 2 * a + b, rtol=1e-6)
    np.testing.assert_allclose(axpy(a, b, ALPHA=3), 3 * a + b, rtol=1e-6)
    np.testing.assert_allclose(axpy(a, b), 2 * a + b, rtol=1e-6)  # cached in memory
    np.testing.assert_allclose(axpy(a, b, ALPHA=2), 2 * a + b, rtol=1e-6)  # = the default
    reasons = axpy.recompile_reasons
    assert len(reasons) == 2, reasons
    assert "first call (ALPHA=2)" in reasons[0] and "disk cache miss" in reasons[0]
    assert "new constexpr values ALPHA=3" in reasons[1]
    err = capfd.readouterr().err
    assert err.count("tessel.jit: axpy:") == 2
    with pytest.raises(TypeError, match="unexpected keyword"):
        axpy(a, b, BETA=1)


def test_disk_hit_in_the_same_process_is_logged(add):
    src_a, src_b = rand(8), rand(8, 1)
    add(src_a, src_b, SCALE=5)
    fresh = tessel.jit(out=["C"])(add_kernel)
    np.testing.assert_allclose(fresh(src_a, src_b, SCALE=5), src_a + 5 * src_b, rtol=1e-6)
    assert "loaded from disk cache" in fresh.recompile_reasons[0]


def test_static_dims_are_opt_in():
    @tessel.jit(static=["n"])
    def double(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * T.float32(2)

    for size in (8, 8, 12):
        a, b = rand(size), np.zeros(size, np.float32)
        double(a, b)
        np.testing.assert_allclose(b, 2 * a)
    assert len(double.recompile_reasons) == 2
    assert "new static/divisible dims n=12" in double.recompile_reasons[1]
    k = double.compile(n=8)  # compiled above: the same object
    assert len(double.recompile_reasons) == 2
    # The specialization checks its static value at entry.
    with pytest.raises(Exception, match="n must be 8"):
        k(rand(9), np.zeros(9, np.float32))


def test_divisible_specialization():
    @tessel.jit(divisible={"n": 4})
    def copy(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi]

    for size in (8, 16, 6):
        a, b = rand(size), np.zeros(size, np.float32)
        copy(a, b)
        np.testing.assert_allclose(b, a)
    # 8 and 16 share the divisible specialization; 6 takes the generic one.
    assert len(copy.recompile_reasons) == 2


def test_compile_ahead_of_time_and_export(add, tmp_path):
    k = add.compile(SCALE=3)
    assert isinstance(k, tessel.jit.CompiledKernel)
    assert k.name == "add_kernel" and "add_kernel" in k.source and k.ir is not None
    a, b = rand(20), rand(20, 1)
    np.testing.assert_allclose(k(a, b), a + 3 * b, rtol=1e-6)
    assert add.compile(SCALE=3) is k
    lib = tmp_path / "add.so"
    k.export(lib)
    script = textwrap.dedent(f"""
        import sys, numpy as np, tvm_ffi
        m = tvm_ffi.load_module({str(lib)!r})
        a = np.arange(5, dtype="float32"); b = np.ones(5, "float32"); c = np.empty(5, "float32")
        m[{k.name!r}](a, b, c)
        assert (c == a + 3).all(), c
        assert "tessel" not in sys.modules
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_tvm_ffi_tensors(add):
    a, b = rand(9), rand(9, 1)
    c = add(tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
    assert isinstance(c, tvm_ffi.Tensor)
    np.testing.assert_allclose(np.from_dlpack(c), a + b, rtol=1e-6)


def test_unknown_output_name():
    @tessel.jit(out=["D"])
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("A"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(0)

    with pytest.raises(ValueError, match="'D', which is not a parameter"):
        f()


def test_torch_tensors(add):
    torch = pytest.importorskip("torch", reason="torch is not installed (CI does not install it)")
    a, b = torch.rand(33), torch.rand(33)
    c = add(a, b)
    assert isinstance(c, torch.Tensor) and c.device == a.device
    torch.testing.assert_close(c, a + b)


def _have_nvrtc() -> bool:
    from tessel.jit import cache

    return cache.cuda_compiler_identity().startswith("nvrtc ") and "not found" not in \
        cache.cuda_compiler_identity()


@pytest.mark.skipif(not _have_nvrtc(), reason="NVRTC is not installed")
def test_cuda_compile_ahead_of_time_without_a_gpu(tmp_path):
    @tessel.jit(target="cuda -arch=sm_90", out=["B"])
    def double_gpu(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), *,
                   THREADS: T.constexpr = 128):
        for bx in T.thread_binding((n + THREADS - 1) // THREADS, thread="blockIdx.x"):
            for tx in T.thread_binding(THREADS, thread="threadIdx.x"):
                if bx * THREADS + tx < n:
                    B[bx * THREADS + tx] = A[bx * THREADS + tx] * T.float32(2)

    k = double_gpu.compile(THREADS=64)
    assert "__global__" in k.source and k.target == "cuda -arch=sm_90"
    k.export(tmp_path / "double_gpu.so")
    assert (tmp_path / "double_gpu.so").stat().st_size > 0
    assert "disk cache miss" in double_gpu.recompile_reasons[0]


def double_gpu_kernel(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), *,
                      THREADS: T.constexpr = 128):
    for bx in T.thread_binding((n + THREADS - 1) // THREADS, thread="blockIdx.x"):
        for tx in T.thread_binding(THREADS, thread="threadIdx.x"):
            if bx * THREADS + tx < n:
                B[bx * THREADS + tx] = A[bx * THREADS + tx] * T.float32(2)


def test_torch_cuda_tensors():
    torch = pytest.importorskip("torch", reason="torch is not installed (CI does not install it)")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    k = tessel.jit(target="cuda", out=["B"])(double_gpu_kernel)  # -arch from GPU 0
    a = torch.rand(1000, device="cuda")
    b = k(a, THREADS=64)
    assert b.device == a.device and b.dtype == torch.float32
    torch.testing.assert_close(b, a * 2)
    assert "-arch=sm_" in k.compile(THREADS=64).target


def test_mistakes_are_reported_at_the_users_line_and_the_bad_argument(tmp_path):
    """A mistake in the kernel is a ScriptError at its file and line when the first call parses
    it; a wrong argument is an error naming the parameter, with expected and actual values."""
    src = tmp_path / "user_kernels.py"
    src.write_text(textwrap.dedent('''
        from __future__ import annotations
        import tessel
        from tessel.script import tir as T

        @tessel.jit(out=["B"])
        def typo(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
            for i in range(n):
                B[i] = A[i] * T.flaot32(2)

        @tessel.jit(out=["B"])
        def double(A: T.Buffer((n, 4), "float32"), B: T.Buffer((n, 4), "float32")):
            for i, j in T.grid(n, 4):
                B[i, j] = A[i, j] * T.float32(2)
        ''').lstrip())
    from conftest import import_file  # noqa: PLC0415

    mod = import_file(src, "user_kernels")
    with pytest.raises(tessel.script.ScriptError) as info:
        mod.typo(np.zeros(8, np.float32))
    err = info.value
    assert err.filename == str(src) and err.lineno == 8, (err.filename, err.lineno)
    assert "T.flaot32" in str(err) and "B[i] = A[i] * T.flaot32(2)" in err.text
    np.testing.assert_array_equal(mod.double(np.ones((3, 4), np.float32)), np.full((3, 4), 2))
    with pytest.raises(ValueError, match=r"double: A\.shape\[1\]: expected 4, got 5"):
        mod.double(np.ones((3, 5), np.float32))
    with pytest.raises(TypeError, match=r"double: A\.dtype: expected float32, got float64"):
        mod.double(np.ones((3, 4), np.float64))
    with pytest.raises(ValueError, match=r"double: A\.ndim: expected 2, got 1"):
        mod.double(np.ones((3,), np.float32))
