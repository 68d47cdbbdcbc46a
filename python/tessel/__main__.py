"""`python -m tessel [FILE...]`: the main job of ./scripts/run.sh.

Compiles each CPU example kernel (examples/, see tessel/examples_cpu.py) to C, runs it on random
data of several shapes, checks the results against NumPy, and prints its compile and run times.
Parses every kernel (default: the repository's examples/*.py, which an installed package ships as
tessel/examples/*.py) and checks that its canonical print parses back to a structurally equal object
(`--print` shows the text). Then prints a few answers of the arithmetic analyzer on kernel-style
index expressions. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, arith, ir
from ._lib import LIB_PATH, get_global_func
from .examples_cpu import EXAMPLES
from .text import as_text, parse


def run_cpu_examples() -> int:
    """Builds and runs the CPU examples; returns the number that failed."""
    from .examples_cpu import EXAMPLES_CPU, build_example, check_example

    import os
    import tempfile

    print("==== CPU examples: built for target c, run, checked against NumPy ====")
    # A fresh build cache, so that the compile times shown are the C compiler's, not a cache hit.
    cache = tempfile.TemporaryDirectory(prefix="tessel-main-")
    os.environ["TESSEL_CACHE_DIR"] = cache.name
    failures = 0
    for ex in EXAMPLES_CPU:
        try:
            _, compile_s = build_example(ex)
            times = []
            for shape in ex.shapes:
                times.append((shape, check_example(ex, shape, time_runs=20)))
        except Exception as err:  # report every example, then fail
            print(f"{ex.name:12} FAILED: {err}", file=sys.stderr)
            failures += 1
            continue
        runs = ", ".join(f"{'x'.join(map(str, s))}: {t * 1e6:.1f} us" for s, t in times)
        print(f"{ex.name:12} ok  compile {compile_s * 1e3:7.1f} ms  run (median of 20) {runs}")
    os.environ.pop("TESSEL_CACHE_DIR")
    cache.cleanup()
    return failures


def run_examples(files: list[Path], show: bool = False) -> int:
    missing = [n for n in ("tessel.ir.ParseText", "tessel.ir.AsText") if get_global_func(n) is None]
    if missing:
        print(f"error: {LIB_PATH} lacks {', '.join(missing)}; cannot read examples", file=sys.stderr)
        return len(files) or 1
    failures = 0
    for path in files:
        if show:
            print(f"==== {path.name} ====")
        try:
            node = parse(path.read_text(), str(path))
            text = as_text(node)
            again = parse(text, f"{path.name} (printed)")
        except Exception as err:  # report every example, then fail
            print(f"FAILED: {err}", file=sys.stderr)
            failures += 1
            continue
        if show:
            print(text, end="" if text.endswith("\n") else "\n")
        # Each parse makes its own free variables (`n = T.int32()`): map them.
        if not ir.structural_equal(node, again, map_free_vars=True):
            print(f"FAILED: {path.name}: printed text does not parse back to an equal object; "
                  f"first mismatch {ir.first_mismatch(node, again, True)}", file=sys.stderr)
            failures += 1
    return failures


def bound_of(ana, e) -> str:
    b = ana.const_int_bound(e)
    return f"[{b.min_value}, {b.max_value}]"


def analyzer_answers() -> list[tuple[str, str]]:
    """A few answers of the arithmetic analyzer (tessel.arith) on kernel-style index expressions:
    (question, answer) pairs."""
    i, j, n = ir.Var("i"), ir.Var("j"), ir.Var("n")
    bx, ty, tx = ir.Var("bx"), ir.Var("ty"), ir.Var("tx")
    row, col, x = ir.Var("row"), ir.Var("col"), ir.Var("x")
    ana = arith.Analyzer()
    ana.bind(i, ir.Range(0, 64))
    ana.bind(bx, ir.Range(0, 16))
    ana.bind(ty, ir.Range(0, 8))
    ana.bind(tx, ir.Range(0, 8))
    ana.bind(row, ir.Range(0, 8))
    ana.bind(col, ir.Range(0, 64))
    tile = bx * 64 + ty * 8 + tx
    swizzle = (row ^ ir.floordiv(col, 8)) * 8 + ir.floormod(col, 8)
    doms = "i in [0, 64), bx in [0, 16), ty, tx, row in [0, 8), col in [0, 64)"

    def proved(ok: bool) -> str:
        return "proved" if ok else "not proved"

    out = [
        (f"domains: {doms}", ""),
        ("simplify (i // 8) * 8 + i % 8",
         str(ana.simplify(ir.floordiv(i, 8) * 8 + ir.floormod(i, 8)))),
        ("simplify (bx * 64 + ty * 8 + tx) // 64", str(ana.simplify(ir.floordiv(tile, 64)))),
        ("simplify (bx * 64 + ty * 8 + tx) % 8", str(ana.simplify(ir.floormod(tile, 8)))),
        ("bound bx * 64 + ty * 8 + tx", bound_of(ana, tile)),
        ("bound (row ^ col // 8) * 8 + col % 8", bound_of(ana, swizzle)),
        ("modular_set bx * 64 + ty * 8", str(ana.modular_set(bx * 64 + ty * 8))),
        ("prove bx * 64 + ty * 8 + tx < 1024", proved(ana.can_prove(tile < 1024))),
        ("prove bx * 64 + ty * 8 + tx < 1023", proved(ana.can_prove(tile < 1023))),
    ]
    sym = arith.Analyzer()
    sym.bind(i, ir.Range(0, n))
    sym.bind(j, ir.Range(0, 4))
    out.append(("prove i * 4 + j < n * 4 (i in [0, n), j in [0, 4))",
                proved(sym.can_prove(i * 4 + j < n * 4))))
    with sym.constraint_scope(i < 100):
        out.append(("  ... bound i * 4 + j, assuming i < 100", bound_of(sym, i * 4 + j)))
    out.append(("prove x + 1 > x (x: any int32; wraps at max)", proved(sym.can_prove(x + 1 > x))))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tessel", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path,
                    help=f"text-format files (default: {EXAMPLES}/*.py)")
    ap.add_argument("--print", action="store_true", help="print each kernel in canonical form")
    ap.add_argument("--no-run", action="store_true", help="skip building and running the CPU examples")
    args = ap.parse_args(argv)
    if not args.files and not EXAMPLES.is_dir():
        print(f"error: no example kernels at {EXAMPLES}: run from a source checkout, install a wheel "
              "that ships tessel/examples, or name text-format files", file=sys.stderr)
        return 1
    files = args.files or sorted(EXAMPLES.glob("*.py"))
    print(f"tessel {__version__} ({LIB_PATH})")
    run_failures = 0 if (args.no_run or args.files) else run_cpu_examples()
    print(f"==== text format: parse, print, parse again ({len(files)} files) ====")
    failures = run_examples(files, show=args.print or bool(args.files)) if files else 0
    if not files:
        print("no examples found")

    print("==== a few analyzer answers (tessel.arith) ====")
    for question, answer in analyzer_answers():
        print(f"{question:50} -> {answer}" if answer else question)
    if failures:
        print(f"{failures} of {len(files)} examples failed", file=sys.stderr)
    else:
        print(f"{len(files)} examples parsed, printed and round-tripped")
    if run_failures:
        print(f"{run_failures} CPU examples failed", file=sys.stderr)
    return 1 if failures or run_failures else 0


if __name__ == "__main__":
    sys.exit(main())
