"""The tile GEMM on mma.sync (src/transform/tile_mma.h): the 14-line tile program of
examples/tile_gemm_hopper.py (C = A @ B.T, float32 accumulation, output in the input type) built
for CUDA sm_90, which is not sm_90a, so T.gemm runs as ldmatrix + mma.sync m16n8k16 with cp.async
copies, the form sm_80 / sm_86 / sm_89 GPUs get. Peers in the same run: Triton 3.x made to use
mma.sync too (DISABLE_MMA_V3=1, the best of three block configurations), and cuBLAS
(torch.matmul, which uses wgmma on this GPU: the Hopper ceiling, not a like-for-like peer). Every
result is checked against torch first; each figure is the better of two rounds of 30 event-timed
calls (median each). With symbolic M, N and K the launch runs the kernel specialized for K and N
divisible by 8 (src/transform/tile_divisible.h), as Triton specializes sizes divisible by 16; the
tile program is also built with M, N and K constant (as a TileLang user's JIT does), for
comparison. On the GPU machine:

    python3 bench/tile_gemm_mma.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

# Read by Triton when it compiles: mma.sync (MMA v2) instead of wgmma (v3).
os.environ["DISABLE_MMA_V3"] = "1"
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-mma-")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tessel  # noqa: E402
from cuda_bench import cuda_time  # noqa: E402

TARGET = "cuda -arch=sm_90"
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]
# Block M, N, K, threads, stages of the tile program.
TILES = [(128, 128, 32, 128, 4), (128, 256, 32, 256, 3), (128, 128, 64, 128, 3)]


def tile_text(dtype: str, bm: int, bn: int, bk: int, threads: int, stages: int,
              shape: tuple[int, int, int] | None = None) -> str:
    """The example with these tiles; with `shape`, M, N and K are those constants (the copies
    then need no run-time bounds or alignment tests where the tiles divide them)."""
    text = (ROOT / "examples" / "tile_gemm_hopper.py").read_text().replace('"float16"',
                                                                           f'"{dtype}"')
    if shape is not None:
        m, n, k = shape
        text = (text.replace("(M, K)", f"({m}, {k})").replace("(N, K)", f"({n}, {k})")
                .replace("(M, N)", f"({m}, {n})").replace("T.ceildiv(N, 256)", str(-(-n // bn)))
                .replace("T.ceildiv(M, 128)", str(-(-m // bm)))
                .replace("T.ceildiv(K, 64)", str(-(-k // bk))))
    for old, new in [("T.ceildiv(N, 256)", f"T.ceildiv(N, {bn})"),
                     ("T.ceildiv(M, 128)", f"T.ceildiv(M, {bm})"), ("threads=256", f"threads={threads}"),
                     ("(128, 64)", f"({bm}, {bk})"), ("(256, 64)", f"({bn}, {bk})"),
                     ("(128, 256)", f"({bm}, {bn})"), ("T.ceildiv(K, 64)", f"T.ceildiv(K, {bk})"),
                     ("num_stages=3", f"num_stages={stages}"), ("by * 128", f"by * {bm}"),
                     ("bx * 256", f"bx * {bn}"), ("ko * 64", f"ko * {bk}")]:
        text = text.replace(old, new)
    return text


@triton.jit
def triton_gemm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr, GROUP: tl.constexpr):
    # C = A @ B.T, A (M, K), B (N, K), row-major; blocks in groups of GROUP rows for L2 reuse.
    pid = tl.program_id(0)
    blocks_m, blocks_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = pid // (GROUP * blocks_n)
    first_m = group * GROUP
    rows = min(blocks_m - first_m, GROUP)
    pm = first_m + (pid % (GROUP * blocks_n)) % rows
    pn = (pid % (GROUP * blocks_n)) // rows
    offs_m = pm * BM + tl.arange(0, BM)
    offs_n = pn * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :],
                    mask=(offs_m[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + offs_n[None, :] * K + kk[:, None],
                    mask=(offs_n[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc = tl.dot(a, b, acc)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], c,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


TRITON_CONFIGS = [(128, 128, 32, 4, 4), (128, 256, 32, 8, 3), (128, 128, 64, 4, 3)]


def triton_call(a, b, c, bm, bn, bk, warps, stages):
    m, k = a.shape
    n = b.shape[0]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    return lambda: triton_gemm[grid](a, b, c, m, n, k, BM=bm, BN=bn, BK=bk, GROUP=8,
                                     num_warps=warps, num_stages=stages)


def best_of_two(fn) -> float:
    return min(cuda_time(fn, 30) for _ in range(2))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out = []
    print("| dtype | M x N x K | tile mma.sync TFLOP/s (best tile) | same, constant M, N, K | "
          "Triton mma.sync TFLOP/s (best config) | cuBLAS (wgmma) TFLOP/s | tile / Triton | "
          "constant / Triton |")
    print("|---|---|---|---|---|---|---|---|")
    for dtype in ("float16", "bfloat16"):
        t = getattr(torch, dtype)
        kernels = []
        for tile in TILES:
            mod = tessel.build(tile_text(dtype, *tile), target=TARGET)
            assert "mma.sync" in mod.get_source("cuda")
            kernels.append((tile, mod["tile_gemm_hopper"]))
        for m, n, k in SHAPES:
            a = torch.randn(m, k, device="cuda").to(t)
            b = torch.randn(n, k, device="cuda").to(t)
            ref = (a.float() @ b.float().T).to(t).float()
            fl = 2.0 * m * n * k
            ours = {}
            for tile, fn in kernels:
                c = torch.full((m, n), float("nan"), device="cuda", dtype=t)
                fn(a, b, c)
                torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=2e-1)
                ours[tile] = best_of_two(lambda: fn(a, b, c))
            peers = {}
            for cfg in TRITON_CONFIGS:
                c = torch.full((m, n), float("nan"), device="cuda", dtype=t)
                call = triton_call(a, b, c, *cfg)
                call()
                torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=2e-1)
                peers[cfg] = best_of_two(call)
            fixed = {}
            for tile in TILES:
                fn = tessel.build(tile_text(dtype, *tile, shape=(m, n, k)),
                                  target=TARGET)["tile_gemm_hopper"]
                c = torch.full((m, n), float("nan"), device="cuda", dtype=t)
                fn(a, b, c)
                torch.testing.assert_close(c.float(), ref, rtol=2e-2, atol=2e-1)
                fixed[tile] = best_of_two(lambda: fn(a, b, c))
            cublas = best_of_two(lambda: torch.matmul(a, b.T))
            best_fixed = min(fixed, key=fixed.get)
            tile = min(ours, key=ours.get)
            cfg = min(peers, key=peers.get)
            row = {"dtype": dtype, "shape": [m, n, k],
                   "tile": {str(x): fl / y / 1e12 for x, y in ours.items()},
                   "tile_constant_shape": {str(x): fl / y / 1e12 for x, y in fixed.items()},
                   "triton": {str(x): fl / y / 1e12 for x, y in peers.items()},
                   "cublas_tflops": fl / cublas / 1e12}
            out.append(row)
            print(f"| {dtype} | {m} x {n} x {k} | {fl / ours[tile] / 1e12:.1f} {tile} | "
                  f"{fl / fixed[best_fixed] / 1e12:.1f} {best_fixed} | "
                  f"{fl / peers[cfg] / 1e12:.1f} {cfg} | {fl / cublas / 1e12:.1f} | "
                  f"{peers[cfg] / ours[tile]:.3f} | {peers[cfg] / fixed[best_fixed]:.3f} |",
                  flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
