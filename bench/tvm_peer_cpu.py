"""The peer side of bench/cpu_bench.py, run with a Python that has apache-tvm (never the project's
venv): compile latency of the same example kernels with tvm.compile(target="llvm"), text to loaded
module, and the call overhead of a TVM-compiled no-op kernel taking three tensors.

    /tmp/tvmpeer/bin/python bench/tvm_peer_cpu.py [--reps 20000] [--compile-reps 5]

TVM cannot read tessel's implicit shape variables (`T.Buffer((n,), ...)` in a signature), so each
example's signature is rewritten into TVM's form: handle parameters, `n = T.int32()` and
`T.match_buffer`. The kernel bodies are the same text.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

import numpy as np
import tvm
import tvm.script.parser.tirx  # noqa: F401  (registers the T dialect)
import tvm_ffi
from tvm.script import from_source

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ["vector_add", "matmul", "softmax_row", "take_gather", "take_fill"]
PARAM = re.compile(r'(\w+): T\.Buffer\(\(([^)]*)\), "(\w+)"\)')


def to_tvm(text: str) -> str:
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("def "))
    header = lines[i]
    sizes, matches = [], []
    for name, shape, dtype in PARAM.findall(header):
        for s in re.findall(r"[A-Za-z_]\w*", shape):
            if s not in sizes:
                sizes.append(s)
        matches.append(f'    {name} = T.match_buffer({name}_h, ({shape}), "{dtype}")')
    header = PARAM.sub(lambda m: f"{m.group(1)}_h: T.handle", header)
    # Function attributes first, then the size variables and the buffers.
    body = lines[i + 1:]
    attrs = [b for b in body if "T.func_attr" in b]
    rest = [b for b in body if "T.func_attr" not in b]
    decls = [f"    {s} = T.int32()" for s in sizes]
    out = "\n".join(lines[:i] + [header] + attrs + decls + matches + rest) + "\n"
    # TVM 0.27 renamed T.block to T.sblock.
    if not hasattr(tvm.script.parser.tirx, "block"):
        out = out.replace("T.block(", "T.sblock(")
    return out


NOOP = '''
@T.prim_func
def noop(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "noop", "tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    T.evaluate(0)
'''


def build(text: str):
    func = from_source(text, check_well_formed=False)
    return tvm.compile(tvm.IRModule({"main": func}), target="llvm")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--compile-reps", type=int, default=5)
    args = ap.parse_args()
    print(f"peer: apache-tvm {tvm.__version__}, tvm.compile(target='llvm')")
    print("== compile latency, text to loaded module, median / min ==")
    for name in EXAMPLES:
        text = to_tvm((ROOT / "examples" / f"{name}.py").read_text())
        times = []
        for _ in range(args.compile_reps):
            start = time.perf_counter()
            build(text)
            times.append(time.perf_counter() - start)
        print(f"{name:14} {statistics.median(times) * 1e3:8.1f} ms  {min(times) * 1e3:8.1f} ms")
    f = build(NOOP)["noop"]
    arrays = [tvm_ffi.from_dlpack(np.zeros(128, "float32")) for _ in range(3)]
    batches = []
    for _ in range(21):
        start = time.perf_counter()
        for _ in range(args.reps):
            f(*arrays)
        batches.append((time.perf_counter() - start) / args.reps)
    print(f"== call overhead, TVM no-op kernel, three float32[128] tensors: "
          f"{statistics.median(batches) * 1e9:.0f} ns ==")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
