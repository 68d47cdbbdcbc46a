"""Time to apply a schedule: the CPU tiling schedule of a 1024^3 fp32 matmul (split x2, reorder,
fuse, parallel, unroll, vectorize), applied to a fresh schedule of the plain three-loop program,
through the Python API and by replaying the trace's JSON in C++; with ``--tvm-python``, the same
schedule with Apache TVM's ``s_tir.Schedule`` in the same run (its own venv, a subprocess).

    python bench/schedule_bench.py [--reps N] [--tvm-python PYTHON]

Reported: the median over ``--reps`` applications, in milliseconds (the aim of issue 14 is under 5).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
           C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"global_symbol": "matmul"})
    for i, j, k in T.grid(1024, 1024, 1024):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def apply(sch):
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 32])
    j0, j1 = sch.split(j, [None, 64])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    f = sch.fuse(i0, j0)
    sch.parallel(f)
    sch.unroll(k1)
    sch.vectorize(j1)


TVM_SIDE = r"""
import json, statistics, sys, time
import tvm
import tvm.s_tir
from tvm.script import tirx as T
reps = int(sys.argv[1])
@T.prim_func(s_tir=True)
def matmul(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
           C: T.Buffer((1024, 1024), "float32")):
    for i, j, k in T.grid(1024, 1024, 1024):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
mod = tvm.IRModule({"main": matmul})
Schedule = tvm.s_tir.Schedule
times = []
for _ in range(reps):
    t = time.perf_counter()
    sch = Schedule(mod)
    b = sch.get_sblock("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, [None, 32])
    j0, j1 = sch.split(j, [None, 64])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, k0, i1, k1, j1)
    f = sch.fuse(i0, j0)
    sch.parallel(f)
    sch.unroll(k1)
    sch.vectorize(j1)
    times.append(time.perf_counter() - t)
print(json.dumps({"version": tvm.__version__, "median_ms": statistics.median(times) * 1e3}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--tvm-python", default=None)
    args = ap.parse_args()

    import tessel

    func = tessel.parse(MATMUL)
    py, js = [], []
    trace = None
    for _ in range(args.reps):
        t = time.perf_counter()
        sch = tessel.Schedule(func)
        apply(sch)
        py.append(time.perf_counter() - t)
        trace = sch.trace.as_json()
    for _ in range(args.reps):
        t = time.perf_counter()
        tessel.Schedule.from_json(func, trace)
        js.append(time.perf_counter() - t)
    rows = [("tessel, Python API", statistics.median(py) * 1e3),
            ("tessel, JSON trace replayed in C++", statistics.median(js) * 1e3)]
    if args.tvm_python:
        # TVMScript reads the function's source, so the script goes to a file, not -c.
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(TVM_SIDE)
        out = subprocess.run([args.tvm_python, f.name, str(args.reps)], check=True,
                             capture_output=True, text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append((f"TVM {r['version']} s_tir.Schedule, Python API", r["median_ms"]))
    print(f"matmul 1024^3 CPU schedule (10 primitives), median of {args.reps}:")
    for name, ms in rows:
        print(f"  {name:45s} {ms:8.3f} ms")


if __name__ == "__main__":
    sys.exit(main())
