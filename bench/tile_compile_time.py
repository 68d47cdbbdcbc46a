"""Compile time of the tile examples for `cuda -arch=sm_90a`, source text to a loaded module
(`tessel.build`: parse, layout inference, lowering, CUDA and host code generation, NVRTC, the host
C compiler, loading the library), with a cold build cache (a fresh TESSEL_CACHE_DIR) and then
warm (the same build again). Needs NVRTC or nvcc, not a GPU: the cubin is loaded onto the GPU at
the first call, which is not timed. Each figure is the median of --reps cold/warm pairs.

    python3 bench/tile_compile_time.py [--reps 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "python"))

import tessel  # noqa: E402
from test_tile_attention import attention_text  # noqa: E402


def kernels() -> dict[str, tuple[str, str]]:
    gemm = (ROOT / "examples" / "tile_gemm_hopper.py").read_text()
    out = {"tile_gemm_hopper (fp16)": (gemm, "cuda -arch=sm_90a")}
    for d in (64, 128):
        for causal in (False, True):
            name = f"flash_attention D{d} {'causal' if causal else 'full'} (fp16, -fast-math)"
            out[name] = (attention_text(d, "float16", causal), "cuda -arch=sm_90a -fast-math")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    print("| kernel | cold cache (s) | warm cache (s) |")
    print("|---|---|---|")
    for name, (text, target) in kernels().items():
        cold, warm = [], []
        for _ in range(args.reps):
            with tempfile.TemporaryDirectory() as cache:
                os.environ["TESSEL_CACHE_DIR"] = cache
                start = time.perf_counter()
                tessel.build(text, target=target)
                cold.append(time.perf_counter() - start)
                start = time.perf_counter()
                tessel.build(text, target=target)
                warm.append(time.perf_counter() - start)
            os.environ.pop("TESSEL_CACHE_DIR")
        print(f"| {name} | {statistics.median(cold):.3f} | {statistics.median(warm):.3f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
