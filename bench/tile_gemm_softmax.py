"""The fused matmul + row softmax written with tile operations (examples/gemm_softmax.py: Y =
softmax(A @ B.T) by rows, N <= 256, the product never stored) against torch doing the same in two
calls (cuBLAS matmul, then torch.softmax) in the same run, float16, on the GPU machine. Each result
is checked against torch first; each figure is the median of `--reps` event-timed calls. The
table gives both times, the tile kernel's speed-up, and its TFLOP/s (2 M N K).

    python3 bench/tile_gemm_softmax.py [--reps 50] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402

import tessel  # noqa: E402
from cuda_bench import cuda_time  # noqa: E402

# (M, N, K): many rows scored against a small set (a classifier head, keys of a short context).
SHAPES = [(65536, 256, 1024), (65536, 128, 4096), (16384, 256, 4096), (131072, 64, 512)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    f = tessel.build((ROOT / "examples" / "gemm_softmax.py").read_text(),
                     target="cuda -arch=sm_90a")["gemm_softmax"]
    rows = []
    print("| M x N x K | tile us | torch matmul + softmax us | speed-up | tile TFLOP/s |")
    print("|---|---|---|---|---|")
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda").half() / k**0.25
        b = torch.randn(n, k, device="cuda").half() / k**0.25
        y = torch.empty(m, n, device="cuda").half()
        # torch first: a cuBLAS call after a tessel kernel has failed with std::bad_alloc in this
        # process (docs/performance.md, "Measured but not explained").
        want = torch.softmax((a @ b.T).float(), dim=1)
        peer = cuda_time(lambda: torch.softmax(a @ b.T, dim=1), args.reps)
        f(a, b, y)
        torch.testing.assert_close(y.float(), want, atol=2e-3, rtol=2e-2)
        ours = cuda_time(lambda: f(a, b, y), args.reps)
        tflops = 2.0 * m * n * k / ours / 1e12
        rows.append({"m": m, "n": n, "k": k, "tile_us": ours * 1e6, "torch_us": peer * 1e6,
                     "tile_tflops": tflops})
        print(f"| {m} x {n} x {k} | {ours * 1e6:.1f} | {peer * 1e6:.1f} | {peer / ours:.2f} | "
              f"{tflops:.0f} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
