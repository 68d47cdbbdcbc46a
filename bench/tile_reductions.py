"""Row softmax, LayerNorm and RMSNorm written with tile operations (issue 16) against the
hand-written kernels of issue 15 (examples/softmax_gpu_fast.py, layernorm_gpu.py, rmsnorm_gpu.py,
made by bench/cuda_reductions.py), torch (torch.softmax, F.layer_norm, F.rms_norm) and the device's
copy bandwidth (torch `copy_` of a tensor of the same size), on rows of 1024, 4096, 8192 and 32768
elements in float32, float16 and bfloat16.

The tile kernels are examples/softmax_tile.py, layernorm_tile.py and rmsnorm_tile.py (4096-wide
float16 rows, one row a block, 128 threads) with the row length, rows per block, thread count and
dtype replaced (`tile_text`). For each shape, every configuration of `CONFIGS` is built and timed;
the table shows the first one (`default`) and the fastest (`best`, with its rows x threads); the
JSON has them all.

How to run, on the GPU machine (PyTorch with CUDA; Triton not needed): from the repository root,
`python bench/tile_reductions.py --json tile_reductions.json` (options: `--arch sm_90` (default),
`--ops softmax,layernorm,rmsnorm`, `--dtypes float32,float16,bfloat16`, `--reps 20`). It builds
the 117 tile kernels first (`--jobs` processes; cached by tessel afterwards), then prints one line per case
as it goes and, at the end, a Markdown table per op: tile us and its fraction of copy bandwidth,
the hand-written kernel's us and fraction, tile speed relative to hand-written and to torch, and
the best configuration; then "N wrong results" (nonzero exit when any result disagrees with
torch). Timing is bench/cuda_bench.py's `cuda_time` (median of CUDA-event-timed calls).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import cuda_reductions as hand  # noqa: E402  (stdlib-only at import)

FILES = {"softmax": "softmax_tile", "layernorm": "layernorm_tile", "rmsnorm": "rmsnorm_tile"}

# (rows per block, threads) to try for each row length; the first is the default. Each thread
# holds rows * m / threads float32 values of the row. A block of one warp (1, 32) needs no barrier:
# its reductions are shuffles only.
CONFIGS = {
    1024: [(1, 128), (1, 256), (4, 128), (2, 256), (1, 32)],
    4096: [(1, 128), (1, 256), (1, 512)],
    8192: [(1, 256), (1, 512), (1, 1024)],
    32768: [(1, 1024), (1, 512)],
}


def tile_text(op: str, m: int = 4096, rows: int = 1, threads: int = 128,
              dtype: str = "float16") -> str:
    """examples/<op>_tile.py for rows of m elements of `dtype`, `rows` rows a block, `threads`
    threads a block."""
    text = (ROOT / "examples" / f"{FILES[op]}.py").read_text()
    for old, new in [("4096", str(m)), (f"(1, {m})", f"({rows}, {m})"), ("(1,)", f"({rows},)"),
                     ("T.ceildiv(M, 1)", f"T.ceildiv(M, {rows})"), ("bx * 1", f"bx * {rows}"),
                     ("threads=128", f"threads={threads}"), ('"float16"', f'"{dtype}"')]:
        if old not in text:
            raise ValueError(f"examples/{FILES[op]}.py no longer holds {old!r}; update tile_text")
        text = text.replace(old, new)
    return text


def _prebuild(job):
    sys.path.insert(0, str(ROOT / "python"))
    import tessel

    try:
        tessel.build(job[0], target=job[1])
    except Exception as e:  # the timing loop builds it again and reports the error there
        print(f"prebuild failed: {e}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--ops", default="softmax,layernorm,rmsnorm")
    ap.add_argument("--dtypes", default=",".join(hand.DTYPES))
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=8, help="build processes first (0: none)")
    ap.add_argument("--json", help="write every timing (seconds) here")
    args = ap.parse_args()

    import torch

    sys.path.insert(0, str(ROOT / "python"))
    import tessel
    from cuda_bench import cuda_time

    target = f"cuda -arch={args.arch}"
    ops, dtypes = args.ops.split(","), args.dtypes.split(",")
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"date {time.strftime('%Y-%m-%d %H:%M')}; target {target}")
    texts = {(op, m, r, t, dt): tile_text(op, m, r, t, dt)
             for op in ops for _, m in hand.SHAPES for r, t in CONFIGS[m] for dt in dtypes}
    if args.jobs:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        start = time.perf_counter()
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=ctx) as pool:
            list(pool.map(_prebuild, [(text, target) for text in texts.values()]))
        print(f"prebuilt {len(texts)} tile kernels in {time.perf_counter() - start:.1f} s",
              flush=True)
    records, failures = [], 0
    for op in ops:
        file, name = hand.EXAMPLES[op]
        hand_mod = tessel.build((ROOT / "examples" / f"{file}.py").read_text(), target=target)
        ref = hand.torch_reference(op)
        for dtype in dtypes:
            tdt = getattr(torch, dtype)
            fh = hand_mod[f"{name}_{hand.SHORT[dtype]}"]
            for n, m in hand.SHAPES:
                ins, y = hand.make_args(op, n, m, tdt)
                want = ref(*ins)
                nbytes = 2 * y.numel() * y.element_size()
                src = torch.empty_like(y)
                t_copy = cuda_time(lambda: src.copy_(y), args.reps)
                t_torch = cuda_time(lambda: ref(*ins), args.reps)
                y.fill_(float("nan"))
                fh(*ins, y)
                torch.cuda.synchronize()
                h_ok, h_err = hand.close(y, want, dtype)
                t_hand = cuda_time(lambda: fh(*ins, y), args.reps)
                tiles = {}
                for rows, threads in CONFIGS[m]:
                    tag = f"{rows}x{threads}"
                    fn = tessel.build(texts[(op, m, rows, threads, dtype)],
                                      target=target)[FILES[op]]
                    yt = torch.empty_like(y).fill_(float("nan"))
                    fn(*ins, yt)
                    torch.cuda.synchronize()
                    ok, err = hand.close(yt, want, dtype)
                    failures += not ok
                    tiles[tag] = dict(time=cuda_time(lambda: fn(*ins, yt), args.reps), ok=ok,
                                      err=err)
                failures += not h_ok
                default = next(iter(tiles))
                best = min(tiles, key=lambda k: tiles[k]["time"])
                rec = dict(op=op, dtype=dtype, n=n, m=m, copy=t_copy, torch=t_torch,
                           hand=t_hand, hand_ok=h_ok, hand_err=h_err, tile=tiles,
                           default=default, best=best, bytes=nbytes)
                records.append(rec)
                t_def, t_best = tiles[default]["time"], tiles[best]["time"]
                wrong = [k for k, v in tiles.items() if not v["ok"]] + ([] if h_ok else ["hand"])
                print(f"{op[:4]} {hand.SHORT[dtype]} {n}x{m}: us tile {t_def * 1e6:.1f} "
                      f"({t_copy / t_def:.0%}) best {best} {t_best * 1e6:.1f} "
                      f"({t_copy / t_best:.0%}) hand {t_hand * 1e6:.1f} ({t_copy / t_hand:.0%}) "
                      f"torch {t_torch * 1e6:.1f} copy {t_copy * 1e6:.1f}"
                      f"{' WRONG: ' + ', '.join(wrong) if wrong else ''}", flush=True)
                del ins, y, want, src
    if args.json:
        import json

        Path(args.json).write_text(json.dumps(records, indent=1))
    for op in ops:
        print(f"\n{op}\n")
        print("| dtype | shape | tile us (default) | of copy | best rows x threads | best us | "
              "of copy | hand us | of copy | best tile / hand speed | best tile / torch speed |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in (r for r in records if r["op"] == op):
            t_def, t_best = r["tile"][r["default"]]["time"], r["tile"][r["best"]]["time"]
            ok = all(v["ok"] for v in r["tile"].values()) and r["hand_ok"]
            print(f"| {hand.SHORT[r['dtype']]} | {r['n']}x{r['m']} | {t_def * 1e6:.1f} | "
                  f"{r['copy'] / t_def:.0%} | {r['best']} | {t_best * 1e6:.1f} | "
                  f"{r['copy'] / t_best:.0%} | {r['hand'] * 1e6:.1f} | {r['copy'] / r['hand']:.0%} "
                  f"| {r['hand'] / t_best:.2f}x | {r['torch'] / t_best:.2f}x |"
                  f"{'' if ok else ' WRONG'}")
    print(f"\n{failures} wrong results")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
