"""`python -m tessel [FILE...]`: the main job of ./scripts/run.sh.

Parses every kernel (default: the repository's examples/*.py), prints each back in canonical form
and checks that the printed text parses to a structurally equal object. Then prints a few answers
of the expression helpers. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__, ir
from ._lib import LIB_PATH, get_global_func
from .text import as_text, parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_examples(files: list[Path]) -> int:
    missing = [n for n in ("tessel.ir.ParseText", "tessel.ir.AsText") if get_global_func(n) is None]
    if missing:
        print(f"error: {LIB_PATH} lacks {', '.join(missing)}; cannot read examples", file=sys.stderr)
        return len(files) or 1
    failures = 0
    for path in files:
        print(f"==== {path.name} ====")
        try:
            node = parse(path.read_text(), str(path))
            text = as_text(node)
            again = parse(text, f"{path.name} (printed)")
        except Exception as err:  # report every example, then fail
            print(f"FAILED: {err}", file=sys.stderr)
            failures += 1
            continue
        print(text, end="" if text.endswith("\n") else "\n")
        # Each parse makes its own free variables (`n = T.int32()`): map them.
        if not ir.structural_equal(node, again, map_free_vars=True):
            print(f"FAILED: {path.name}: printed text does not parse back to an equal object; "
                  f"first mismatch {ir.first_mismatch(node, again, True)}", file=sys.stderr)
            failures += 1
    return failures


def helper_answers() -> list[tuple[str, object]]:
    """Constant folding and identities of the expression helpers (not the analyzer)."""
    x = ir.Var("x")
    n = ir.Var("n", "int64")
    int8_max = ir.IntImm("int8", 127)
    return [
        ("floordiv(-7, 2)", ir.floordiv(-7, 2)),
        ("truncdiv(-7, 2)", ir.truncdiv(-7, 2)),
        ("floormod(-7, 2)", ir.floormod(-7, 2)),
        ("int8 127 + 1 (wraps)", int8_max + 1),
        ("x * 1 + 0", x * 1 + 0),
        ("x * 0", x * 0),
        ("dtype of int32 x + int64 n", (x + n).dtype),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tessel", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="text-format files (default: examples/*.py)")
    args = ap.parse_args(argv)
    files = args.files or sorted(EXAMPLES.glob("*.py"))
    print(f"tessel {__version__} ({LIB_PATH})")
    failures = run_examples(files) if files else 0
    if not files:
        print("no examples found")

    print("==== expression helpers (constant folding; the analyzer is not in this build) ====")
    for label, value in helper_answers():
        print(f"{label:30} -> {value}")
    if failures:
        print(f"{failures} of {len(files)} examples failed", file=sys.stderr)
        return 1
    print(f"{len(files)} examples parsed, printed and round-tripped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
