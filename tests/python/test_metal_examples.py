"""Every GPU example that Metal can express, built for target metal and run through the MSL
execution harness (tests/metal_emu: the MSL compiled as C++ against a stand-in <metal_stdlib>,
each threadgroup's threads as fibers) against NumPy, in three thread orders: forward, reverse and
seeded random. The launch goes through the real path: the generated host wrapper's checks, the
tessel_metal module's launch plan, the context lookup, then the emulator as the executor. The
examples Metal cannot express are refused, each with its reason (test_refused_examples)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import metal_emu
import tessel
from test_cross_thread_reduction import CASES as REDUCTION_CASES

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

pytestmark = pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)

_built: dict[str, tessel.Module] = {}


def build(example: str) -> tessel.Module:
    if example not in _built:
        _built[example] = tessel.build((EXAMPLES / f"{example}.py").read_text(), target="metal")
    return _built[example]


def run_in_orders(call, arrays, outputs, expected, rtol=0.0, atol=0.0):
    """Runs call(*metal views of arrays) in every thread order, the outputs poisoned before each
    run, and checks each output against its expected array."""
    before = metal_emu.stats()
    for order, seed in metal_emu.ORDERS:
        for i in outputs:
            arrays[i][...] = np.nan if arrays[i].dtype.kind == "f" else -12345
        with metal_emu.installed(order, seed):
            call(*[metal_emu.as_metal(a) for a in arrays])
        for i, want in zip(outputs, expected):
            np.testing.assert_allclose(arrays[i], want, rtol=rtol, atol=atol,
                                       err_msg=f"thread order {order}")
    after = metal_emu.stats()
    assert after["launches"] - before["launches"] >= len(metal_emu.ORDERS)


rng = np.random.default_rng(7)


@pytest.mark.parametrize("n", [1, 1000, 4099])
def test_vector_add_gpu(n):
    a, b = rng.standard_normal(n).astype("float32"), rng.standard_normal(n).astype("float32")
    c = np.empty_like(a)
    run_in_orders(build("vector_add_gpu")["vector_add_gpu"], [a, b, c], [2], [a + b])


@pytest.mark.parametrize("rows,cols", [(1, 1), (3, 33), (5, 700)])
def test_softmax_gpu(rows, cols):
    x = (rng.standard_normal((rows, cols)) * 4).astype("float32")
    y = np.empty_like(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    run_in_orders(build("softmax_gpu")["softmax_gpu"], [x, y], [1], [e / e.sum(axis=1, keepdims=True)],
                  rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("m,k,n", [(32, 32, 32), (64, 96, 32)])
def test_matmul_gpu(m, k, n):
    a, b = rng.standard_normal((m, k)).astype("float32"), rng.standard_normal((k, n)).astype("float32")
    c = np.empty((m, n), "float32")
    run_in_orders(build("matmul_gpu")["matmul_gpu"], [a, b, c], [2], [a @ b], rtol=1e-4, atol=1e-4)


def test_matmul_gpu_tiled():
    # Its shared buffers are declared 1024x1024 (4 MB); CompactBufferAllocation shrinks them to the
    # 32x32 tiles each thread block uses (8 KB), so Metal takes it.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1024, 1024)).astype("float32")
    b = rng.standard_normal((1024, 1024)).astype("float32")
    c = np.zeros((1024, 1024), "float32")
    mod = build("matmul_gpu_tiled")
    assert "threadgroup float A_shared[1024]" in mod.get_source("metal")
    with metal_emu.installed():
        mod["matmul_gpu_tiled"](*(metal_emu.as_metal(x) for x in (a, b, c)))
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)


def test_block_reduce_shared():
    a = rng.standard_normal(32768).astype("float32")
    b = np.empty(256, "float32")
    run_in_orders(build("block_reduce_shared")["block_reduce_shared"], [a, b], [1],
                  [a.reshape(256, 128).sum(axis=1)], rtol=1e-5, atol=1e-5)


def test_attr_thread_extent():
    a = rng.standard_normal(4096).astype("float32")
    b = np.empty_like(a)
    run_in_orders(build("attr_thread_extent")["attr_thread_extent"], [a, b], [1], [a + 1])


@pytest.mark.parametrize("m", [1, 100, 1000, 8000])  # up to 32000 bytes of threadgroup memory
def test_smem_symbolic(m):
    a = rng.standard_normal((3, m)).astype("float32")
    b = np.empty_like(a)
    run_in_orders(build("smem_symbolic")["smem_symbolic"], [a, b], [1], [a[:, ::-1]])


def test_smem_symbolic_past_32_kb_is_refused_at_launch():
    a = rng.standard_normal((2, 8200)).astype("float32")  # 32800 bytes
    b = np.empty_like(a)
    with metal_emu.installed():
        with pytest.raises(ValueError, match=r"smem_symbolic_kernel: needs 32800 bytes of dynamic "
                                             r"threadgroup memory \(\+ 0 static\), more than the "
                                             r"32768 bytes Metal allows a threadgroup"):
            build("smem_symbolic")["smem_symbolic"](metal_emu.as_metal(a), metal_emu.as_metal(b))


def test_pdl_pair():
    n = 3000
    a = rng.standard_normal(n).astype("float32")
    b, c = np.empty_like(a), np.empty_like(a)
    mod = build("pdl_pair")

    def both(ma, mb, mc):
        mod["pdl_producer"](ma, mb)
        mod["pdl_consumer"](mb, mc)

    run_in_orders(both, [a, b, c], [1, 2], [a * 2, a * 2 + 1])


SHUFFLE = """
@T.prim_func
def warp_sum(A: T.Buffer((128,), "float32"), B: T.Buffer((4, 2), "float32")):
    blockIdx_x = T.int32()
    threadIdx_x = T.int32()
    with T.attr(blockIdx_x, "thread_extent", 2):
        with T.attr(threadIdx_x, "thread_extent", 64):
            v = A[blockIdx_x * 64 + threadIdx_x]
            v = v + T.shfl_xor(v, 8, 16)
            v = v + T.shfl_xor(v, 4, 16)
            v = v + T.shfl_down(v, 2, 16)
            v = v + T.shfl_down(v, 1, 16)
            w = T.shfl_sync(v, 0, 16)
            if threadIdx_x % 16 == 0:
                B[threadIdx_x // 16, blockIdx_x] = w
"""


def test_simd_shuffles_with_width():
    a = rng.standard_normal(128).astype("float32")
    b = np.empty((4, 2), "float32")
    mod = tessel.build(SHUFFLE, target="metal")
    # Segments of 16 lanes: each sums its own 16 values.
    want = a.reshape(2, 4, 16).sum(axis=2).T
    run_in_orders(mod["warp_sum"], [a, b], [1], [want], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", sorted(REDUCTION_CASES))
def test_cross_thread_reductions(case):
    make, _ = REDUCTION_CASES[case]
    src, name, args, want = make()
    mod = tessel.build(src, target="metal")
    run_in_orders(mod[name], args, [len(args) - 1], [want], rtol=1e-5, atol=1e-5)


def test_sliced_tensor_binds_with_a_byte_offset():
    base = rng.standard_normal(1030).astype("float32")
    out = np.zeros(1030, "float32")
    with metal_emu.installed():
        build("vector_add_gpu")["vector_add_gpu"](
            metal_emu.as_metal(base[6:]), metal_emu.as_metal(base[6:]), metal_emu.as_metal(out[6:]))
    np.testing.assert_array_equal(out[6:], base[6:] * 2)
    assert not out[:6].any()


def test_examples_metal_cannot_express_are_refused():
    with pytest.raises(ValueError, match=r"grid_sync \(a grid-wide barrier; Metal has no "
                                         r"cooperative launch\) in grid_sync_kernel"):
        build("grid_sync")
    a = np.zeros((1, 24576), "float32")
    with metal_emu.installed():
        with pytest.raises(ValueError, match=r"big_smem_kernel: needs 98304 bytes of dynamic "
                                             r"threadgroup memory"):
            build("big_smem")["big_smem"](metal_emu.as_metal(a), metal_emu.as_metal(a))


def test_a_real_kernel_with_its_barrier_deleted_fails_in_some_order():
    # The lowering inserts barriers itself, so the barrier is deleted from the emitted MSL: the
    # first one, between the threads' stores to red_data and their reads of each other's slots.
    source = build("block_reduce_shared").get_source("metal")
    barrier = "threadgroup_barrier(mem_flags::mem_threadgroup);\n"
    assert source.count(barrier) == 8
    broken = source.replace(barrier, "", 1)
    a = rng.standard_normal(32768).astype("float32")
    want = a.reshape(256, 128).sum(axis=1)
    wrong = []
    for order, seed in metal_emu.ORDERS:
        b = np.full(256, np.nan, "float32")
        metal_emu.run(broken, "block_reduce_shared_kernel", (256,), (128,), {0: a, 1: b},
                      order=order, seed=seed)
        if not np.allclose(b, want, rtol=1e-5, atol=1e-5):
            wrong.append(order)
        # The intact kernel is right in the same order.
        metal_emu.run(source, "block_reduce_shared_kernel", (256,), (128,), {0: a, 1: b},
                      order=order, seed=seed)
        np.testing.assert_allclose(b, want, rtol=1e-5, atol=1e-5)
    assert wrong, "no thread order exposed the missing barrier"


# ---- TVM's own printed CUDA programs (tests/python/tvm_corpus), built for metal ----

import test_tvm_corpus as corpus  # noqa: E402

GPU_CORPUS = [e for e in corpus.MANIFEST if e["target"] == "cuda"]


@pytest.mark.parametrize("entry", GPU_CORPUS, ids=[e["function"] for e in GPU_CORPUS])
def test_tvm_corpus_gpu_programs(entry):
    f = tessel.parse((corpus.CORPUS / entry["file"]).read_text(), entry["file"])
    mod = tessel.build(f, target="metal")
    inputs, outputs = corpus._arrays(entry)
    expected = corpus._expected(entry, inputs)
    args, outs = iter(inputs), iter(outputs)
    ordered = [next(outs) if p["name"] in entry["outputs"] else next(args)
               for p in entry["params"]]
    for order, seed in metal_emu.ORDERS:
        for out in outputs:
            out[...] = 0
        with metal_emu.installed(order, seed):
            mod[entry["function"]](*[metal_emu.as_metal(x) for x in ordered])
        corpus._compare(entry, outputs, expected)


def test_without_an_executor_a_call_says_the_runtime_is_missing():
    # What a Linux user without the harness gets: the library loads, the host wrapper accepts the
    # metal tensors, and the launch names the missing runtime.
    import tvm_ffi

    if tvm_ffi.get_global_func("tessel.runtime.metal_executor_name")() != "":
        pytest.skip("a Metal executor is installed in this process")
    a = np.ones(16, "float32")
    with pytest.raises(RuntimeError, match=r"vector_add_gpu_kernel: the Metal runtime is not "
                                           r"available on this platform"):
        build("vector_add_gpu")["vector_add_gpu"](*(metal_emu.as_metal(a) for _ in range(3)))
    import tessel.metal

    assert tessel.metal.current_context() == ("none", "")
