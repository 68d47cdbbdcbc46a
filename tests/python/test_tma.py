"""TMA (include/tessel/ir/builtin_hopper.h): tensor maps made on the host at launch and the bulk
tensor copies that use them, and the warp-specialized persistent GEMM of examples/gemm_hopper.py
built on them. Without a GPU: the builtins print and parse, SplitHostDevice turns each
tma_descriptor into a __grid_constant__ kernel parameter, NVRTC's PTX has the instructions, bad
operands and tensors are refused with what is wrong. On an sm_90 GPU: a TMA copy over ragged
edges, the refusal of a tensor TMA cannot describe, and the GEMM against torch."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tvm_ffi

import tessel
from tessel import ir

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm_hopper.py").read_text()

# A 32x32 tile per block: TMA load into shared memory (mbarrier with the byte count), each thread
# doubles a row, TMA store back. Edges that no tile divides read zeros and are not written.
COPY = """
@T.prim_func
def tma_copy(A: T.Buffer((M, N), "float32"), B: T.Buffer((M, N), "float32")):
    T.func_attr({"global_symbol": "tma_copy", "target": "cuda", "tir.noalias": True})
    B_map: T.handle = T.tma_descriptor("float32", 0, B.data, M, N, N, 1, 32, 32)
    for bx in T.thread_binding((N + 31) // 32, thread="blockIdx.x"):
        for by in T.thread_binding((M + 31) // 32, thread="blockIdx.y"):
            tile_data = T.allocate([1024], "float32", "shared.dyn")
            tile = T.decl_buffer((1024,), "float32", data=tile_data, scope="shared.dyn")
            bar_data = T.allocate([1], "uint64", "shared")
            bar = T.decl_buffer((1,), "uint64", data=bar_data, scope="shared")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                if tx == 0:
                    T.ptx_prefetch_tensor_map(B_map)
                    T.ptx_mbarrier_init(T.address_of(bar[0]), 1)
                    T.ptx_fence_mbarrier_init()
                T.tvm_storage_sync("shared")
                if tx == 0:
                    T.ptx_mbarrier_arrive_expect_tx(T.address_of(bar[0]), 4096)
                    T.ptx_tma_load(T.address_of(tile[0]), T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32), T.address_of(bar[0]), by * 32, bx * 32)
                T.ptx_mbarrier_wait(T.address_of(bar[0]), 0)
                for i in range(32):
                    tile[tx * 32 + i] = tile[tx * 32 + i] * T.float32(2)
                T.ptx_fence_proxy_async()
                T.tvm_storage_sync("shared")
                if tx == 0:
                    T.ptx_tma_store(B_map, T.address_of(tile[0]), by * 32, bx * 32)
                    T.ptx_tma_store_commit_group()
                    T.ptx_tma_store_wait_group(0)
"""


def build(text, arch="sm_90a"):
    return tessel.build(text, target=f"cuda -arch={arch}")


def ptx_of(mod, arch="sm_90a"):
    return tvm_ffi.get_global_func("tessel.codegen.CompileCUDAToPTX")(mod.get_source("cuda"), arch)


def bf16(text):
    return text.replace('"float16"', '"bfloat16"').replace('"f16", 0, 0)', '"bf16", 0, 0)')


@pytest.mark.parametrize("text", [COPY, GEMM])
def test_tma_builtins_print_and_parse_back(text):
    f = tessel.parse(text)
    ir.assert_structural_equal(tessel.parse(str(f)), f, map_free_vars=True)


def test_each_tensor_map_becomes_a_grid_constant_parameter():
    src = build(COPY, "sm_90").get_source("cuda")
    # One parameter per map, whether bound on the host (B) or written inline in the kernel (A).
    assert src.count("const __grid_constant__ tsl_tensor_map_t") == 2
    assert "const void* const A_tmap = &A_tmap_desc;" in src
    assert "const void* const B_map = &B_map_desc;" in src
    # TMA destinations need 128-byte aligned shared memory.
    assert "extern __shared__ __align__(1024)" in src


def test_the_launch_passes_address_dims_and_strides_of_each_map():
    mod = ir.IRModule({"tma_copy": tessel.parse(COPY)})
    lowered = tvm_ffi.get_global_func("tessel.codegen.Lower")(mod, "cuda -arch=sm_90")
    host = str(lowered)
    launch = host[host.index("T.launch_kernel("):]
    launch = launch[:launch.index("\n")]
    assert 'T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)' in launch
    assert 'T.tma_descriptor("float32", 0, B.data, M, N, N, 1, 32, 32)' in launch
    # The host binds no B_map any more: the launch passes the descriptor's operands.
    assert "B_map" not in host[host.index("def tma_copy("):host.index("def tma_copy_kernel(")]


def test_tma_ptx_for_sm_90():
    ptx = ptx_of(build(COPY, "sm_90"), "sm_90")
    for inst in ["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                 "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
                 "cp.async.bulk.commit_group", "cp.async.bulk.wait_group.read 0",
                 "prefetch.tensormap"]:
        assert inst in ptx, inst


def test_tma_coordinates_are_reversed_for_ptx():
    # The IR lists coordinates outermost first; PTX wants the innermost first.
    src = build(COPY, "sm_90").get_source("cuda")
    assert '"r"(c1), "r"(c0)' in src


@pytest.mark.parametrize("rank", [1, 3, 5])
def test_tma_of_every_rank_compiles(rank):
    dims = ", ".join(["8"] * rank)
    strides = ", ".join(str(8 ** (rank - 1 - i)) for i in range(rank))
    box = ", ".join(["8"] * rank)
    coords = ", ".join(["0"] * rank)
    shape = ", ".join(["8"] * rank)
    text = f"""
@T.prim_func
def k(A: T.Buffer(({shape},), "float16")):
    T.func_attr({{"global_symbol": "k", "target": "cuda", "tir.noalias": True}})
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        s_data = T.allocate([{8 ** rank}], "float16", "shared.dyn")
        s = T.decl_buffer(({8 ** rank},), "float16", data=s_data, scope="shared.dyn")
        b_data = T.allocate([1], "uint64", "shared")
        b = T.decl_buffer((1,), "uint64", data=b_data, scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            T.ptx_tma_load(T.address_of(s[0]), T.tma_descriptor("float16", 0, A.data, {dims}, {strides}, {box}), T.address_of(b[0]), {coords})
"""
    ptx = ptx_of(build(text, "sm_90"), "sm_90")
    assert f"cp.async.bulk.tensor.{rank}d.shared::cluster.global" in ptx


def test_gemm_ptx_has_tma_wgmma_and_register_reallocation():
    mod = build(GEMM)
    ptx = ptx_of(mod)
    for inst in ["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
                 "setmaxnreg.dec.sync.aligned.u32 40", "setmaxnreg.inc.sync.aligned.u32 232",
                 "mbarrier.try_wait.parity.shared::cta.b64", "wgmma.wait_group.sync.aligned 1"]:
        assert inst in ptx, inst
    # The accumulators stay in registers.
    assert "ld.local" not in ptx and "st.local" not in ptx
    assert "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16" in ptx_of(build(bf16(GEMM)))


def test_gemm_needs_sm_90a():
    with pytest.raises(ValueError, match=r"only sm_90a has; the target is sm_90 \(use -arch=sm_90a\)"):
        build(GEMM, "sm_90")


def test_tma_needs_sm_90():
    with pytest.raises(ValueError, match=r"kernel tma_copy_kernel calls ptx_\w+, which needs sm_90 "
                                         r"or newer; the target is sm_80"):
        build(COPY, "sm_80")


@pytest.mark.parametrize("old,new,message", [
    ('T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)',
     'T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 300)', r"box size 1 300 \(1..256\)"),
    ('T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)',
     'T.tma_descriptor("float32", 48, A.data, M, N, N, 1, 32, 32)',
     r"the swizzle 48 \(0, 32, 64 or 128 bytes\)"),
    ('T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)',
     'T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32)', r"8 operands"),
    ('T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)',
     'T.tma_descriptor("bool", 0, A.data, M, N, N, 1, 32, 32)', r'element dtype "bool"'),
    ("by * 32, bx * 32)\n                T.ptx_mbarrier_wait", "by * 32)\n                T.ptx_mbarrier_wait",
     r"kernel tma_copy_kernel: ptx_tma_load gives 1 coordinate for the tensor map of A, of rank 2"),
])
def test_bad_tensor_maps_are_refused(old, new, message):
    assert old in COPY
    with pytest.raises(ValueError, match=message):
        build(COPY.replace(old, new, 1), "sm_90")


def test_a_symbolic_innermost_stride_is_left_to_the_launch():
    # The build cannot tell whether N is 1; the launch checks the values (TensorMapProblem below:
    # "the innermost stride is 64 elements").
    build(COPY.replace('T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)',
                       'T.tma_descriptor("float32", 0, A.data, M, N, 1, N, 32, 32)'), "sm_90")


def test_a_tensor_map_from_kernel_values_is_refused():
    text = COPY.replace('T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)',
                        'T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32 + tx % 1)')
    with pytest.raises(ValueError, match=r"box size 1 must be a literal constant"):
        build(text, "sm_90")
    text = COPY.replace('T.tma_descriptor("float32", 0, A.data, M, N, N, 1, 32, 32)',
                        'T.tma_descriptor("float32", 0, A.data, M, N + bx, N, 1, 32, 32)')
    with pytest.raises(ValueError, match=r"kernel 'tma_copy_kernel': tma_descriptor uses 'blockIdx_x', "
                                         r"which is bound inside the kernel"):
        build(text, "sm_90")


def test_a_tensor_map_used_on_the_host_is_refused():
    text = COPY.replace("    for bx in T.thread_binding",
                        "    T.evaluate(T.reinterpret(\"int64\", B_map))\n    for bx in T.thread_binding", 1)
    with pytest.raises(ValueError, match=r"tensor map 'B_map' is used on the host"):
        build(text, "sm_90")


PROBLEM = tvm_ffi.get_global_func("tessel.runtime.TensorMapProblem")


@pytest.mark.parametrize("args,message", [
    (("float16", 128, [128, 64], 4096, [4000, 4000], [4000, 1]), ""),
    (("float16", 128, [128, 64], 4096, [4000, 4001], [4001, 1]),
     "stride 0 is 4001 elements = 8002 bytes (TMA needs a positive multiple of 16 bytes below 2^40)"),
    (("float16", 128, [128, 64], 4098, [64, 64], [64, 1]), "address 0x1002 is not 16-byte aligned"),
    (("float32", 0, [32, 32], 4096, [64, 64], [1, 64]),
     "the innermost stride is 64 elements (TMA needs the innermost axis contiguous)"),
    (("float16", 64, [128, 64], 4096, [64, 64], [64, 1]),
     "the innermost box size 64 is 128 bytes, wider than the 64-byte swizzle"),
    (("float16", 0, [128, 4], 4096, [64, 64], [64, 1]),
     "the innermost box size 4 is 8 bytes (TMA needs a multiple of 16)"),
    (("float32", 0, [32, 32], 4096, [0, 64], [64, 1]), "dim 0 is 0 (TMA takes 1 .. 2^32)"),
    (("bool", 0, [32], 4096, [64], [1]), "element type bool has no TMA form"),
])
def test_tensor_map_problems_are_named(args, message):
    assert PROBLEM(*args) == message


# ---- on the GPU ----

torch = None
try:
    import torch as _torch

    torch = _torch if _torch.cuda.is_available() else None
except ImportError:
    pass

needs_h100 = pytest.mark.skipif(
    torch is None or torch.cuda.get_device_capability() < (9, 0),
    reason="needs PyTorch and an sm_90 GPU (the device machine runs these)")


@needs_h100
@pytest.mark.parametrize("m,n", [(32, 32), (100, 72), (1000, 1028)])
def test_tma_copy_on_the_gpu(m, n):
    a = torch.randn(m, n, device="cuda")
    b = torch.full((m, n), float("nan"), device="cuda")
    build(COPY, "sm_90")["tma_copy"](a, b)
    torch.testing.assert_close(b, a * 2, rtol=0, atol=0)


@needs_h100
def test_a_tensor_tma_cannot_describe_is_a_clear_error():
    a = torch.randn(64, 70, device="cuda")  # 280-byte rows: not a multiple of 16
    b = torch.empty_like(a)
    with pytest.raises(ValueError, match=r"tma_copy_kernel: tensor A cannot be described by a TMA "
                                         r"tensor map: stride 0 is 70 elements = 280 bytes"):
        build(COPY, "sm_90")["tma_copy"](a, b)


@needs_h100
@pytest.mark.parametrize("m,n,k", [(128, 256, 64), (256, 512, 1024), (1000, 1000, 1000),
                                   (4000, 4000, 4000), (8192, 1000, 4096), (77, 3000, 136),
                                   (1, 8, 8), (130, 264, 72), (300, 200, 0), (64, 100, 60),
                                   (64, 100, 64), (33, 7, 5), (0, 16, 16)])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gemm_hopper_on_the_gpu(m, n, k, dtype):
    t = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda").to(t)
    w = torch.randn(n, k, device="cuda").to(t)
    c = torch.full((m, n), float("nan"), device="cuda").to(t)
    # N and K multiples of 8 (and K > 0) take the TMA kernel, the others the CUDA-core fallback.
    text = GEMM if dtype == "float16" else bf16(GEMM)
    build(text)["gemm_hopper"](a, w, c)
    ref = (a.float() @ w.float().T).to(t).float()
    torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=2e-2 * max(1.0, k ** 0.5 / 8))



def with_bias_relu(text):
    """The example with an epilogue written over the wgmma accumulator fragment: thread t's
    acc[4j + 2h + c] is row 16 (t / 32 % 4) + t % 32 / 4 + 8h, column 8j + 2 (t % 4) + c of its
    warpgroup's 64x256 block (include/tessel/ir/builtin_hopper.h). C = relu(A @ W.T + bias)."""
    out = text.replace('C: T.Buffer((M, N), "float16")):',
                       'C: T.Buffer((M, N), "float16"), bias: T.Buffer((N,), "float32")):', 1)
    cast = 'T.Cast("float16", acc[4 * j + 2 * h + c])'
    assert out.count(cast) == 1
    col = "tn * 256 + 8 * j + 2 * (tx % 4) + c"
    fused = (f'T.Cast("float16", T.max(acc[4 * j + 2 * h + c] + T.if_then_else({col} < N, '
             f'bias[T.min({col}, N - 1)], T.float32(0)), T.float32(0)))')
    return out.replace(cast, fused)


def test_fused_epilogue_ptx():
    ptx = ptx_of(build(with_bias_relu(GEMM)))
    assert "max.f32" in ptx and "ld.local" not in ptx and "st.local" not in ptx


@needs_h100
@pytest.mark.parametrize("m,n,k", [(256, 512, 128), (1000, 1000, 1000), (77, 264, 136)])
def test_fused_epilogue_on_the_gpu(m, n, k):
    a = torch.randn(m, k, device="cuda").half()
    w = torch.randn(n, k, device="cuda").half()
    bias = torch.randn(n, device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda").half()
    build(with_bias_relu(GEMM))["gemm_hopper"](a, w, c, bias)
    ref = torch.relu(a.float() @ w.float().T + bias).half().float()
    torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=2e-2 * max(1.0, k ** 0.5 / 8))
