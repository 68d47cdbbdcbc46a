"""FlashAttention forward written with tile operations (examples/flash_attention.py) against
torch's scaled_dot_product_attention backends (cuDNN, flash, efficient; each where it runs) in the
same run: batch 4, 32 heads, sequence 4096, head dims 64 and 128, float16 and bfloat16, full and
causal (the issue's aim: above torch's best backend at every case). TFLOP/s counts 4 B H S^2 D
(half of it causal). Every result is checked against torch's math backend in float32 on a slice
first. The tile kernel is built up to five times: with `-fast-math` (flush-to-zero exp2,
one-instruction max, as FA3 and cuDNN compute) for key tiles of 128 and of LARGE_KEYS (176 at head
dim 128 as in FA3, 192 at 64: fewer instructions a key, more masked work at the ragged end), at
head dim 64 also with 192 query rows a block (three consumer warpgroups, FA3's shape there),
causal also with the blocks in reverse order (the longest first, FA3's order; 192 rows at head dim
64), and without fast math for 128 (IEEE exp2 with subnormals, max as the C backend's select);
"tile / best" is the fastest fast-math kernel's. torch's backends are timed first, on every case,
before any tessel kernel is built (peer_times says why). On the GPU machine:

    python3 bench/tile_attention.py [--reps 10] [--json PATH] [--seq 4096]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import tessel  # noqa: E402
from cuda_bench import cuda_time  # noqa: E402
from test_tile_attention import attention_text  # noqa: E402

LARGE_KEYS = {64: 192, 128: 176}
BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


CASES = [(dtype, d, causal) for dtype in ("float16", "bfloat16") for d in (64, 128)
         for causal in (False, True)]


def peer_times(b, h, s, reps):
    """torch's backends on every case, all before any tessel kernel is built: once tessel had
    lowered a tile kernel for sm_90a in the process, cuDNN's SDPA raised std::bad_alloc when it
    built its first graph (seen on the H200, with and without Z3; see docs/performance.md)."""
    out = {}
    for dtype, d, causal in CASES:
        t = getattr(torch, dtype)
        q, k, v = (torch.randn(b, h, s, d, device="cuda").to(t) for _ in range(3))
        peers = {}
        for name, backend in BACKENDS.items():
            try:
                with sdpa_kernel(backend):
                    peers[name] = cuda_time(
                        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps)
            except RuntimeError as e:
                # A backend that does not run here is a "-" in the table, and says why.
                print(f"{name} did not run ({dtype}, D {d}, {'causal' if causal else 'full'}): "
                      f"{str(e).splitlines()[0]}", file=sys.stderr)
                peers[name] = None
        out[(dtype, d, causal)] = peers
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    b, h, s = 4, 32, args.seq
    all_peers = peer_times(b, h, s, args.reps)
    rows = []
    print("| dtype | D | mask | tile TFLOP/s (keys 128) | tile TFLOP/s (keys 176 / 192) | "
          "tile TFLOP/s (192 rows, 3 warpgroups) | tile TFLOP/s (causal: longest blocks first) | "
          "tile (IEEE, keys 128) TFLOP/s | " +
          " | ".join(f"{k} TFLOP/s" for k in BACKENDS) + " | tile / best |")
    print("|---|---|---|---|---|---|---|---|" + "---|" * len(BACKENDS) + "---|")
    for dtype, d, causal in CASES:
        t = getattr(torch, dtype)
        q, k, v = (torch.randn(b, h, s, d, device="cuda").to(t) for _ in range(3))
        o = torch.empty_like(q)
        want = F.scaled_dot_product_attention(q[:1, :2].float(), k[:1, :2].float(),
                                              v[:1, :2].float(), is_causal=causal)
        flops = 4.0 * b * h * s * s * d / (2 if causal else 1)
        # (fast math, key tile, query rows, blocks reversed); None where it does not apply.
        best_rows = 192 if d == 64 else 128
        configs = [(" -fast-math", 128, 128, False), (" -fast-math", LARGE_KEYS[d], 128, False),
                   (" -fast-math", 128, 192, False) if d == 64 else None,
                   (" -fast-math", 128, best_rows, True) if causal else None,
                   ("", 128, 128, False)]
        times = []
        for config in configs:
            if config is None:
                times.append(None)
                continue
            fm, keys, qrows, reverse = config
            f = tessel.build(attention_text(d, dtype, causal, keys=keys, rows=qrows,
                                            reverse=reverse),
                             target="cuda -arch=sm_90a" + fm)["flash_attention"]
            o.fill_(float("nan"))
            f(q, k, v, o)
            torch.testing.assert_close(o[:1, :2].float(), want, atol=2e-2, rtol=2e-2)
            times.append(cuda_time(lambda: f(q, k, v, o), args.reps))
        ours = min(x for x in times[:4] if x is not None)
        peers = all_peers[(dtype, d, causal)]
        best = min(x for x in peers.values() if x is not None)

        def tf(x):
            return flops / x / 1e12 if x else None

        row = {"dtype": dtype, "d": d, "causal": causal, "tile_tflops": tf(ours),
               "tile_keys128_tflops": tf(times[0]), "tile_large_keys_tflops": tf(times[1]),
               "tile_rows192_tflops": tf(times[2]), "tile_reversed_tflops": tf(times[3]),
               "tile_ieee_tflops": tf(times[4]),
               **{f"{k}_tflops": tf(x) for k, x in peers.items()}}
        rows.append(row)
        cells = " | ".join(f"{tf(x):.1f}" if x else "-" for x in times + list(peers.values()))
        print(f"| {dtype} | {d} | {'causal' if causal else 'full'} | {cells} | "
              f"{best / ours:.3f} |", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
