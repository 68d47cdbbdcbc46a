"""tessel.torch.register: @tessel.jit kernels as torch.library custom operators (eager, opcheck,
fake tensors with symbolic shapes, torch.compile with fullgraph and dynamic shapes, CUDA graphs).

PyTorch is not a dependency: CI never installs it and skips these tests (except the two that check
that ``import tessel`` does not need torch); the CUDA tests also need a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tessel
from tessel.script import tir as T

from tessel._lib import get_global_func

try:
    import torch
except ImportError:  # CI: no torch
    torch = None

needs_parser = pytest.mark.skipif(get_global_func("tessel.ir.ParseSource") is None,
                                  reason="libtessel has no Python-source parser yet "
                                         "(tessel.ir.ParseSource)")
needs_torch = pytest.mark.skipif(torch is None,
                                 reason="PyTorch is not installed (CI never installs it)")
needs_cuda = pytest.mark.skipif(torch is None or not torch.cuda.is_available(),
                                reason="needs PyTorch and a CUDA GPU")

if torch is not None:
    import tessel.torch as tt


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TESSEL_LOG", raising=False)
    return tmp_path / "cache"


@pytest.fixture()
def names(request):
    """A fresh operator name per test, deregistered afterwards: ``names("x")`` is
    "tessel_test::x_<test name>"."""
    made = []
    base = request.node.name.replace("[", "_").replace("]", "").replace("-", "_")

    def make(stem):
        q = f"tessel_test::{stem}_{base}"
        made.append(q)
        return q

    yield make
    for q in made:
        tt.deregister(q)


# ---- kernels -----------------------------------------------------------------------------------


def add_kernel(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
               C: T.Buffer((n,), "float32"), *, SCALE: T.constexpr = 1):
    for i in range(n):
        C[i] = A[i] + B[i] * T.float32(SCALE)


def scale_kernel(A: T.Buffer((n,), "float32"), *, FACTOR: T.constexpr = 2):
    for i in range(n):
        A[i] = A[i] * T.float32(FACTOR)


def pair_kernel(A: T.Buffer((n, m), "float32"), alpha: T.float32, k: T.int32,
                C: T.Buffer((n * 2, m), "float32"), D: T.Buffer((n,), "int32")):
    """Two outputs, a float and an int scalar, an output shape that is an expression."""
    for i in range(n):
        D[i] = i + k
        for j in range(m):
            C[i, j] = A[i, j] * alpha
            C[n + i, j] = A[i, j]


def axpy_in_place_kernel(X: T.Buffer((n,), "float32"), Y: T.Buffer((n,), "float32"),
                         a: T.float32, S: T.Buffer((1,), "float32")):
    """Y += a * X in place, and S (allocated) = sum(X)."""
    S[0] = T.float32(0)
    for i in range(n):
        Y[i] = Y[i] + a * X[i]
        S[0] = S[0] + X[i]


def pair_reference(a, alpha, k):
    return torch.cat([a * alpha, a]), torch.arange(a.shape[0], dtype=torch.int32) + k


_BACKEND = []


def backend():
    """The default torch.compile backend (inductor) when it works here, else aot_eager (inductor
    on CPU needs a C++ compiler and Python headers)."""
    if not _BACKEND:
        try:
            torch._dynamo.reset()
            f = torch.compile(lambda x: x * 2 + 1, fullgraph=True)
            torch.testing.assert_close(f(torch.ones(4)), torch.full((4,), 3.0))
            _BACKEND.append("inductor")
        except Exception as err:  # noqa: BLE001
            print(f"inductor does not work here ({type(err).__name__}); using aot_eager")
            _BACKEND.append("aot_eager")
    return _BACKEND[0]


def compile_fn(fn, **kw):
    torch._dynamo.reset()
    return torch.compile(fn, fullgraph=True, backend=backend(), **kw)


# ---- without torch ---------------------------------------------------------------------------


_BLOCK_TORCH = textwrap.dedent("""
    import sys
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError("No module named 'torch' (blocked)")
    sys.meta_path.insert(0, Block())
""")


def _subprocess_env():
    """This process's environment, with the folder this process imported tessel from first."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(tessel.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def test_import_tessel_needs_no_torch():
    """tessel itself never imports torch (tvm-ffi imports it when it is there, so the check runs
    with torch blocked)."""
    code = _BLOCK_TORCH + textwrap.dedent("""
        import tessel, tessel.jit
        assert "torch" not in sys.modules
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=_subprocess_env())
    assert out.stdout.strip() == "ok"


def test_tessel_torch_without_torch_is_a_clear_import_error():
    code = _BLOCK_TORCH + textwrap.dedent("""
        import tessel
        try:
            import tessel.torch
        except ImportError as err:
            assert "tessel.torch needs PyTorch" in str(err), err
            assert not hasattr(tessel, "torch")
            print("ok")
        else:
            raise SystemExit("no ImportError")
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=_subprocess_env())
    assert out.stdout.strip() == "ok"


# ---- CPU: eager, schema, opcheck, fake ---------------------------------------------------------


@needs_torch
@needs_parser
def test_allocated_output_op_matches_reference(names):
    add = tessel.jit(out=["C"])(add_kernel)
    q = names("add")
    op = tt.register(add, q, constexprs={"SCALE": 3}, device_types=("cpu",))
    ns, name = q.split("::")
    assert op is getattr(getattr(torch.ops, ns), name)
    assert tt.registered()[q] == f"{q}(Tensor A, Tensor B) -> Tensor"
    assert str(op.default._schema) == f"{q}(Tensor A, Tensor B) -> Tensor"
    a, b = torch.randn(100), torch.randn(100)
    c = op(a, b)
    assert isinstance(c, torch.Tensor) and c.dtype == torch.float32 and c.shape == (100,)
    np.testing.assert_allclose(c.numpy(), a.numpy() + 3 * b.numpy(), rtol=1e-6)
    # Non-contiguous inputs are made contiguous for the kernel.
    a2 = torch.randn(200)[::2]
    torch.testing.assert_close(op(a2, b), a2 + 3 * b)
    assert len(add.recompile_reasons) == 1 and "SCALE=3" in add.recompile_reasons[0]


@needs_torch
@needs_parser
def test_in_place_op_matches_reference(names):
    scale = tessel.jit(scale_kernel)
    q = names("scale")
    op = tt.register(scale, q, constexprs={"FACTOR": 3}, mutates=["A"])
    assert str(op.default._schema) == f"{q}(Tensor(a!) A) -> ()"
    a = torch.randn(64)
    before = a.clone()
    assert op(a) is None
    torch.testing.assert_close(a, before * 3)


@needs_torch
@needs_parser
def test_two_outputs_scalars_and_shape_expressions(names):
    pair = tessel.jit(out=["C", "D"])(pair_kernel)
    q = names("pair")
    op = tt.register(pair, q)
    assert str(op.default._schema) == f"{q}(Tensor A, float alpha, SymInt k) -> (Tensor, Tensor)"
    a = torch.randn(5, 3)
    c, d = op(a, 2.5, 7)
    want_c, want_d = pair_reference(a, 2.5, 7)
    torch.testing.assert_close(c, want_c)
    assert d.dtype == torch.int32 and torch.equal(d, want_d)


@needs_torch
@needs_parser
def test_mixed_in_place_and_allocated_output(names):
    axpy = tessel.jit(out=["S"])(axpy_in_place_kernel)
    q = names("axpy")
    op = tt.register(axpy, q, mutates="Y")
    assert str(op.default._schema) == f"{q}(Tensor X, Tensor(a!) Y, float a) -> Tensor"
    x, y = torch.randn(33), torch.randn(33)
    y0 = y.clone()
    s = op(x, y, 0.5)
    torch.testing.assert_close(y, y0 + 0.5 * x)
    torch.testing.assert_close(s, x.sum().reshape(1), rtol=1e-5, atol=1e-5)


@needs_torch
@needs_parser
def test_opcheck(names):
    if not hasattr(torch.library, "opcheck"):
        pytest.skip(f"torch {torch.__version__} has no torch.library.opcheck")
    add = tessel.jit(out=["C"])(add_kernel)
    scale = tessel.jit(scale_kernel)
    pair = tessel.jit(out=["C", "D"])(pair_kernel)
    axpy = tessel.jit(out=["S"])(axpy_in_place_kernel)
    op_add = tt.register(add, names("add"), constexprs={"SCALE": 2})
    op_scale = tt.register(scale, names("scale"), mutates=["A"])
    op_pair = tt.register(pair, names("pair"))
    op_axpy = tt.register(axpy, names("axpy"), mutates=["Y"])
    torch.library.opcheck(op_add, (torch.randn(17), torch.randn(17)))
    torch.library.opcheck(op_scale, (torch.randn(17),))
    torch.library.opcheck(op_pair, (torch.randn(6, 4), 1.5, 3))
    torch.library.opcheck(op_axpy, (torch.randn(9), torch.randn(9), 2.0))


@needs_torch
@needs_parser
def test_fake_shapes_static_and_symbolic(names):
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (DimDynamic, ShapeEnv,
                                                       StatelessSymbolicContext)

    pair = tessel.jit(out=["C", "D"])(pair_kernel)
    op = tt.register(pair, names("pair"))
    with FakeTensorMode():
        c, d = op(torch.empty(5, 3), 1.0, 2)
    assert isinstance(c, FakeTensor) and c.shape == (10, 3) and c.dtype == torch.float32
    assert d.shape == (5,) and d.dtype == torch.int32 and d.device.type == "cpu"
    assert pair.recompile_reasons == []  # the fake never compiles the kernel

    mode = FakeTensorMode(shape_env=ShapeEnv())
    ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC])
    x = mode.from_tensor(torch.empty(5, 3), symbolic_context=ctx)
    with mode:
        c, d = op(x, 1.0, 2)
    n, m = x.shape
    assert isinstance(n, torch.SymInt)
    assert str(c.shape[0]) == f"2*{n}" and str(c.shape[1]) == str(m) and str(d.shape[0]) == str(n)


@needs_torch
@needs_parser
def test_fake_checks_dtypes_and_shared_dims(names):
    from torch._subclasses.fake_tensor import FakeTensorMode

    add = tessel.jit(out=["C"])(add_kernel)
    op = tt.register(add, names("add"))
    with FakeTensorMode():
        with pytest.raises(TypeError, match=r"B\.dtype: expected float32, got float64"):
            op(torch.empty(4), torch.empty(4, dtype=torch.float64))
        with pytest.raises(Exception, match=r"B\.shape\[0\]: expected n, got 5"):
            op(torch.empty(4), torch.empty(5))
        with pytest.raises(ValueError, match=r"B\.ndim: expected 1, got 2"):
            op(torch.empty(4), torch.empty(4, 1))


# ---- CPU: torch.compile --------------------------------------------------------------------------


@needs_torch
@needs_parser
def test_torch_compile_fullgraph(names):
    add = tessel.jit(out=["C"])(add_kernel)
    op = tt.register(add, names("add"), constexprs={"SCALE": 2})
    f = compile_fn(lambda a, b: op(a, b) * 2 + 1)
    a, b = torch.randn(50), torch.randn(50)
    torch.testing.assert_close(f(a, b), (a + 2 * b) * 2 + 1)


@needs_torch
@needs_parser
def test_torch_compile_in_place_and_two_outputs(names):
    scale = tessel.jit(scale_kernel)
    pair = tessel.jit(out=["C", "D"])(pair_kernel)
    op_scale = tt.register(scale, names("scale"), mutates=["A"])
    op_pair = tt.register(pair, names("pair"))

    def fn(x):
        y = x + 1
        op_scale(y.view(-1))  # written through a view: functionalization sees it in y
        c, d = op_pair(y, 0.5, 1)
        return c.sum(dim=1), d * 2

    f = compile_fn(fn)
    x = torch.randn(6, 4)
    c, d = f(x)
    want_c, want_d = pair_reference((x + 1) * 2, 0.5, 1)
    torch.testing.assert_close(c, want_c.sum(dim=1))
    assert torch.equal(d, want_d * 2)


@needs_torch
@needs_parser
def test_torch_compile_dynamic_two_sizes_no_recompile(names):
    pair = tessel.jit(out=["C", "D"])(pair_kernel)
    op = tt.register(pair, names("pair"))
    f = compile_fn(lambda a: op(a, 2.0, 5)[0] + 1, dynamic=True)
    a = torch.randn(7, 3)
    torch.testing.assert_close(f(a), pair_reference(a, 2.0, 5)[0] + 1)
    b = torch.randn(12, 5)
    stance = getattr(torch.compiler, "set_stance", None)
    if stance is not None:  # torch >= 2.6: a recompile by dynamo would raise here
        with stance("fail_on_recompile"):
            got = f(b)
    else:
        got = f(b)
    torch.testing.assert_close(got, pair_reference(b, 2.0, 5)[0] + 1)
    assert len(pair.recompile_reasons) == 1, pair.recompile_reasons


# ---- errors and registration state -------------------------------------------------------------


@needs_torch
@needs_parser
def test_register_errors(names):
    add = tessel.jit(out=["C"])(add_kernel)
    with pytest.raises(ValueError, match="expected a @tessel.jit function"):
        tt.register(add_kernel, names("plain"))
    tuned = tessel.autotune(configs=[{"SCALE": 1}], progress=False)(
        tessel.jit(out=["C"])(add_kernel))
    with pytest.raises(ValueError, match="@tessel.autotune kernel"):
        tt.register(tuned, names("tuned"))
    for bad in ("noname", "a::b::c", "ns::bad-name", "ns::x.overload", "1ns::x", 3):
        with pytest.raises(ValueError, match="bad operator name"):
            tt.register(add, bad)
    with pytest.raises(ValueError, match="reserved"):
        tt.register(add, "aten::tessel_add")
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        tt.register(add, names("add"), device_types=("cpu", "tpu"))
    with pytest.raises(ValueError, match="constexprs.*BLOCK"):
        tt.register(add, names("add"), constexprs={"BLOCK": 4})
    with pytest.raises(ValueError, match="mutates names 'Z', which is not a parameter"):
        tt.register(add, names("add"), mutates=["Z"])
    with pytest.raises(ValueError, match="mutates names 'C', which is an out= output"):
        tt.register(add, names("add"), mutates=["C"])
    pair = tessel.jit(out=["C", "D"])(pair_kernel)
    with pytest.raises(ValueError, match="mutates names the scalar parameter 'alpha'"):
        tt.register(pair, names("pair"), mutates=["alpha"])

    @tessel.jit
    def takes_handle(A: T.Buffer((n,), "float32"), p: T.handle):
        for i in range(n):
            A[i] = T.float32(0)

    with pytest.raises(ValueError, match="scalar parameter 'p' has dtype 'handle'"):
        tt.register(takes_handle, names("handle"), mutates=["A"])
    assert not [q for q in tt.registered() if q.startswith("tessel_test::")]


@needs_torch
@needs_parser
def test_register_twice_is_an_error_then_replace_and_deregister(names):
    add = tessel.jit(out=["C"])(add_kernel)
    q = names("twice")
    op = tt.register(add, q, constexprs={"SCALE": 2})
    a, b = torch.ones(4), torch.ones(4)
    torch.testing.assert_close(op(a, b), torch.full((4,), 3.0))
    with pytest.raises(ValueError, match="already registered.*replace=True"):
        tt.register(add, q, constexprs={"SCALE": 5})
    torch.testing.assert_close(op(a, b), torch.full((4,), 3.0))  # the first one still works
    op2 = tt.register(add, q, constexprs={"SCALE": 5}, replace=True)
    torch.testing.assert_close(op2(a, b), torch.full((4,), 6.0))
    ns, name = q.split("::")
    torch.testing.assert_close(getattr(getattr(torch.ops, ns), name)(a, b), torch.full((4,), 6.0))
    assert tt.deregister(q) is True and tt.deregister(q) is False
    assert q not in tt.registered()
    assert not hasattr(getattr(torch.ops, ns), name)
    op3 = tt.register(add, q)  # the name is free again
    torch.testing.assert_close(op3(a, b), torch.full((4,), 2.0))


@needs_torch
@needs_parser
def test_name_taken_outside_tessel_leaves_nothing_behind(names):
    q = names("taken")
    ns, name = q.split("::")
    other = torch.library.Library(ns, "FRAGMENT")
    try:
        other.define(f"{name}(Tensor x) -> Tensor")
        add = tessel.jit(out=["C"])(add_kernel)
        with pytest.raises(ValueError, match=f"cannot define '{q}'"):
            tt.register(add, q)
        assert q not in tt.registered()
    finally:
        other._destroy()
    op = tt.register(tessel.jit(out=["C"])(add_kernel), q)  # now it can be had
    torch.testing.assert_close(op(torch.ones(3), torch.ones(3)), torch.full((3,), 2.0))


@needs_torch
@needs_parser
def test_undeclared_in_place_write_warns(names):
    scale = tessel.jit(scale_kernel)
    with pytest.warns(UserWarning, match=r"writes the input\(s\) \['A'\] but mutates= does not"):
        tt.register(scale, names("scale"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tt.register(tessel.jit(scale_kernel), names("scale2"), mutates=["A"])


@needs_torch
@needs_parser
def test_user_autograd_on_the_op(names):
    """No backward is registered by tessel; torch.library.register_autograd adds one, and with
    lib=tessel.torch.library(q) it goes away with the operator."""
    add = tessel.jit(out=["C"])(add_kernel)
    q = names("grad")
    op = tt.register(add, q, constexprs={"SCALE": 3})
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(q, "Autograd")

    def setup_context(ctx, inputs, output):
        pass

    def backward(ctx, grad):
        return grad, grad * 3

    torch.library.register_autograd(q, backward, setup_context=setup_context, lib=tt.library(q))
    a, b = torch.randn(8, requires_grad=True), torch.randn(8, requires_grad=True)
    op(a, b).sum().backward()
    torch.testing.assert_close(a.grad, torch.ones(8))
    torch.testing.assert_close(b.grad, torch.full((8,), 3.0))
    torch.library.opcheck(op, (torch.randn(5, requires_grad=True),
                               torch.randn(5, requires_grad=True)))
    tt.register(add, q, replace=True)
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(q, "Autograd")
    with pytest.raises(KeyError):
        tt.library("tessel_test::never_registered")


# ---- CUDA --------------------------------------------------------------------------------------


def add_gpu_kernel(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                   C: T.Buffer((n,), "float32"), *, SCALE: T.constexpr = 1):
    for bx in T.thread_binding((n + 255) // 256, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            if bx * 256 + tx < n:
                C[bx * 256 + tx] = A[bx * 256 + tx] + B[bx * 256 + tx] * T.float32(SCALE)


def scale_gpu_kernel(A: T.Buffer((n,), "float32")):
    for bx in T.thread_binding((n + 255) // 256, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            if bx * 256 + tx < n:
                A[bx * 256 + tx] = A[bx * 256 + tx] * T.float32(2)


CUDA_TARGET = "cuda -arch=sm_90"


@pytest.fixture()
def cuda_ops(names):
    if torch.cuda.get_device_capability(0) < (9, 0):
        pytest.skip("the test kernels are built for sm_90")
    add = tessel.jit(target=CUDA_TARGET, out=["C"])(add_gpu_kernel)
    scale = tessel.jit(target=CUDA_TARGET)(scale_gpu_kernel)
    op_add = tt.register(add, names("add_gpu"), constexprs={"SCALE": 2}, device_types=("cuda",))
    op_scale = tt.register(scale, names("scale_gpu"), mutates=["A"], device_types="cuda")
    return add, op_add, op_scale


@needs_cuda
@needs_parser
def test_cuda_eager(cuda_ops):
    _, op_add, op_scale = cuda_ops
    a, b = torch.randn(100003, device="cuda"), torch.randn(100003, device="cuda")
    c = op_add(a, b)
    assert c.device.type == "cuda" and c.shape == a.shape
    torch.testing.assert_close(c, a + 2 * b)
    before = a.clone()
    op_scale(a)
    torch.testing.assert_close(a, before * 2)
    with pytest.raises(NotImplementedError):  # registered for cuda only
        op_add(a.cpu(), b.cpu())


@needs_cuda
@needs_parser
def test_cuda_torch_compile(cuda_ops):
    add, op_add, op_scale = cuda_ops

    def fn(a, b):
        c = op_add(a, b)
        op_scale(c)
        return c + 1

    torch._dynamo.reset()
    f = torch.compile(fn, fullgraph=True)
    a, b = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
    torch.testing.assert_close(f(a, b), (a + 2 * b) * 2 + 1)
    g = torch.compile(fn, fullgraph=True, dynamic=True)
    for n in (1000, 77777):
        a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
        torch.testing.assert_close(g(a, b), (a + 2 * b) * 2 + 1)
    assert len(add.recompile_reasons) == 1, add.recompile_reasons


@needs_cuda
@needs_parser
def test_cuda_graph_capture_and_replay(cuda_ops):
    _, op_add, op_scale = cuda_ops
    a, b = torch.randn(50000, device="cuda"), torch.randn(50000, device="cuda")
    x = torch.randn(50000, device="cuda")
    # Warm up on a side stream (compiles and loads the kernels outside the capture).
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        op_add(a, b)
        op_scale(x.clone())
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = op_add(a, b)
        op_scale(x)
    # Change the inputs in place; replay reads them and writes c (and x) again.
    for _ in range(2):
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        x0 = torch.randn_like(x)
        x.copy_(x0)
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(c, a + 2 * b)
        torch.testing.assert_close(x, x0 * 2)


@needs_cuda
@needs_parser
def test_cuda_torch_compile_reduce_overhead(cuda_ops):
    """mode="reduce-overhead" runs the compiled graph (custom op included) as a CUDA graph."""
    _, op_add, _ = cuda_ops
    torch._dynamo.reset()
    f = torch.compile(lambda a, b: op_add(a, b) * 3, fullgraph=True, mode="reduce-overhead")
    a, b = torch.randn(8192, device="cuda"), torch.randn(8192, device="cuda")
    for _ in range(4):  # warm-up runs, then recorded and replayed
        a.copy_(torch.randn_like(a))
        out = f(a, b).clone()
        torch.testing.assert_close(out, (a + 2 * b) * 3)
