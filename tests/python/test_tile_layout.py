"""Tile layouts (include/tessel/tile/layout.h, python/tessel/tile.py): the fragments of the matrix
units match the PTX ISA's tables and the kernels that ran on the H200, compositions stay
bijections, the swizzled layout is SwizzleLayout's, and the checks name what is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tessel import tile

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("n", [8, 16, 64, 128, 256])
def test_wgmma_accumulator_is_the_ptx_table(n):
    # PTX ISA: thread t of the warpgroup (warp w, lane l) holds, for j < n / 8,
    # acc[4j + 2h + c] = D[16w + l / 4 + 8h][8j + 2 (l % 4) + c].
    f = tile.wgmma_accumulator(n)
    assert f.shape == (64, n) and f.threads == 128 and f.locals == n // 2
    for t in range(128):
        w, lane = divmod(t, 32)
        for j in range(n // 8):
            for h in range(2):
                for c in range(2):
                    assert f.at(16 * w + lane // 4 + 8 * h, 8 * j + 2 * (lane % 4) + c) == \
                        (t, 4 * j + 2 * h + c)
    assert f.check(dense=True) == ""


def test_mma_accumulator_is_the_ptx_table():
    # mma.sync m16n8 C fragment: lane l holds c0, c1 at row l / 4, columns 2 (l % 4) + {0, 1}, and
    # c2, c3 eight rows below.
    f = tile.mma_accumulator()
    for lane in range(32):
        for r in range(4):
            assert f.at(lane // 4 + 8 * (r // 2), 2 * (lane % 4) + r % 2) == (lane, r)
    assert f.check(dense=True) == ""


def test_the_gemm_example_stores_the_accumulator_where_the_fragment_says():
    # examples/gemm_hopper.py (run on the H200) writes acc[k] of consumer thread tx to the element
    # of its warpgroup's 64 x 256 block that the fragment layout gives for register k.
    text = (ROOT / "examples" / "gemm_hopper.py").read_text()
    m = re.search(r"out\[\(tx // 128 - 1\) \* 16384 \+ (.*?)\] = T\.Cast\(\"float16\", acc\[(.*?)\]\)",
                  text)
    assert m, "the example's epilogue store"
    flat, reg = m.group(1), m.group(2)
    f = tile.wgmma_accumulator(256)
    for tx in range(128, 384, 7):
        for j in range(32):
            for h in range(2):
                for c in range(2):
                    env = {"tx": tx, "j": j, "h": h, "c": c}
                    e = eval(flat, {}, env)  # noqa: S307
                    k = eval(reg, {}, env)  # noqa: S307
                    # Four 64x64 boxes side by side: box j // 8, row-major inside.
                    box, rest = divmod(e, 4096)
                    row, col = divmod(rest, 64)
                    assert f.at(row, box * 64 + col) == (tx % 128, k)


def test_two_warpgroups_stack_their_accumulators():
    f = tile.distribute(tile.wgmma_accumulator(256), 0, 2)
    assert f.shape == (128, 256) and f.threads == 256 and f.locals == 128
    assert f.at(70, 9) == (128 + 24, 5)
    assert f.check(dense=True) == ""


def test_repeat_adds_registers_and_distribute_adds_threads():
    m = tile.mma_accumulator()
    r = tile.repeat(m, 1, 4)  # 16 x 32 on one warp
    assert (r.shape, r.threads, r.locals) == ((16, 32), 32, 16)
    assert r.at(3, 8 + 5) == (4 * 3 + 2, 4 + 1)
    d = tile.distribute(r, 0, 4)  # 64 x 32 on four warps
    assert (d.shape, d.threads, d.locals) == ((64, 32), 128, 16)
    for f in (r, d, tile.repeat(d, 0, 2)):
        assert f.check(dense=True) == ""


def test_replicated_fragment_puts_every_element_on_every_thread():
    f = tile.replicated([2, 3], 32)
    assert f.replicate == 32
    assert [f.at(1, 2, rep=r) for r in (0, 31)] == [(0, 5), (31, 5)]
    assert f.check(dense=True) == ""


@pytest.mark.parametrize("swizzle", [32, 64, 128])
@pytest.mark.parametrize("elem_bytes", [1, 2, 4, 8])
def test_swizzled_layout_is_swizzle_layouts_formula(swizzle, elem_bytes):
    rows, cols = 16, swizzle // elem_bytes * 2
    lay = tile.swizzled(rows, cols, elem_bytes, swizzle)
    shift = {1: 0, 2: 1, 4: 2, 8: 3}[elem_bytes]
    for r in range(rows):
        for c in range(cols):
            f = r * cols + c
            assert lay.at(r, c) == (f ^ (((f >> (7 - shift)) & (swizzle // 16 - 1)) << (4 - shift)),)
    assert lay.check(rows * cols) == ""


def test_128_byte_swizzle_of_fp16_is_the_hand_written_xor_that_ran_on_the_h200():
    lay = tile.swizzled(128, 64, 2, 128)
    for r in range(128):
        for c in range(64):
            assert lay.at(r, c) == (r * 64 + ((c // 8) ^ (r % 8)) * 8 + c % 8,)


def test_checks_name_what_is_wrong():
    overlap = tile.fragment([8, 8], lambda i, j, r: (i, j // 2), 8, 4)
    assert overlap.check() == "points (0, 0) and (0, 1) are both on thread 0 register 0"
    outside = tile.fragment([4, 4], lambda i, j, r: (i * 4 + j, 0), 8, 1)
    assert outside.check() == "point (2, 0) replica 0 is on thread 8 register 0, outside 8 threads x 1 registers"
    sparse = tile.fragment([4], lambda i, r: (i, 0), 8, 1)
    assert sparse.check() == ""
    assert sparse.check(dense=True) == "thread 4 register 0 holds no element"
    lay = tile.layout([4, 4], lambda i, j: [i * 4 + j // 2])
    assert lay.check(16) == "points (0, 0) and (0, 1) are both at 0"
    assert tile.layout([4], lambda i: [i + 13]).check(16) == "point (3) is at 16, outside [0, 16)"


@pytest.mark.parametrize("call,message", [
    (lambda: tile.wgmma_accumulator(12), r"n = 12 \(a multiple of 8 in \[8, 256\]\)"),
    (lambda: tile.swizzled(8, 64, 2, 48), r"swizzle 48 bytes"),
    (lambda: tile.swizzled(8, 60, 2, 128), r"a row of 60 x 2 bytes is not a multiple"),
    (lambda: tile.distribute(tile.mma_accumulator(), 2, 2), r"dimension 2 and factor 2 for a fragment of rank 2"),
    (lambda: tile.fragment([4], lambda i, r: (i, 0), 0, 1), r"threads 0"),
    (lambda: tile.mma_accumulator().at(1), r"a point of rank 1 for rank 2"),
])
def test_bad_layouts_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
