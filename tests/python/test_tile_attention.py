"""FlashAttention written with tile operations (examples/flash_attention.py, issue 16): full and
causal, head dims 64 and 128, float16 and bfloat16 by text substitution; against NumPy through the
C backend, through the SIMT GPU lowering on the MSL execution harness in three thread orders,
compiled with NVRTC, and against torch's scaled_dot_product_attention on a CUDA GPU (the device
machine runs those). T.copy of a 4-D tensor start into a 2-D tile squeezes the unit dimensions,
and T.gemm takes P from a fragment."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi

import metal_emu
import tessel
from test_tile_ops import have_cuda_compiler

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "examples" / "flash_attention.py").read_text()

FULL_LOOP = "for k in T.Pipelined(T.ceildiv(S, 128), num_stages=2):"
FULL_MASK = "T.if_then_else(k * 128 + j < S,"
# CAUSAL: key tiles up to the block's last row; key j at most query i.
CAUSAL_LOOP = "for k in T.Pipelined(T.min(T.ceildiv(S, 128), bx + 1), num_stages=2):"
CAUSAL_MASK = "T.if_then_else(k * 128 + j <= T.min(bx * 128 + i, S - 1),"


PERSISTENT_ATTR = '"tir.noalias": True}'


def attention_text(head_dim=64, dtype="float16", causal=False, block=128, keys=128, rows=128,
                   reverse=False, persistent=None):
    """The example for a head dim, dtype and mask; `block` query rows (and key rows) a tile, or
    with `keys` key tiles of that many rows (FA3 takes 176 at head dim 128) and `rows` query rows
    a block (192: three consumer warpgroups, FA3's choice at head dim 64). `reverse`: block bx
    takes the query rows of block ceildiv(S, rows) - 1 - bx, so that under the causal mask the
    blocks with the most key tiles start first (FA3's order). `persistent`: the function's
    "tessel.persistent" attribute (True: the Hopper kernel walks the tiles from one block per SM),
    absent when None."""
    assert FULL_LOOP in TEXT and FULL_MASK in TEXT
    text = TEXT
    if causal:
        text = text.replace(FULL_LOOP, CAUSAL_LOOP).replace(FULL_MASK, CAUSAL_MASK)
    if block != 128:
        # Smaller tiles (Metal's 32 KB of threadgroup memory); head dim 64 only.
        assert head_dim == 64 and keys == 128 and rows == 128
        text = text.replace("128", str(block)).replace("threads=256", f"threads={block * 2}")
    if keys != 128 or rows != 128:
        # The key side: K and V tiles, the scores' columns, the loop and the masks; then the
        # query side: the grid, the threads (two a row), Q and every fragment's rows.
        loop = "T.min(T.ceildiv(S, 128), bx + 1)" if causal else "T.ceildiv(S, 128)"
        swaps = [("K_s = T.alloc_shared((128,", f"K_s = T.alloc_shared(({keys},"),
                 ("V_s = T.alloc_shared((128,", f"V_s = T.alloc_shared(({keys},"),
                 ("S_f = T.alloc_fragment((128, 128)", f"S_f = T.alloc_fragment((128, {keys})"),
                 ("P_f = T.alloc_fragment((128, 128)", f"P_f = T.alloc_fragment((128, {keys})"),
                 ("T.Parallel(128, 128):\n                S_f[i, j] = T.if_then_else",
                  f"T.Parallel(128, {keys}):\n                S_f[i, j] = T.if_then_else"),
                 ("T.Parallel(128, 128):\n                S_f[i, j] = T.exp2",
                  f"T.Parallel(128, {keys}):\n                S_f[i, j] = T.exp2"),
                 ("K[bz, by, k * 128, 0]", f"K[bz, by, k * {keys}, 0]"),
                 ("V[bz, by, k * 128, 0]", f"V[bz, by, k * {keys}, 0]"),
                 ("k * 128 + j", f"k * {keys} + j"),
                 (f"T.Pipelined({loop}", "T.Pipelined(" + (
                     f"T.min(T.ceildiv(S, {keys}), T.ceildiv(bx * {rows} + {rows}, {keys}))"
                     if causal else f"T.ceildiv(S, {keys})")),
                 ("T.ceildiv(S, 128), H, B, threads=256",
                  f"T.ceildiv(S, {rows}), H, B, threads={rows * 2}"),
                 ("bx * 128", f"bx * {rows}"),
                 ("Q_s = T.alloc_shared((128,", f"Q_s = T.alloc_shared(({rows},"),
                 ("T.alloc_fragment((128,", f"T.alloc_fragment(({rows},"),
                 ("T.Parallel(128", f"T.Parallel({rows}")]
        for old, new in swaps:
            assert old in text, old
            text = text.replace(old, new)
    text = text.replace(", 64)", f", {head_dim})")
    if reverse:
        text = re.sub(r"\bbx\b(?!, by, bz\))", f"(T.ceildiv(S, {rows}) - 1 - bx)", text)
    if persistent is not None:
        assert PERSISTENT_ATTR in text
        text = text.replace(PERSISTENT_ATTR,
                            f'"tir.noalias": True, "tessel.persistent": {persistent}}}')
    scale = math.log2(math.e) / math.sqrt(head_dim)
    return text.replace("0.18033688011112042", repr(scale)).replace('"float16"', f'"{dtype}"')


def reference(q, k, v, causal):
    q, k, v = (x.astype("float64") for x in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def inputs(b, h, s, d, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((b, h, s, d)).astype("float16") for _ in range(3)]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d,s,keys,rows", [(64, 200, 128, 128), (128, 130, 128, 128),
                                           (64, 1, 128, 128), (64, 256, 128, 128),
                                           (128, 400, 176, 128), (64, 400, 192, 128),
                                           (64, 400, 128, 192), (64, 100, 128, 192)])
@pytest.mark.parametrize("reverse", [False, True], ids=["in_order", "reversed"])
def test_attention_matches_numpy_on_the_cpu(causal, d, s, keys, rows, reverse):
    q, k, v = inputs(1, 2, s, d, s + d)
    o = np.full_like(q, np.nan)
    text = attention_text(d, causal=causal, keys=keys, rows=rows, reverse=reverse)
    tessel.build(text, target="c")["flash_attention"](
        *(tvm_ffi.from_dlpack(x) for x in (q, k, v, o)))
    np.testing.assert_allclose(o.astype("float64"), reference(q, k, v, causal), atol=2e-3)


def rising_inputs(s, d, gain, seed):
    """Scores that rise along the keys, by about gain / 40 * 46 units of log2 from the first key
    to the last at head dim 64: with gain 40 each key tile raises the row maxima by about 19
    (the rescale of O by far less than 1), with gain 6 by about 2."""
    rng = np.random.default_rng(seed)
    q = 0.1 + 0.01 * rng.standard_normal((1, 2, s, d))
    ramp = gain * np.arange(s)[None, None, :, None] / s
    k = ramp + 0.01 * rng.standard_normal((1, 2, s, d))
    v = rng.standard_normal((1, 2, s, d))
    return [x.astype("float16") for x in (q, k, v)]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("gain", [40, 6], ids=["steep", "gentle"])
def test_attention_with_rising_scores_matches_numpy_on_the_cpu(causal, gain):
    q, k, v = rising_inputs(300, 64, gain, 5)
    o = np.full_like(q, np.nan)
    tessel.build(attention_text(64, causal=causal), target="c")["flash_attention"](
        *(tvm_ffi.from_dlpack(x) for x in (q, k, v, o)))
    np.testing.assert_allclose(o.astype("float64"), reference(q, k, v, causal), atol=2e-3)


def test_a_start_of_higher_rank_squeezes_and_bad_ranks_are_refused():
    ir = str(tvm_ffi.get_global_func("tessel.ir.ParseModule")(TEXT, "<t>"))
    assert "T.tile_region(Q[bz, by, bx * 128, 0], 1, 1, 128, 64)" in ir
    bad = TEXT.replace("T.copy(Q[bz, by, bx * 128, 0], Q_s)",
                       "T.copy(Q[bz, 0:2, 0:128, 0:64], Q_s)")
    with pytest.raises(ValueError, match=r"a region of rank 4 of Q against one of rank 2: its "
                                         r"extent 2 in dimension 1 is not 1"):
        tessel.build(bad, target="c")
    bad = TEXT.replace("T.copy(Q[bz, by, bx * 128, 0], Q_s)", "T.copy(Q[bz, 0], Q_s)")
    with pytest.raises(ValueError, match=r"a start of rank 2 for a tile of rank 2|indices for"):
        tessel.build(bad, target="c")


def test_the_plan_on_hopper_is_fused_warp_specialized_with_row_statistics():
    from test_tile_hopper import planned

    ir = planned(TEXT)
    assert ('"tessel.tile_plan": "warp-specialized: 2 consumer warpgroup(s) run wgmma, a producer '
            'warpgroup issues TMA into 2 stages; fused: the consumers run the loop\'s statements '
            'in order, its last T.gemm at line 55 one iteration late, beside the next iteration\'s '
            'statements up to the one at line 51, the others to completion, after 1 tile(s) '
            'loaded once; iterations k < (S - 128) // 128 + 1 leave out the T.if_then_else(s) of '
            'the T.Parallel at line 39 (their conditions hold for every element there)"') in ir
    # Causal: the tiles below the block's diagonal (and before the ragged end) need no mask.
    assert ('iterations k < T.min(bx * 128 - 127, S - 128) // 128 + 1 leave out the '
            'T.if_then_else(s) of the T.Parallel at line 39') in planned(
                attention_text(128, "float16", True))
    assert '"S_f": "wgmma accumulator m64n128 (warpgroup w: rows 64w..64w+63): C of T.gemm' in ir
    assert '"P_f": "wgmma accumulator m64n128 (warpgroup w: rows 64w..64w+63): tied to S_f' in ir
    for name in ("m", "m_prev", "rescale", "row_sum", "l"):
        assert f'"{name}": "one value per wgmma accumulator row, in the row\'s four threads' in ir
    # Elsewhere the SIMT form, which holds row statistics whole in every thread.
    ir = planned(TEXT, arch="")
    for name in ("m", "m_prev", "rescale", "row_sum", "l"):
        assert (f'"{name}": "replicated in every thread: a T.reduce writes it or a T.Parallel '
                f'reads it whole') in ir


RESCALE = """            for i, j in T.Parallel(128, 64):
                O_f[i, j] = O_f[i, j] * rescale[i]
"""
GUARDED = """            for i, j in T.Parallel(128, 64):
                if rescale[i] != T.float32(1):
                    O_f[i, j] = O_f[i, j] * rescale[i]
"""


def test_a_row_condition_over_the_accumulator_is_one_branch_a_row():
    from test_tile_hopper import planned

    # `if rescale[i] != 1` over O: each thread tests each of its two rows once (in the peeled
    # iteration and the two loops) and the row's registers are plain stores inside, so ptxas
    # branches around them instead of predicating each. (On the H200 the example ran 2-4%
    # slower at head dim 128 this way, 2026-12-03, so it keeps the plain rescale.)
    assert RESCALE in TEXT
    ir = planned(TEXT.replace(RESCALE, GUARDED))
    assert len(re.findall(r"for (q\w*) in T.unroll\(2\):\n +if rescale_local_1\[\1\] != "
                          r"T.float32\(1\):\n +for (c\w*) in T.unroll\(8\):\n +for (p\w*) in "
                          r"T.unroll\(2\):\n +O_f_local_1\[\2 \* 4 \+ \1 \* 2 \+ \3\] = ", ir)) == 3
    assert "if rescale_local_1[r" not in ir
    # A condition on the column too differs between a row's registers: the plain form stays.
    ir = planned(TEXT.replace(RESCALE, GUARDED.replace("if rescale[i] != T.float32(1):",
                                                       "if rescale[i] != T.float32(1) and j < 32:")))
    assert "if rescale_local_1[q]" not in ir
    assert ir.count("if rescale_local_1[r") == 3


@pytest.mark.parametrize("d", [64, 128])
def test_the_hopper_kernel_reads_p_from_registers_and_v_n_major(d):
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    src = tessel.build(attention_text(d, "float16"), target="cuda -arch=sm_90a").get_source("cuda")
    fast = src.split("__global__")[1]
    # S = Q K^T from shared tiles, O += P V with P from registers and V (keys x d) N-major; each
    # issued in three places: S in the peeled first iteration and the two loops (without and with
    # the mask), P V (one iteration late) in the two loops and after them.
    assert fast.count(f"tsl_wgmma_m64n128k16_f16_00(") == 3 * d // 16
    assert fast.count(f"tsl_wgmma_rs_m64n{d}k16_f16_01(") == 3 * 8
    # Q once, K and V per stage: 4-D boxes, in 128-byte column blocks.
    assert fast.count("tsl_tma_load_4d(") == 3 * d // 64
    # Row maxima and sums over each row's four threads (in the peeled iteration and the loops).
    assert fast.count("__shfl_xor_sync") == 3 * 8 and "__syncthreads();" in fast
    # The two warpgroups take turns to issue their gemms (ping-pong on named barriers 3 and 4):
    # a wait for its turn in the peeled iteration and the loop, a hand-over after each, and
    # warpgroup 1 letting 0 start.
    assert fast.count("tsl_named_barrier_sync(tsl_add_i32((threadIdx_x >> 7), 3)"
                      ", 256)") == 3
    assert fast.count("tsl_named_barrier_arrive(") == 4
    # P = S cast to 16 bits goes straight into the packed A registers, two elements per
    # cvt.rn.f16x2.f32 (in the peeled iteration and the loops); nothing packs it a second time.
    assert fast.count("P_f_pack[i") == 3 and fast.count("= tsl_cvt_pack_f16(S_f_local[") == 3
    assert "tsl_bitcast<uint16_t>(P_f_local" not in fast
    # The key tiles that need no mask run in a loop of their own, without the compare and select
    # (the peeled first iteration and the loop after it keep them).
    loops = re.findall(r"for \(int32_t (k\w*) = ([^;]*);", fast)  # the producer's, then two
    assert len(loops) == 3 and loops[1][1] == "1" and " >> 7)" in loops[2][1], loops
    assert fast.count(" : (-INFINITY));") == 2


def test_192_query_rows_run_on_three_consumer_warpgroups():
    # FA3's shape at head dim 64: three consumer warpgroups of 64 rows each and the producer, 512
    # threads; the consumers raise their registers to 160 and the producer drops to 24 (160 * 384
    # + 24 * 128 = 64512 of the 65536), and without ping-pong (that is for two warpgroups).
    from test_tile_hopper import planned

    text = attention_text(64, "float16", rows=192)
    assert "warp-specialized: 3 consumer warpgroup(s) run wgmma" in planned(text)
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    fast = tessel.build(text, target="cuda -arch=sm_90a").get_source("cuda").split("__global__")[1]
    assert "__launch_bounds__(512)" in fast
    assert "tsl_setmaxnreg_inc<160>()" in fast and "tsl_setmaxnreg_dec<24>()" in fast
    assert "tsl_named_barrier" not in fast
    # More threads than three warpgroups is the SIMT form, and the plan says why.
    bad = attention_text(64, "float16", block=64).replace("threads=128", "threads=512")
    assert ("threads=512: the warp-specialized form takes 128, 256 or 384 threads (one to three "
            "consumer warpgroups)") in planned(bad)


def test_bfloat16_p_is_packed_by_one_conversion_per_pair():
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    src = tessel.build(attention_text(64, "bfloat16"), target="cuda -arch=sm_90a").get_source("cuda")
    assert src.split("__global__")[1].count("= tsl_cvt_pack_bf16(S_f_local[") == 3
    ptx = tvm_ffi.get_global_func("tessel.codegen.CompileCUDAToPTX")(src, "sm_90a")
    assert "cvt.rn.bf16x2.f32" in ptx


@pytest.mark.skipif(not metal_emu.available(), reason=metal_emu.UNAVAILABLE_REASON)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_on_metal_in_every_thread_order(causal):
    # The SIMT lowering: P goes through a shared scratch tile into the second gemm.
    mod = tessel.build(attention_text(causal=causal, block=32), target="metal")
    q, k, v = inputs(1, 1, 150, 64, 7)
    want = reference(q, k, v, causal)
    for order, seed in metal_emu.ORDERS:
        o = np.full_like(q, np.nan)
        with metal_emu.installed(order, seed):
            mod["flash_attention"](*[metal_emu.as_metal(x) for x in (q, k, v, o)])
        np.testing.assert_allclose(o.astype("float64"), want, atol=2e-3, err_msg=order)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_compiles_for_cuda(causal):
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    mod = tessel.build(attention_text(128, "bfloat16", causal), target="cuda -arch=sm_90a")
    src = mod.get_source("cuda")
    assert "exp2" in src and "__syncthreads()" in src


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_a_persistent_attention_walks_the_tiles_from_one_block_per_sm(causal):
    from test_tile_hopper import planned

    ir = planned(attention_text(64, "float16", causal, persistent=True))
    plan = re.search(r'"tessel.tile_plan": "warp-specialized[^"]*"', ir).group(0)
    assert plan.endswith("persistent: at most 132 blocks walk the 3-D grid's tiles" +
                         (", stages counted across tiles of different trip counts" if causal
                          else "") + ', the preloaded tiles reloaded per tile"')
    # One block per SM (or per tile, when fewer), each walking tiles t = bid + i * grid; bx runs
    # down in even heads and up in odd ones, so that no block is stuck with the long causal rows.
    assert ('for bid in T.thread_binding(T.min((S + 127) // 128 * H * B, 132), '
            'thread="blockIdx.x"') in ir
    assert "blockIdx.y" not in ir.split("SIMT: the fallback")[0]
    walks = re.findall(r"for (tile_i\w*) in range\(\(\(S \+ 127\) // 128 \* H \* B \+ "
                       r"T.min\(\(S \+ 127\) // 128 \* H \* B, 132\) - \(bid \+ 1\)\) // "
                       r"T.min\(\(S \+ 127\) // 128 \* H \* B, 132\)\):", ir)
    assert len(walks) == 2  # the producer's and the consumers'
    assert ir.count("bx: T.int32 = T.Select(") + ir.count("bx_1: T.int32 = T.Select(") == 2
    # Q is reloaded per tile: the producer waits (phase tile_i % 2 ^ 1 of the empty barrier, 9)
    # until the consumers' eight warps released the last tile's, after their loop.
    producer, consumer = walks
    assert "T.ptx_mbarrier_init(T.address_of(tile_bars_1[9]), 8," in ir
    assert f"T.ptx_mbarrier_wait(T.address_of(tile_bars_1[9]), {producer} % 2 ^ 1," in ir
    assert f"T.ptx_mbarrier_wait(T.address_of(tile_bars_1[8]), {consumer} % 2," in ir
    assert ir.count("T.ptx_mbarrier_arrive(T.address_of(tile_bars_1[9])") == 1
    # Causal trip counts differ by tile: stage and phase come from a running count of the
    # iterations each role has walked, advanced by the tile's trip count.
    if causal:
        assert ir.count("ring_iter_1[0] = 0") == 2
        assert ir.count("ring_iter_1[0] = ring_iter_1[0] + T.max(T.min((S + 127) // 128, "
                        "bx") == 2
        assert "T.address_of(tile_bars_1[(ring_iter_1[0] + k) % 2])" in ir
    else:
        assert "ring_iter" not in ir
        assert f"T.address_of(tile_bars_1[({producer} * ((S + 127) // 128) + k) % 2])" in ir
    # Warpgroup 1 lets 0 go first once, before the walk, not per tile.
    assert ir.count("T.ptx_named_barrier_arrive(3, 256)") == 1
    assert ir.index("T.ptx_named_barrier_arrive(3, 256)") < ir.index(f"for {consumer} in")
    # Without the attribute: one block per tile, as before.
    ir = planned(attention_text(64, "float16", causal))
    assert "persistent:" not in ir and "tile_i" not in ir and 'thread="blockIdx.z"' in ir


def test_the_persistent_attribute_turns_the_gemms_walk_off_and_is_checked():
    from test_tile_hopper import GEMM, planned

    assert "persistent: at most 132 blocks walk the 2-D grid's tiles" in planned(GEMM)
    attr = '"tir.noalias": True}'
    assert attr in GEMM
    ir = planned(GEMM.replace(attr, '"tir.noalias": True, "tessel.persistent": False}'))
    assert "persistent:" not in ir and "tile_i" not in ir and 'thread="blockIdx.y"' in ir
    with pytest.raises(ValueError, match='attribute "tessel.persistent" must be True or False, '
                                         'got the string "yes"'):
        planned(GEMM.replace(attr, '"tir.noalias": True, "tessel.persistent": "yes"}'))


from conftest import gpu_torch as _cuda_torch  # noqa: E402


@pytest.mark.skipif(_cuda_torch() is None,
                    reason="needs PyTorch and a CUDA GPU (the device machine runs these)")
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d,dtype", [(64, "float16"), (128, "float16"), (64, "bfloat16"),
                                     (128, "bfloat16")])
@pytest.mark.parametrize("s,fm,keys,rows,reverse", [
    (300, "", 128, 128, False), (1, "", 128, 128, False), (1024, "", 128, 128, False),
    (300, " -fast-math", 128, 128, False), (1024, " -fast-math", 128, 128, False),
    (700, " -fast-math", 0, 128, False), (700, " -fast-math", 128, 192, False),
    (100, "", 128, 192, False), (700, " -fast-math", 128, 192, True),
    (700, " -fast-math", 128, 128, True)])
def test_attention_matches_torch_on_the_gpu(causal, d, dtype, s, fm, keys, rows, reverse):
    # On the H200 the warp-specialized kernel (TMA, wgmma with P from registers); the benchmark
    # builds it with -fast-math.
    torch = _cuda_torch()
    t = getattr(torch, dtype)
    q, k, v = (torch.randn(2, 4, s, d, device="cuda").to(t) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    # keys 0: the benchmark's larger key tiles (176 at head dim 128, 192 at 64).
    keys = keys or {64: 192, 128: 176}[d]
    if rows == 192 and d == 128:
        pytest.skip("192 query rows (three consumer warpgroups) are for head dim 64: at 128 the "
                    "O accumulator alone takes 64 of a consumer's 160 registers")
    tessel.build(attention_text(d, dtype, causal, keys=keys, rows=rows, reverse=reverse),
                 target="cuda -arch=sm_90a" + fm)["flash_attention"](q, k, v, o)
    want = torch.nn.functional.scaled_dot_product_attention(
        q.cpu().float(), k.cpu().float(), v.cpu().float(), is_causal=causal)
    torch.testing.assert_close(o.cpu().float(), want, atol=2e-2, rtol=2e-2)


@pytest.mark.skipif(_cuda_torch() is None,
                    reason="needs PyTorch and a CUDA GPU (the device machine runs these)")
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d,dtype", [(64, "float16"), (128, "float16"), (64, "bfloat16"),
                                     (128, "bfloat16")])
@pytest.mark.parametrize("b,h,s,rows", [(2, 16, 700, 128), (1, 8, 4096, 128), (3, 5, 1000, 192),
                                        (1, 1, 300, 128)])
def test_a_persistent_attention_matches_torch_on_the_gpu(causal, d, dtype, b, h, s, rows):
    # More tiles than blocks (up to 4096 / 128 * 8 = 256 for 132), so that blocks walk several
    # tiles of different trip counts, and fewer (one head of 300 rows: three blocks).
    if rows == 192 and d == 128:
        pytest.skip("192 query rows are for head dim 64")
    torch = _cuda_torch()
    t = getattr(torch, dtype)
    q, k, v = (torch.randn(b, h, s, d, device="cuda").to(t) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    tessel.build(attention_text(d, dtype, causal, rows=rows, persistent=True),
                 target="cuda -arch=sm_90a -fast-math")["flash_attention"](q, k, v, o)
    want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                            is_causal=causal)
    torch.testing.assert_close(o.float(), want, atol=2e-2, rtol=2e-2)


@pytest.mark.skipif(_cuda_torch() is None,
                    reason="needs PyTorch and a CUDA GPU (the device machine runs these)")
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("gain", [40, 6], ids=["steep", "gentle"])
@pytest.mark.parametrize("rows", [128, 192])
def test_attention_with_rising_scores_matches_torch_on_the_gpu(causal, gain, rows):
    # The warp-specialized kernel's rescale of O when the row maxima rise at every key tile.
    torch = _cuda_torch()
    q, k, v = (torch.from_numpy(x).cuda() for x in rising_inputs(700, 64, gain, 3))
    o = torch.full_like(q, float("nan"))
    tessel.build(attention_text(64, "float16", causal, rows=rows),
                 target="cuda -arch=sm_90a -fast-math")["flash_attention"](q, k, v, o)
    want = reference(*(x.cpu().numpy() for x in (q, k, v)), causal)
    np.testing.assert_allclose(o.cpu().float().numpy(), want, atol=2e-2, rtol=2e-2)


@pytest.mark.skipif(_cuda_torch() is None,
                    reason="needs PyTorch and a CUDA GPU (the device machine runs these)")
@pytest.mark.parametrize("d,keys", [(64, 192), (128, 176)])
def test_the_simt_form_with_large_key_tiles_on_the_gpu(d, keys):
    # sm_90 (not sm_90a): the SIMT lowering, whose row reductions go through a scratch of one
    # partial a vector and whose scratch past 48 KB goes to dynamic shared memory; the fallback
    # kernel of an sm_90a build without Z3 is the same code.
    torch = _cuda_torch()
    q, k, v = (torch.randn(1, 2, 300, d, device="cuda").half() for _ in range(3))
    o = torch.full_like(q, float("nan"))
    tessel.build(attention_text(d, "float16", True, keys=keys), target="cuda -arch=sm_90")[
        "flash_attention"](q, k, v, o)
    want = torch.nn.functional.scaled_dot_product_attention(
        q.cpu().float(), k.cpu().float(), v.cpu().float(), is_causal=True)
    torch.testing.assert_close(o.cpu().float(), want, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("d,causal,persistent", [(64, False, None), (128, True, None),
                                                 (128, True, True), (64, True, True)])
def test_ptxas_issues_the_attention_wgmmas_without_serializing_them(d, causal, persistent,
                                                                    tmp_path):
    # P is packed into 32-bit registers before the wgmma fence: packed after it, ptxas inserted a
    # warpgroup arrive before each wgmma (C7519) and, with named barriers between the warpgroups,
    # serialized them (C7520). Needs nvcc (ptxas's report); NVRTC does not print it.
    import shutil
    import subprocess

    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.skip("needs nvcc for ptxas -v")
    src = tessel.build(attention_text(d, "float16", causal, persistent=persistent),
                       target="cuda -arch=sm_90a").get_source("cuda")
    cu = tmp_path / "attn.cu"
    cu.write_text(src)
    out = subprocess.run([nvcc, "-arch=sm_90a", "-cubin", "-o", str(tmp_path / "attn.cubin"),
                          "-Xptxas", "-v", "-diag-suppress", "177", str(cu)],
                         capture_output=True, text=True, check=True)
    report = out.stdout + out.stderr
    assert "Compiling entry function 'flash_attention_kernel'" in report
    assert "C7519" not in report and "C7520" not in report
    assert "0 bytes spill stores, 0 bytes spill loads" in report
    assert not re.search(r"[1-9]\d* bytes spill (stores|loads)", report)


def test_the_same_program_gives_the_same_source_and_hits_the_cache(tmp_path, monkeypatch):
    # The fragments' registers were declared in the order of a map keyed by pointers: each build
    # gave other source text, so the cubin cache never hit (measured: warm builds as slow as
    # cold ones).
    if not have_cuda_compiler():
        pytest.skip("no NVRTC or nvcc")
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path))
    text = attention_text(64, "float16")
    sources = {tessel.build(text, target="cuda -arch=sm_90a").get_source("cuda") for _ in range(4)}
    assert len(sources) == 1 and len(list(tmp_path.glob("*.cukey"))) == 1
