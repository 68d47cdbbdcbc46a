"""Time to apply a schedule to a fresh schedule of the plain three-loop matmul program: the CPU
schedule of bench/matmul_schedule_cpu.py (1024^3; split, reorder, cache_write, reverse_compute_at,
cache_read, compute_at, parallel, vectorize, unroll, decompose_reduction: 19 instructions) and the
GPU schedule of bench/matmul_schedule_gpu.py (4096^3; splits, binds, cache_write/read into local
and shared memory, compute_at, fuse, vectorize, unroll, decompose_reduction: 35 instructions),
through the Python API and by replaying the trace's JSON in C++; with ``--tvm-python``, the same
schedule source applied by Apache TVM's ``s_tir.Schedule`` in the same run (its own venv, a
subprocess).

    python bench/schedule_bench.py [--reps N] [--tvm-python PYTHON]

Reported: the median over ``--reps`` applications, in milliseconds (the aim of issue 14 is under 5).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matmul_schedule_cpu  # noqa: E402
import matmul_schedule_gpu  # noqa: E402

CASES = {"cpu": (1024, matmul_schedule_cpu.SCHEDULE), "gpu": (4096, matmul_schedule_gpu.SCHEDULE)}

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"),
           C: T.Buffer((N, N), "float32")):
    T.func_attr({"global_symbol": "matmul"})
    for i, j, k in T.grid(N, N, N):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

TVM_SIDE = r"""
import json, statistics, sys, time
import tvm
import tvm.s_tir
from tvm.script import tirx as T
N, reps, schedule = int(sys.argv[1]), int(sys.argv[2]), open(sys.argv[3]).read()
code = compile(schedule, "schedule", "exec")
@T.prim_func(s_tir=True)
def matmul(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"),
           C: T.Buffer((N, N), "float32")):
    for i, j, k in T.grid(N, N, N):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
mod = tvm.IRModule({"main": matmul})
times = []
for _ in range(reps):
    t = time.perf_counter()
    sch = tvm.s_tir.Schedule(mod)
    exec(code, {"sch": sch})
    times.append(time.perf_counter() - t)
print(json.dumps({"version": tvm.__version__, "median_ms": statistics.median(times) * 1e3,
                  "insts": len(sch.trace.insts)}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--tvm-python", default=None)
    args = ap.parse_args()

    import tessel

    for case, (n, schedule) in CASES.items():
        func = tessel.parse(MATMUL.replace("N", str(n)))
        code = compile(schedule, "schedule", "exec")
        py, js = [], []
        trace = None
        for _ in range(args.reps):
            t = time.perf_counter()
            sch = tessel.Schedule(func)
            exec(code, {"sch": sch})  # noqa: S102
            py.append(time.perf_counter() - t)
            trace = sch.trace.as_json()
        insts = len(json.loads(trace)["insts"])
        for _ in range(args.reps):
            t = time.perf_counter()
            tessel.Schedule.from_json(func, trace)
            js.append(time.perf_counter() - t)
        rows = [("tessel, Python API", statistics.median(py) * 1e3),
                ("tessel, JSON trace replayed in C++", statistics.median(js) * 1e3)]
        if args.tvm_python:
            # TVMScript reads the function's source, so the script goes to a file, not -c.
            with tempfile.TemporaryDirectory() as d:
                side, sched = os.path.join(d, "tvm_side.py"), os.path.join(d, "schedule.py")
                with open(side, "w") as fh:
                    fh.write(TVM_SIDE)
                with open(sched, "w") as fh:
                    fh.write(schedule)
                out = subprocess.run([args.tvm_python, side, str(n), str(args.reps), sched],
                                     check=True, capture_output=True, text=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append((f"TVM {r['version']} s_tir.Schedule, Python API "
                         f"({r['insts']} insts)", r["median_ms"]))
        print(f"matmul {n}^3 {case.upper()} schedule ({insts} trace instructions), "
              f"median of {args.reps}:")
        for name, ms in rows:
            print(f"  {name:55s} {ms:8.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
