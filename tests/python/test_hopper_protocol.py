"""The synchronization of the warp-specialized Hopper kernels, checked on the CPU by the model in
hopper_protocol.py: the producer and each consumer warp run in random interleavings with TMA
loads landing late, for blocks that walk several tiles of different trip counts. The last tests
break the protocol of a lowered kernel in the ways a lowering bug would (by editing its printed
text and parsing it again) and check that the model says what broke."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hopper_protocol import Model, ProtocolError, lower_for_hopper
from tessel._lib import get_global_func
from test_tile_attention import attention_text

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(get_global_func("tessel.ir.ParseModule") is None,
                                reason="libtessel has no parser")


def run(mod, shapes, blocks, seeds=(0, 1)):
    for seed in seeds:
        model = Model(mod, shapes, seed)
        for block in blocks:
            model.run_block(block)


# 4096 rows over 5 heads: 160 row tiles of 128, so that blocks 0 .. 27 of the 132 walk two
# tiles (under the causal mask of 32 and 1 key tiles, or of 1 and 32: bx alternates direction
# by head) and the others one; 700 rows end in a ragged tile.
PERSISTENT_BLOCKS = [{"bid": 0}, {"bid": 3}, {"bid": 27}, {"bid": 131}]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d,rows", [(64, 128), (128, 128), (64, 192)])
def test_the_persistent_attention_keeps_its_protocol(causal, d, rows):
    mod = lower_for_hopper(attention_text(d, "float16", causal, rows=rows, persistent=True))
    shapes = {"S": 4096, "B": 1, "H": 5 if rows == 128 else 8}
    run(mod, shapes, PERSISTENT_BLOCKS)
    run(mod, {"S": 700, "B": 2, "H": 3}, [{"bid": 0}, {"bid": 35}], seeds=(2,))


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d,rows", [(64, 128), (128, 128), (64, 192)])
def test_the_attention_keeps_its_protocol(causal, d, rows):
    mod = lower_for_hopper(attention_text(d, "float16", causal, rows=rows))
    run(mod, {"S": 700, "B": 1, "H": 2},
        [{"bx": 0, "by": 0, "bz": 0}, {"bx": 5 if rows == 128 else 3, "by": 1, "bz": 0}])


def test_the_persistent_gemms_keep_their_protocol():
    # Every tile of a block has the same trip count; 8 x 20 = 160 tiles of 128 x 256.
    for example in ("tile_gemm_hopper.py", "tile_gemm_gelu.py"):
        gemm = lower_for_hopper((ROOT / "examples" / example).read_text())
        run(gemm, {"M": 1000, "N": 2048, "K": 1000}, [{"bid": 0}, {"bid": 27}, {"bid": 131}])
    # The reduction epilogue and the TMA store through a staging tile, over a 1-D grid.
    fused = lower_for_hopper((ROOT / "examples" / "gemm_softmax.py").read_text())
    run(fused, {"M": 9000, "N": 256, "K": 300}, [{"bid": 0}, {"bid": 9}, {"bid": 131}])


BROKEN = [
    # The consumers never release Q: the producer waits for them before the second tile's.
    ('T.ptx_mbarrier_arrive(T.address_of(tile_bars_1[9]), dtype="int32")', "T.evaluate(0)",
     "deadlock in block {'bid': 0}: consumer warp 0: mbarrier 8 parity 1"),
    # Q's phase not counted by tile: the second tile passes on the first tile's phase.
    ("T.ptx_mbarrier_wait(T.address_of(tile_bars_1[8]), tile_i_1 % 2,",
     "T.ptx_mbarrier_wait(T.address_of(tile_bars_1[8]), 0,",
     "pass 1 of full barrier 8 acquired phase 0"),
    # The producer reloads Q without waiting for the consumers to release it.
    ('T.ptx_mbarrier_wait(T.address_of(tile_bars_1[9]), tile_i % 2 ^ 1, dtype="int32")',
     "T.evaluate(0)", "holding phase 1 of barrier 8; the warp waited for phase 0"),
    # The consumers' running iteration count is not advanced: stages and phases drift.
    ("ring_iter_1[0] = ring_iter_1[0] + T.max(T.min((S + 127) // 128, bx_1 + 1), 0)",
     "T.evaluate(0)", "of full barrier 0 acquired phase"),
    # The producer's count runs one ahead: it waits on a phase that never completes.
    ("ring_iter_1[0] = ring_iter_1[0] + T.max(T.min((S + 127) // 128, bx + 1), 0)",
     "ring_iter_1[0] = ring_iter_1[0] + T.max(T.min((S + 127) // 128, bx + 1), 0) + 1",
     "deadlock in block {'bid': 0}"),
    # The producer's empty-barrier waits on the wrong parity.
    ("(ring_iter_1[0] + k) // 2 % 2 ^ 1", "(ring_iter_1[0] + k) // 2 % 2",
     "deadlock in block {'bid': 0}"),
    # No wgmma is waited for before its stages are released: the producer refills a stage that a
    # group in flight reads, or the block ends with groups in flight.
    ("T.ptx_wgmma_wait_group(0)", "T.evaluate(0)", "wgmma group"),
]


@pytest.mark.parametrize("old,new,says", BROKEN, ids=[b[2][:40] for b in BROKEN])
def test_the_model_catches_a_broken_protocol(old, new, says):
    text = str(lower_for_hopper(attention_text(64, "float16", True, persistent=True)))
    assert old in text
    parse = get_global_func("tessel.ir.ParseModule")
    run(parse(text, "<lowered>"), {"S": 4096, "B": 1, "H": 5}, [{"bid": 0}], seeds=(0,))
    # Block 27 walks tiles of 5 and 1 key tiles: with 32 (block 0's first) a wrong count of
    # iterations can land on the right stage and phase by chance (32 is a multiple of 2 x 2).
    with pytest.raises(ProtocolError) as err:
        run(parse(text.replace(old, new), "<broken>"), {"S": 4096, "B": 1, "H": 5},
            [{"bid": 0}, {"bid": 27}], seeds=(0, 1, 2))
    assert says in str(err.value), str(err.value)


STORE_BROKEN = [
    # The staging tile is written before the last tile's TMA stores have read it.
    (0, "while a TMA store of consumer warp 0 not yet waited for reads it"),
    # The block ends with TMA stores in flight.
    (-1, "consumer warp 0 ended with TMA stores not waited for"),
]


@pytest.mark.parametrize("which,says", STORE_BROKEN, ids=["refill", "exit"])
def test_the_model_catches_a_broken_tma_store(which, says):
    # examples/gemm_softmax.py stores its rows through a staging tile by TMA, persistent over a
    # 1-D grid (9000 rows: 141 tiles of 64, so blocks 0 .. 8 walk two).
    text = str(lower_for_hopper((ROOT / "examples" / "gemm_softmax.py").read_text()))
    waits = [m.start() for m in re.finditer(re.escape("T.ptx_tma_store_wait_group(0)"), text)]
    assert len(waits) == 2
    at = waits[which]
    broken = text[:at] + "T.evaluate(0)" + text[at + len("T.ptx_tma_store_wait_group(0)"):]
    parse = get_global_func("tessel.ir.ParseModule")
    shapes = {"M": 9000, "N": 256, "K": 300}
    run(parse(text, "<lowered>"), shapes, [{"bid": 0}], seeds=(0,))
    with pytest.raises(ProtocolError) as err:
        run(parse(broken, "<broken>"), shapes, [{"bid": 0}], seeds=(0, 1, 2))
    assert says in str(err.value), str(err.value)


def test_the_model_catches_an_unfenced_staging_write():
    # Without fence.proxy.async the TMA store (the async proxy) may not see the threads' writes.
    text = str(lower_for_hopper((ROOT / "examples" / "gemm_softmax.py").read_text()))
    assert text.count("T.ptx_fence_proxy_async()") == 1
    parse = get_global_func("tessel.ir.ParseModule")
    with pytest.raises(ProtocolError, match="which consumer warp . wrote and has not fenced since"):
        run(parse(text.replace("T.ptx_fence_proxy_async()", "T.evaluate(0)"), "<broken>"),
            {"M": 9000, "N": 256, "K": 300}, [{"bid": 0}], seeds=(0, 1))
