"""Runs each kernel of issue 15 once on small shapes that no tile divides (the Hopper GEMM, a TMA
copy, and the row softmax / LayerNorm / RMSNorm at one shape per kernel of their row-length
dispatch), so that compute-sanitizer can watch them. On the GPU machine:

    compute-sanitizer --tool memcheck python3 bench/gpu_sanitize.py
    compute-sanitizer --tool racecheck python3 bench/gpu_sanitize.py

It checks each result against torch too; the sanitizer's summary line is the verdict.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "python"))

import torch  # noqa: E402

import tessel  # noqa: E402
from hopper_gemm import gemm_text  # noqa: E402
from test_tma import COPY  # noqa: E402


def main() -> int:
    for dtype in ("float16", "bfloat16"):
        t = getattr(torch, dtype)
        f = tessel.build(gemm_text(dtype), target="cuda -arch=sm_90a")["gemm_hopper"]
        for m, n, k in ((200, 264, 136), (130, 520, 72), (33, 7, 5)):
            a = torch.randn(m, k, device="cuda").to(t)
            w = torch.randn(n, k, device="cuda").to(t)
            c = torch.empty(m, n, device="cuda", dtype=t)
            f(a, w, c)
            torch.testing.assert_close(c.float(), (a.float() @ w.float().T).to(t).float(),
                                       rtol=2e-2, atol=2e-1)
            print(f"gemm_hopper {dtype} {m}x{n}x{k}: ok", flush=True)
    copy = tessel.build(COPY, target="cuda -arch=sm_90")["tma_copy"]
    a = torch.randn(100, 72, device="cuda")
    b = torch.empty_like(a)
    copy(a, b)
    torch.testing.assert_close(b, a * 2)
    print("tma_copy 100x72: ok", flush=True)
    F = torch.nn.functional
    for name, op in (("softmax_gpu_fast", "softmax_fast"), ("layernorm_gpu", "layernorm"),
                     ("rmsnorm_gpu", "rmsnorm")):
        mod = tessel.build((ROOT / "examples" / f"{name}.py").read_text(), target="cuda -arch=sm_90")
        for dtype, short in (("float32", "f32"), ("float16", "f16"), ("bfloat16", "bf16")):
            t = getattr(torch, dtype)
            # One shape per kernel of the row-length dispatch, ragged ones included.
            for rows, m in ((5, 1000), (3, 4096), (2, 8192), (2, 32768), (3, 33), (2, 40000)):
                x = torch.randn(rows, m, device="cuda").to(t)
                y = torch.empty_like(x)
                w = torch.randn(m, device="cuda").to(t)
                b = torch.randn(m, device="cuda").to(t)
                if op == "softmax_fast":
                    mod[f"{op}_{short}"](x, y)
                    ref = torch.softmax(x.float(), dim=1)
                elif op == "layernorm":
                    mod[f"{op}_{short}"](x, w, b, y)
                    ref = F.layer_norm(x.float(), (m,), w.float(), b.float(), 1e-5)
                else:
                    mod[f"{op}_{short}"](x, w, y)
                    ref = F.rms_norm(x.float(), (m,), w.float(), 1e-6)
                torch.testing.assert_close(y.float(), ref, rtol=2e-2, atol=2e-2)
            print(f"{op} {dtype}: ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
