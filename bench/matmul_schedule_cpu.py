"""fp32 matmul 1024^3 on the CPU, scheduled from the plain three-loop block program, against
NumPy's matmul (its BLAS, on the same cores) and Apache TVM 0.27 building the very same schedule
with its LLVM backend, in one run.

    python bench/matmul_schedule_cpu.py [--tvm-python /tmp/tvm027/bin/python] [--reps 20]

The schedule (SCHEDULE below) is one piece of source applied to a tessel.Schedule and to a
tvm.s_tir.Schedule alike: 8x32 register tiles (split, reorder), the accumulator in a local buffer
(cache_write + reverse_compute_at), B's 1024x32 column panel copied contiguous per tile column
(cache_read + compute_at), the init moved out of the k loop (decompose_reduction), the tile
columns parallel, the rows unrolled, 16-lane vectors. tessel compiles with the C compiler and
`-march=native -ffp-contract=fast`; TVM with target {"kind": "llvm", "mcpu": <the host CPU as LLVM names it>} (LLVM contracts to FMA itself).
Reported: the best of --reps calls each (GFLOP/s), and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

N = 1024

# Applied by exec() to both schedules; `sch` is bound, names follow TVM's s_tir.Schedule.
SCHEDULE = """
b = sch.get_block("C") if hasattr(sch, "get_block") else sch.get_sblock("C")
i, j, k = sch.get_loops(b)
i0, i1 = sch.split(i, [None, 8])
j0, j1 = sch.split(j, [None, 32])
sch.reorder(j0, i0, k, i1, j1)
cw = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(cw, i0)
bp = sch.cache_read(b, 1, "local")
sch.compute_at(bp, j0)
sch.parallel(j0)
sch.vectorize(sch.get_loops(bp)[-1])
sch.vectorize(sch.get_loops(cw)[-1])
sch.unroll(i1)
j1o, j1i = sch.split(j1, [None, 16])
sch.unroll(j1o)
sch.vectorize(j1i)
init = sch.decompose_reduction(b, k)
"""

TESSEL_MATMUL = f"""
@T.prim_func
def matmul(A: T.Buffer(({N}, {N}), "float32"), B: T.Buffer(({N}, {N}), "float32"),
           C: T.Buffer(({N}, {N}), "float32")):
    T.func_attr({{"global_symbol": "matmul", "tir.noalias": True}})
    for i, j, k in T.grid({N}, {N}, {N}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

TVM_SIDE = textwrap.dedent('''
import json, sys, time
import numpy as np
import tvm
import tvm.s_tir
from tvm.script import tirx as T

N, REPS, SCHEDULE = int(sys.argv[1]), int(sys.argv[2]), open(sys.argv[3]).read()

@T.prim_func(s_tir=True)
def matmul(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"),
           C: T.Buffer((N, N), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(N, N, N):
        with T.sblock("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

sch = tvm.s_tir.Schedule(tvm.IRModule({"main": matmul}))
exec(SCHEDULE, {"sch": sch})
# "native" on the wheel's conda triple falls back to generic; name the host CPU LLVM sees instead.
cpu = tvm.target.codegen.llvm_get_system_cpu()
lib = tvm.compile(sch.mod, target=tvm.target.Target({"kind": "llvm", "mcpu": cpu}))
rng = np.random.default_rng(0)
a = rng.standard_normal((N, N)).astype("float32")
b = rng.standard_normal((N, N)).astype("float32")
dev = tvm.cpu()
ta, tb = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev)
tc = tvm.runtime.tensor(np.zeros((N, N), "float32"), dev)
f = lib["main"]
f(ta, tb, tc)
err = float(np.abs(tc.numpy() - a @ b).max())
best = float("inf")
for _ in range(REPS):
    t0 = time.perf_counter()
    f(ta, tb, tc)
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"version": tvm.__version__, "best_s": best, "max_err": err, "mcpu": cpu}))
''')


def best_of(f, reps):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--tvm-python", default=None)
    args = ap.parse_args()

    import numpy as np
    import tvm_ffi

    import tessel

    flops = 2.0 * N ** 3
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype("float32")
    b = rng.standard_normal((N, N)).astype("float32")
    c = np.zeros((N, N), "float32")

    sch = tessel.Schedule(TESSEL_MATMUL)
    exec(SCHEDULE, {"sch": sch})  # noqa: S102
    mod = tessel.build(sch.mod, extra_flags=["-march=native", "-ffp-contract=fast"])
    f = mod["matmul"]
    args_t = [tvm_ffi.from_dlpack(x) for x in (a, b, c)]
    f(*args_t)
    ref = a @ b
    err = float(np.abs(c - ref).max())
    if err > 1e-2:
        print(f"tessel: wrong result, max error {err}")
        return 1
    t_tessel = best_of(lambda: f(*args_t), args.reps)
    t_numpy = best_of(lambda: a @ b, args.reps)
    rows = [("tessel (scheduled, C backend)", t_tessel), ("NumPy matmul", t_numpy)]
    if args.tvm_python:
        with tempfile.TemporaryDirectory() as d:
            side, sched = os.path.join(d, "tvm_side.py"), os.path.join(d, "schedule.py")
            with open(side, "w") as fh:
                fh.write(TVM_SIDE)
            with open(sched, "w") as fh:
                fh.write(SCHEDULE)
            out = subprocess.run([args.tvm_python, side, str(N), str(args.reps), sched],
                                 capture_output=True, text=True)
        if out.returncode != 0:
            print(out.stderr[-3000:])
            return 1
        r = json.loads(out.stdout.strip().splitlines()[-1])
        if r["max_err"] > 1e-2:
            print(f"TVM: wrong result, max error {r['max_err']}")
        rows.append((f"TVM {r['version']} (same schedule, LLVM {r['mcpu']})", r["best_s"]))
    print(f"fp32 matmul {N}^3, {os.cpu_count()} cores, best of {args.reps}:")
    for name, t in rows:
        print(f"  {name:52s} {t * 1e3:8.2f} ms  {flops / t / 1e9:7.1f} GFLOP/s")
    print(f"  tessel / NumPy speed: {t_numpy / t_tessel:.2f}")
    if args.tvm_python:
        print(f"  tessel / TVM speed:   {rows[2][1] / t_tessel:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
