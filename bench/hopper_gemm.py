"""The Hopper GEMM of examples/gemm_hopper.py (TMA, mbarriers, wgmma m64n256k16, warp-specialized,
persistent with grouped rasterization) against cuBLAS (torch.matmul) and a Triton GEMM (its
tutorial kernel, autotuned over Hopper-sized tiles) in the same run, C = A @ W.T in float16 and
bfloat16 (float32 accumulation, output in the input type), at 4096^3, 8192^3 and shapes no tile
divides (the last has odd N and K: the example's CUDA-core fallback). Every result is checked
against torch first; each figure is the better of two interleaved rounds of 30 event-timed calls
(median each), and the last column is the largest spread between the rounds. On the GPU machine:

    python3 bench/hopper_gemm.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "python"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import tessel  # noqa: E402
from cuda_bench import cuda_time  # noqa: E402

SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4000, 4000, 4000), (8192, 1000, 4096),
          (1000, 8192, 4096), (3000, 5000, 2000), (4096, 4096, 1000), (2047, 2049, 2051)]


def gemm_text(dtype: str) -> str:
    text = (ROOT / "examples" / "gemm_hopper.py").read_text()
    if dtype == "bfloat16":
        text = text.replace('"float16"', '"bfloat16"').replace('"f16", 0, 0)', '"bf16", 0, 0)')
    return text


@triton.autotune(
    configs=[triton.Config({"BM": 128, "BN": 256, "BK": 64}, num_stages=3, num_warps=8),
             triton.Config({"BM": 128, "BN": 128, "BK": 64}, num_stages=4, num_warps=4),
             triton.Config({"BM": 128, "BN": 256, "BK": 64}, num_stages=4, num_warps=8)],
    key=["M", "N", "K"])
@triton.jit
def triton_gemm(a_ptr, w_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    group = 8 * grid_n
    first_m = pid // group * 8
    rows = min(tl.cdiv(M, BM) - first_m, 8)
    pm = first_m + (pid % group) % rows
    pn = (pid % group) // rows
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :],
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[None, :] * K + kk[:, None],
                    mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc += tl.dot(a, w)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def run_triton(a, w, c):
    m, k = a.shape
    n = w.shape[0]
    grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)  # noqa: E731
    triton_gemm[grid](a, w, c, m, n, k)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="4096^3 and 8192^3 only")
    parser.add_argument("--fused-only", action="store_true", help="only the bias + ReLU epilogue")
    args = parser.parse_args()
    shapes = [] if args.fused_only else SHAPES[:2] if args.quick else SHAPES
    print("| dtype | M x N x K | tessel TFLOP/s | cuBLAS TFLOP/s | Triton TFLOP/s | tessel / cuBLAS "
          "| spread between rounds |")
    print("|---|---|---|---|---|---|---|")
    for dtype in ("float16", "bfloat16"):
        t = getattr(torch, dtype)
        f = tessel.build(gemm_text(dtype), target="cuda -arch=sm_90a")["gemm_hopper"]
        for m, n, k in shapes:
            a = torch.randn(m, k, device="cuda").to(t)
            w = torch.randn(n, k, device="cuda").to(t)
            c = torch.empty(m, n, device="cuda", dtype=t)
            ct = torch.empty(m, n, device="cuda", dtype=t)
            f(a, w, c)
            # Against float32 arithmetic: cuBLAS's own bf16 result at odd K was off by 0.53 (it
            # may reduce in 16 bits).
            ref = (a.float() @ w.float().T).to(t)
            torch.testing.assert_close(c.float(), ref.float(), rtol=2e-2, atol=2e-1)
            run_triton(a, w, ct)
            torch.testing.assert_close(ct.float(), ref.float(), rtol=2e-2, atol=2e-1)
            fl = 2.0 * m * n * k
            # Two interleaved rounds: a gap between versions below the spread between rounds is
            # noise.
            rounds = []
            for _ in range(2):
                rounds.append((cuda_time(lambda: f(a, w, c), 30),
                               cuda_time(lambda: torch.matmul(a, w.T), 30),
                               cuda_time(lambda: run_triton(a, w, ct), 30)))
            ours, cublas, tri = (min(r[i] for r in rounds) for i in range(3))
            spread = max(abs(rounds[0][i] - rounds[1][i]) / min(rounds[0][i], rounds[1][i])
                         for i in range(3))
            print(f"| {dtype} | {m} x {n} x {k} | {fl / ours / 1e12:.1f} | {fl / cublas / 1e12:.1f} | "
                  f"{fl / tri / 1e12:.1f} | {cublas / ours:.3f} | {spread * 100:.1f}% |", flush=True)
    # The fused epilogue written over the accumulator fragment (tests/python/test_tma.py), against
    # torch's addmm (cuBLASLt, bias fused) followed by relu.
    from test_tma import with_bias_relu  # noqa: E402

    f = tessel.build(with_bias_relu(gemm_text("float16")), target="cuda -arch=sm_90a")["gemm_hopper"]
    print("\n| fp16, C = relu(A @ W.T + bias) | tessel TFLOP/s | torch addmm + relu TFLOP/s | ratio |")
    print("|---|---|---|---|")
    for m, n, k in SHAPES[:2]:
        a = torch.randn(m, k, device="cuda").half()
        w = torch.randn(n, k, device="cuda").half()
        bias = torch.randn(n, device="cuda")
        c = torch.empty(m, n, device="cuda").half()
        f(a, w, c, bias)
        # Against float32 arithmetic: torch's own fp16 addmm may reduce in fp16 (cuBLAS split-K
        # under allow_fp16_reduced_precision_reduction) and is off by more than tessel.
        ref = torch.relu(a.float() @ w.float().T + bias).half()
        torch.testing.assert_close(c.float(), ref.float(), rtol=2e-2, atol=2e-1)
        fl = 2.0 * m * n * k
        ours = cuda_time(lambda: f(a, w, c, bias), 30)
        bh = bias.half()
        peer = cuda_time(lambda: torch.relu(torch.addmm(bh, a, w.T)), 30)
        print(f"| {m} x {n} x {k} | {fl / ours / 1e12:.1f} | {fl / peer / 1e12:.1f} | "
              f"{peer / ours:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
