"""The first hand-written Hopper GEMM of tests/python/test_hopper_builtins.py (cp.async ring into
wgmma m64n128k16, no TMA, no swizzle, not warp-specialized, not persistent) against cuBLAS fp16
(torch.matmul) at 4096^3 and 8192^3, on the GPU machine:

    python3 bench/hopper_gemm.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests" / "python"))

import torch  # noqa: E402

import tessel  # noqa: E402
from cuda_bench import cuda_time  # noqa: E402
from test_hopper_builtins import GEMM, GEMM_SW128, GEMM_SW128_N256, gemm_text  # noqa: E402


def timed(fn):
    return cuda_time(fn, 20)


def main() -> int:
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda").half()
        w = torch.randn(n, n, device="cuda").half()
        c = torch.empty(n, n, device="cuda")
        ref = timed(lambda: torch.matmul(a, w.T))
        fl = 2.0 * n ** 3
        for name, text, stage_list in (("plain", GEMM, (3, 4)), ("sw128", GEMM_SW128, (4, 5)),
                                       ("sw128, 128x256 tiles", GEMM_SW128_N256, (3, 4))):
            best = None
            for stages in stage_list:
                f = tessel.build(gemm_text(n, n, n, stages, text),
                                 target="cuda -arch=sm_90a")["gemm"]
                f(a, w, c)
                torch.testing.assert_close(c, a.float() @ w.float().T, rtol=2e-3, atol=5e-2)
                t = timed(lambda: f(a, w, c))
                best = (t, stages) if best is None or t < best[0] else best
            print(f"fp16 GEMM {n}^3 (A @ W.T), {name}: tessel {fl / best[0] / 1e12:.1f} TFLOP/s "
                  f"({best[1]} stages), cuBLAS {fl / ref / 1e12:.1f} TFLOP/s, "
                  f"ratio {ref / best[0]:.3f}")
        ab, wb = a.bfloat16(), w.bfloat16()
        f = tessel.build(gemm_text(n, n, n, 4, GEMM_SW128_N256, "bfloat16"),
                         target="cuda -arch=sm_90a")["gemm"]
        f(ab, wb, c)
        torch.testing.assert_close(c, ab.float() @ wb.float().T, rtol=1e-2, atol=1e-1)
        t = timed(lambda: f(ab, wb, c))
        ref_b = timed(lambda: torch.matmul(ab, wb.T))
        print(f"bf16 GEMM {n}^3 (A @ W.T), sw128, 128x256 tiles: tessel {fl / t / 1e12:.1f} "
              f"TFLOP/s, cuBLAS {fl / ref_b / 1e12:.1f} TFLOP/s, ratio {ref_b / t:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
