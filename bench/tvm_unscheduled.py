"""Unscheduled TVM-printed functions built by tessel's C backend against TVM 0.27's LLVM backend (issue
14): same inputs, results compared, time per call interleaved in one run.

    .venv/bin/python bench/tvm_unscheduled.py [--tvm-python /tmp/tvm027/bin/python] [--rounds N]
        [--corpus DIR ...] [--only SUBSTRING] [--json FILE]

Corpora (each a folder of TVM-printed `.py` files with a `manifest.json` in the format of
tests/python/tvm_corpus/generate.py; only the CPU, target "c", entries are used):

- bench/tvm_unscheduled (default): TVM's operators at sizes where the kernel, not the call,
  dominates (matmul 128x96x64, batch_matmul, int8 matmul, 2x2 max_pool2d, row sum, max reduce,
  float16 -> float32 cast, transpose, elementwise ops, softmax, conv2d), written by
  bench/tvm_unscheduled/generate.py;
- tests/python/tvm_corpus: the test corpus (small shapes: mostly call overhead).

Each function is built unscheduled: by `tessel.build(text, target="c")` here, and by
`tvm.compile(..., target="llvm")` in a subprocess running this script with `--impl tvm` under the
TVM venv's Python (the two packages bring different tvm-ffi builds, which must not share a process).
The subprocess reads the text file and the inputs as .npy files and answers in JSON lines. Both sides
are called on the same inputs; outputs must agree (integers exactly, floats to the test corpus's
tolerance). Timing: a batch is K calls, K chosen so that one tessel batch takes about 2 ms; for
`--rounds` rounds a tessel batch then a TVM batch; the figure is the median over rounds of a batch's
time per call. Ratio = tessel / TVM (above 1: tessel slower).
"""

from __future__ import annotations

import argparse
import json
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
DEFAULT_CORPUS = ROOT / "bench" / "tvm_unscheduled"
TOLERANCE = {"float16": (2e-3, 2e-3), "float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)}


def arrays(entry, seed=0):
    """Inputs (random, as tests/python/test_tvm_corpus.py makes them) and zeroed outputs, in
    parameter order."""
    rng = np.random.default_rng(seed)
    out = []
    for p in entry["params"]:
        shape = tuple(d if isinstance(d, int) else entry["sym"][d] for d in p["shape"])
        dtype = p["dtype"]
        if p["name"] in entry["outputs"]:
            out.append(np.zeros(shape, dtype))
        elif dtype == "bool":
            out.append(rng.random(shape) < 0.5)
        elif dtype.startswith(("int", "uint")):
            low, high = p.get("range", [-10, 10])
            out.append(rng.integers(low, high, size=shape).astype(dtype))
        else:
            low, high = p.get("range", [-2.0, 2.0])
            out.append(rng.uniform(low, high, size=shape).astype(dtype))
    return out


def time_batches(f, args, k):
    start = time.perf_counter()
    for _ in range(k):
        f(*args)
    return (time.perf_counter() - start) / k


# ---------------------------------------------------------------- the TVM side (its own venv)
def serve_tvm() -> int:
    import tvm
    from tvm.script import from_source

    funcs = {}
    print(json.dumps({"version": tvm.__version__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "load":
            parsed = from_source(Path(req["file"]).read_text(), check_well_formed=False)
            mod = parsed if isinstance(parsed, tvm.IRModule) else tvm.IRModule({req["name"]: parsed})
            lib = tvm.compile(mod, target="llvm")
            arrs = [np.load(p) for p in req["arrays"]]
            args = [tvm_ffi.from_dlpack(a) for a in arrs]
            f = lib[req["name"]]
            f(*args)
            for i in req["outputs"]:
                np.save(req["arrays"][i], arrs[i])
            funcs[req["name"]] = (lib, f, args)
            print(json.dumps({"ok": True}), flush=True)
        elif req["op"] == "time":
            _, f, args = funcs[req["name"]]
            print(json.dumps({"t": time_batches(f, args, req["k"])}), flush=True)
    return 0


class TvmPeer:
    def __init__(self, python: str):
        self.p = subprocess.Popen([python, __file__, "--impl", "tvm"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.version = self._read()["version"]

    def _read(self):
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit("the TVM subprocess ended")
        return json.loads(line)

    def ask(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        return self._read()

    def close(self):
        self.p.stdin.close()
        self.p.wait()


# ---------------------------------------------------------------- the tessel side
def compare(entry, ours, theirs) -> str:
    for name, a, b in zip(entry["outputs"], ours, theirs):
        if a.dtype.kind in "biu":
            if not np.array_equal(a, b):
                return f"{name}: {np.count_nonzero(a != b)} elements differ"
        else:
            rtol, atol = TOLERANCE[str(a.dtype)]
            if not np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol,
                               equal_nan=True):
                return f"{name}: max abs difference {np.max(np.abs(a - b.astype(a.dtype)))}"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--impl", default="tessel", choices=["tessel", "tvm"])
    ap.add_argument("--tvm-python", default="/tmp/tvm027/bin/python")
    ap.add_argument("--corpus", action="append", type=Path)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batch-seconds", type=float, default=2e-3)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--extra-flags", default="",
                    help="C compiler flags for tessel's build, e.g. -march=native (TVM's 'llvm' "
                         "target compiles for the host CPU)")
    args = ap.parse_args()
    if args.impl == "tvm":
        return serve_tvm()

    sys.path.insert(0, str(ROOT / "python"))
    import tessel

    peer = TvmPeer(args.tvm_python)
    print(f"# tessel C backend (cc -O3 {args.extra_flags}) vs apache-tvm {peer.version} tvm.compile(target='llvm'); "
          f"{platform.processor() or platform.machine()}, median of {args.rounds} interleaved "
          f"batches", flush=True)
    print(f"{'function':34} {'tessel us':>10} {'TVM us':>10} {'ratio':>7}  check")
    rows = []
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in args.corpus or [DEFAULT_CORPUS]:
            manifest = json.loads((corpus / "manifest.json").read_text())
            for entry in manifest:
                name = entry["function"]
                if entry["target"] != "c" or args.only not in name:
                    continue
                path = corpus / entry["file"]
                arrs = arrays(entry)
                outs = [i for i, p in enumerate(entry["params"]) if p["name"] in entry["outputs"]]
                files = []
                for i, a in enumerate(arrs):
                    files.append(str(Path(tmp) / f"{name}_{i}.npy"))
                    np.save(files[-1], a)
                peer.ask(op="load", name=name, file=str(path), arrays=files, outputs=outs)
                theirs = [np.load(files[i]) for i in outs]
                f = tessel.build(path.read_text(), target="c",
                                 extra_flags=args.extra_flags.split() or None)[name]
                targs = [tvm_ffi.from_dlpack(a) for a in arrs]
                f(*targs)
                check = compare(entry, [arrs[i] for i in outs], theirs)
                failed += bool(check)
                one = time_batches(f, targs, 3)
                k = max(1, int(args.batch_seconds / max(one, 1e-9)))
                ours_t, theirs_t = [], []
                for _ in range(args.rounds):
                    ours_t.append(time_batches(f, targs, k))
                    theirs_t.append(peer.ask(op="time", name=name, k=k)["t"])
                t1, t2 = statistics.median(ours_t) * 1e6, statistics.median(theirs_t) * 1e6
                rows.append({"function": name, "corpus": corpus.name, "tessel_us": t1,
                             "tvm_us": t2, "ratio": t1 / t2, "check": check or "ok"})
                print(f"{name:34} {t1:10.2f} {t2:10.2f} {t1 / t2:7.2f}  {check or 'ok'}",
                      flush=True)
    peer.close()
    ratios = [r["ratio"] for r in rows]
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"# {len(rows)} functions; geometric mean ratio {geo:.2f}; "
              f"{sum(r <= 1.0 for r in ratios)} at or below 1; {failed} results differ")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
