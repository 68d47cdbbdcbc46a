"""@tessel.jit and @tessel.autotune benchmarks (docs/performance.md, "jit call path, warm start,
autotune"):

1. call overhead: a CPU no-op kernel with three float32[128] numpy arrays called through the jit
   against the built module's function called directly with the same numpy arrays, and with
   pre-converted tvm_ffi tensors;
2. warm start: a fresh process whose disk cache already holds the kernel; reported separately:
   interpreter start (``python -c pass``), ``import tessel``, and the decorated function's first
   call to its return (specialize, key, disk load, call; no compiler);
3. autotune of 16 configs of a CPU kernel, wall time with 1 compile worker and with 2 (every
   core here), each from an empty cache.

    .venv/bin/python bench/jit_bench.py [--reps 20000] [--configs 16]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import tvm_ffi

import tessel
from tessel.script import tir as T


@tessel.jit
def noop(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32"),
         C: T.Buffer(("n",), "float32")):
    T.evaluate(0)


def batch(func, args, reps: int) -> float:
    start = time.perf_counter()
    for _ in range(reps):
        func(*args)
    return (time.perf_counter() - start) / reps


def call_overhead(reps: int) -> None:
    """Batches of the three calls are interleaved (21 rounds), so that load from other processes
    on this shared machine hits all three alike; reported: the median per-call time of each, and
    the median of the per-round ratios."""
    arrays = [np.zeros(128, "float32") for _ in range(3)]
    noop(*arrays)  # compile (or load) once
    direct = noop.compile().function
    tensors = [tvm_ffi.from_dlpack(a) for a in arrays]
    cases = [(noop, arrays), (direct, arrays), (direct, tensors)]
    for f, a in cases:
        batch(f, a, 200)
    rounds = [[batch(f, a, reps) for f, a in cases] for _ in range(21)]
    t_jit, t_direct, t_tensors = (statistics.median(r[i] for r in rounds) for i in range(3))
    ratio = statistics.median(r[0] / r[1] for r in rounds)
    print("== call overhead, no-op kernel, three float32[128] arrays (21 interleaved rounds) ==")
    print(f"jit call, numpy arrays                  {t_jit * 1e9:8.0f} ns "
          f"({ratio:.2f}x direct, median of per-round ratios; aim <= 1.25x)")
    print(f"module function directly, numpy arrays  {t_direct * 1e9:8.0f} ns")
    print(f"module function directly, tvm_ffi.Tensor {t_tensors * 1e9:7.0f} ns")


WARM = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    import numpy as np
    import tessel
    from tessel.script import tir as T
    t_import = time.perf_counter() - t0

    @tessel.jit(out=["C"])
    def add(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32"),
            C: T.Buffer(("n",), "float32")):
        for i in range(n):
            C[i] = A[i] + B[i]

    a = np.ones(1000, "float32")
    t1 = time.perf_counter()
    c = add(a, a)
    t_first = time.perf_counter() - t1
    assert (c == 2).all()
    print(json.dumps({"import": t_import, "first": t_first, "reason": add.recompile_reasons[0]}))
""")


def warm_start(runs: int) -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TESSEL_CACHE_DIR=cache)
        script = os.path.join(cache, "warm.py")  # the jit reads the kernel's source file
        with open(script, "w") as f:
            f.write(WARM)
        subprocess.run([sys.executable, script], env=env, check=True, capture_output=True)
        starts, imports, firsts, reason = [], [], [], ""
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            starts.append(time.perf_counter() - t0)
            r = subprocess.run([sys.executable, script], env=env, check=True,
                               capture_output=True, text=True)
            d = json.loads(r.stdout)
            imports.append(d["import"])
            firsts.append(d["first"])
            reason = d["reason"]
    print(f"== warm start in a fresh process (median of {runs}) ==")
    print(f"interpreter start (python -c pass)      {statistics.median(starts) * 1e3:8.1f} ms")
    print(f"import numpy + tessel                   {statistics.median(imports) * 1e3:8.1f} ms")
    print(f"first call of the jit kernel            {statistics.median(firsts) * 1e3:8.1f} ms "
          "(aim < 20 ms)")
    print(f"  ({reason})")


def make_tuned(n_configs: int, executor):
    configs = [{"REPEAT": r, "UNROLL": u} for r in (1, 2, 3, 4) for u in (1, 2, 4, 8)]
    configs = configs[:n_configs]

    @tessel.autotune(configs=configs, key=["n"], warmup=2, rep=10, executor=executor,
                     progress=False)
    @tessel.jit(out=["B"])
    def work(A: T.Buffer(("n",), "float32"), B: T.Buffer(("n",), "float32"), *,
             REPEAT: T.constexpr = 1, UNROLL: T.constexpr = 1):
        for i in range(n):
            B[i] = A[i]
        for r in range(REPEAT):
            for io in range(n // UNROLL):
                for ii in T.unroll(UNROLL):
                    B[io * UNROLL + ii] = T.max(B[io * UNROLL + ii], A[io * UNROLL + ii])

    return work


def autotune_wall(n_configs: int) -> None:
    print(f"== autotune, {n_configs} configs of a CPU kernel, empty cache, wall time ==")
    a = np.random.default_rng(0).random(1 << 16, dtype=np.float32)
    for workers in (1, 2):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TESSEL_CACHE_DIR"] = cache
            with cf.ThreadPoolExecutor(workers) as pool:
                work = make_tuned(n_configs, pool)
                t0 = time.perf_counter()
                work(a)
                wall = time.perf_counter() - t0
            ok = sum(1 for r in work.last_results if r["source"] == "measured")
            print(f"{workers} worker{'s' if workers > 1 else ' '}  {wall:6.2f} s  "
                  f"({ok}/{n_configs} measured, best {work.best_config(a)})")
            t0 = time.perf_counter()
            again = make_tuned(n_configs, None)
            again(a)
            print(f"   same configs again, new tuner (records on disk): "
                  f"{(time.perf_counter() - t0) * 1e3:.0f} ms")
    os.environ.pop("TESSEL_CACHE_DIR", None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--warm-runs", type=int, default=7)
    ap.add_argument("--configs", type=int, default=16)
    args = ap.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, {platform.platform()}, "
          f"python {platform.python_version()}")
    print(f"date: {time.strftime('%Y-%m-%d')}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TESSEL_CACHE_DIR"] = cache
        call_overhead(args.reps)
    os.environ.pop("TESSEL_CACHE_DIR", None)
    warm_start(args.warm_runs)
    autotune_wall(args.configs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
