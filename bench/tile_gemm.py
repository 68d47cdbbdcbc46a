"""The GEMM written with tile operations (examples/tile_gemm_hopper.py, 14 lines of kernel code)
against the hand-written Hopper GEMM of examples/gemm_hopper.py and cuBLAS (torch.matmul) in the
same run: C = A @ B.T in float16 and bfloat16 (float32 accumulation, output in the input type),
at 4096^3 and 8192^3 and a shape no tile divides; the bias + GELU variant
(examples/tile_gemm_gelu.py) against torch's addmm + gelu; and the compile time of the tile
examples, source to loaded module, with a cold and a warm cache. Every result is checked against
torch first; each figure is the better of two interleaved rounds of 30 event-timed calls (median
each). On the GPU machine:

    python3 bench/tile_gemm.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tessel  # noqa: E402
from cuda_bench import cuda_time  # noqa: E402
from hopper_gemm import gemm_text  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (3000, 5000, 2000)]
TARGET = "cuda -arch=sm_90a"


def example(name: str, dtype: str = "float16") -> str:
    return (ROOT / "examples" / f"{name}.py").read_text().replace('"float16"', f'"{dtype}"')


def compile_times() -> list[dict]:
    rows = []
    for name in ("tile_gemm_hopper", "tile_gemm_gelu", "gemm_hopper"):
        text = (ROOT / "examples" / f"{name}.py").read_text()
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TESSEL_CACHE_DIR"] = cache
            start = time.perf_counter()
            tessel.build(text, target=TARGET)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            tessel.build(text, target=TARGET)
            warm = time.perf_counter() - start
        os.environ.pop("TESSEL_CACHE_DIR")
        rows.append({"kernel": name, "cold_s": cold, "warm_s": warm})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="4096^3 and 8192^3 only")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    shapes = SHAPES[:2] if args.quick else SHAPES
    out = {"gemm": [], "gelu": [], "compile": []}
    print("| dtype | M x N x K | tile TFLOP/s | hand-written TFLOP/s | cuBLAS TFLOP/s | tile / "
          "hand-written | tile / cuBLAS | spread |")
    print("|---|---|---|---|---|---|---|---|")
    for dtype in ("float16", "bfloat16"):
        t = getattr(torch, dtype)
        tile = tessel.build(example("tile_gemm_hopper", dtype), target=TARGET)["tile_gemm_hopper"]
        hand = tessel.build(gemm_text(dtype), target=TARGET)["gemm_hopper"]
        for m, n, k in shapes:
            a = torch.randn(m, k, device="cuda").to(t)
            b = torch.randn(n, k, device="cuda").to(t)
            c = torch.empty(m, n, device="cuda", dtype=t)
            ch = torch.empty(m, n, device="cuda", dtype=t)
            tile(a, b, c)
            hand(a, b, ch)
            ref = (a.float() @ b.float().T).to(t)
            torch.testing.assert_close(c.float(), ref.float(), rtol=2e-2, atol=2e-1)
            torch.testing.assert_close(ch.float(), ref.float(), rtol=2e-2, atol=2e-1)
            fl = 2.0 * m * n * k
            rounds = []
            for _ in range(2):
                rounds.append((cuda_time(lambda: tile(a, b, c), 30),
                               cuda_time(lambda: hand(a, b, ch), 30),
                               cuda_time(lambda: torch.matmul(a, b.T), 30)))
            ours, handt, cublas = (min(r[i] for r in rounds) for i in range(3))
            spread = max(abs(rounds[0][i] - rounds[1][i]) / min(rounds[0][i], rounds[1][i])
                         for i in range(3))
            row = {"dtype": dtype, "shape": [m, n, k], "tile_tflops": fl / ours / 1e12,
                   "hand_tflops": fl / handt / 1e12, "cublas_tflops": fl / cublas / 1e12,
                   "spread": spread}
            out["gemm"].append(row)
            print(f"| {dtype} | {m} x {n} x {k} | {row['tile_tflops']:.1f} | "
                  f"{row['hand_tflops']:.1f} | {row['cublas_tflops']:.1f} | {handt / ours:.3f} | "
                  f"{cublas / ours:.3f} | {spread * 100:.1f}% |", flush=True)
    gelu = tessel.build(example("tile_gemm_gelu"), target=TARGET)["tile_gemm_gelu"]
    print("\n| fp16, C = gelu(A @ B.T + bias) | tile TFLOP/s | torch addmm + gelu TFLOP/s | ratio |")
    print("|---|---|---|---|")
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda").half()
        b = torch.randn(n, k, device="cuda").half()
        bias = torch.randn(n, device="cuda").half()
        c = torch.empty(m, n, device="cuda").half()
        gelu(a, b, bias, c)
        ref = F.gelu(a.float() @ b.float().T + bias.float(), approximate="tanh").half()
        torch.testing.assert_close(c.float(), ref.float(), rtol=2e-2, atol=2e-1)
        fl = 2.0 * m * n * k
        ours = cuda_time(lambda: gelu(a, b, bias, c), 30)
        peer = cuda_time(lambda: F.gelu(torch.addmm(bias, a, b.T), approximate="tanh"), 30)
        out["gelu"].append({"shape": [m, n, k], "tile_tflops": fl / ours / 1e12,
                            "torch_tflops": fl / peer / 1e12})
        print(f"| {m} x {n} x {k} | {fl / ours / 1e12:.1f} | {fl / peer / 1e12:.1f} | "
              f"{peer / ours:.3f} |", flush=True)
    print("\n| kernel | compile, cold cache (s) | warm cache (s) |")
    print("|---|---|---|")
    for row in compile_times():
        out["compile"].append(row)
        print(f"| {row['kernel']} | {row['cold_s']:.3f} | {row['warm_s']:.3f} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
