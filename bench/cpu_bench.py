"""CPU backend benchmarks (issue 5): compile latency, text to loaded module, per example; and call
overhead from Python of a no-op kernel with three tensor arguments against the floor, a plain tvm-ffi
C function with the same ABI that takes the same arguments and checks nothing.

    .venv/bin/python bench/cpu_bench.py [--reps 2000] [--compile-reps 5]

Compile latency is measured cold: each build gets an empty TESSEL_CACHE_DIR, so the C compiler runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import tvm_ffi

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import tessel  # noqa: E402
from tessel.examples_cpu import EXAMPLES_CPU  # noqa: E402

NOOP = """
@T.prim_func
def noop(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
    T.func_attr({"global_symbol": "noop", "tir.noalias": True})
    T.evaluate(0)
"""

FLOOR_C = """
#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_floor(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  (void)self; (void)args; (void)num_args; (void)result;
  return 0;
}
"""


def compile_latency(reps: int) -> list[tuple[str, float, float]]:
    rows = []
    for ex in EXAMPLES_CPU:
        text = ex.path.read_text()
        times = []
        for _ in range(reps):
            with tempfile.TemporaryDirectory() as cache:
                os.environ["TESSEL_CACHE_DIR"] = cache
                start = time.perf_counter()
                tessel.build(text, target="c")
                times.append(time.perf_counter() - start)
        rows.append((ex.name, statistics.median(times), min(times)))
    os.environ.pop("TESSEL_CACHE_DIR", None)
    return rows


def floor_function(workdir: Path):
    src = workdir / "floor.c"
    src.write_text(FLOOR_C)
    lib = workdir / "floor.so"
    include = Path(tvm_ffi.__file__).parent / "include"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-I{include}", str(src), "-o", str(lib)],
                   check=True)
    return tvm_ffi.load_module(str(lib))["floor"]


def per_call(func, args, reps: int) -> float:
    """Median over 21 batches of the mean time per call in a batch of `reps` calls (seconds)."""
    batches = []
    for _ in range(21):
        start = time.perf_counter()
        for _ in range(reps):
            func(*args)
        batches.append((time.perf_counter() - start) / reps)
    return statistics.median(batches)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--compile-reps", type=int, default=5)
    args = ap.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, {platform.platform()}")
    print(f"date: {time.strftime('%Y-%m-%d')}")

    print("== compile latency, text to loaded module (cold cache), median / min of "
          f"{args.compile_reps} ==")
    for name, med, best in compile_latency(args.compile_reps):
        print(f"{name:14} {med * 1e3:8.1f} ms  {best * 1e3:8.1f} ms")

    with tempfile.TemporaryDirectory() as work:
        floor = floor_function(Path(work))
        noop = tessel.build(NOOP, target="c")["noop"]
        arrays = [tvm_ffi.from_dlpack(np.zeros(128, "float32")) for _ in range(3)]
        for f in (floor, noop):  # warm up
            per_call(f, arrays, 100)
        t_floor = per_call(floor, arrays, args.reps)
        t_noop = per_call(noop, arrays, args.reps)
    print("== call overhead from Python, three float32[128] tensors (tvm_ffi.Tensor) ==")
    print(f"floor: plain tvm-ffi C function, no checks  {t_floor * 1e9:8.0f} ns")
    print(f"tessel no-op kernel, every argument checked {t_noop * 1e9:8.0f} ns "
          f"({t_noop / t_floor:.2f}x the floor)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
