"""Answers and time per call on the cases of Apache TVM's own arithmetic tests
(bench/arith/tvm_cases.txt, written by bench/arith/extract_tvm_cases.py): tessel in both overflow
modes, and TVM 0.27 in the same run.

    python bench/arith_tvm_cases.py [--cases FILE] [--reps N] [--tvm-python PYTHON] [--verbose]
                                    [--family NAME] [--json]

Each case is asked as TVM's test asks it (the same expression, variables, bounds and
preconditions; ``rewrite_simplify`` or ``canonical_simplify``) of a fresh analyzer. Reported per
implementation:

- ``TVM's answer``: the result is structurally equal to the answer TVM's test expects, or no larger
  (``text_size`` of bench/arith_bench.py: names, numbers and operators of the printed form);
- ``... of those valid under wrap``: the same, counted only over the cases whose expected answer
  equals the input for every value when signed integers wrap around (decided here by tessel's Z3
  prover; cases it cannot decide count as valid). tessel's default mode must not reach the others;
- ``facts proved``: ``can_prove(before == expected)`` (the case read as a fact), over the facts TVM
  proves at its default strength;
- ``time per call``: per case, 3 warm-up calls then ``--reps`` calls on the same analyzer (5
  batches, the median batch's mean), summarized as median, p99 and mean over the cases.

The tessel side runs twice: the default (exact wrap-around) analyzer and
``Analyzer(assume_no_overflow=True)`` (signed integers of 32 bits and wider do not overflow, as
TVM assumes). With ``--tvm-python`` the script re-runs itself with ``--impl tvm`` under that
interpreter (a venv with apache-tvm; the two packages bring different tvm-ffi builds).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from arith_bench import TesselImpl, TvmImpl, text_size, time_call  # noqa: E402

DEFAULT_CASES = ROOT / "bench" / "arith" / "tvm_cases.txt"


def read_cases(path: Path) -> list[dict]:
    out = []
    for no, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(" ; ")]
        c = {"line": no, "expr": fields[1], "vars": [], "bounds": [], "assume": [], "ext": None,
             "call": "simplify", "family": "", "want": None}
        for f in fields[2:]:
            key, _, value = f.partition(" ")
            if key == "var":
                name, dtype = value.split(":")
                c["vars"].append((name, dtype))
            elif key == "bound":
                name, rng = value.split("=", 1)
                lo, hi = rng.split("..")
                c["bounds"].append((name, lo, hi))
            elif key == "assume":
                c["assume"].append(value)
            elif key in ("call", "family", "ext", "want"):
                c[key] = value
            else:
                raise SystemExit(f"{path}:{no}: unknown field {f!r}")
        out.append(c)
    return out


class TvmCases(TvmImpl):
    """TVM's side: the test's own calls; ``update`` with a ConstIntBound for a bound."""

    def __init__(self) -> None:
        super().__init__()
        import tvm
        from tvm.script import tirx as T

        try:
            from tvm.sym import ConstIntBound, Extension
        except ImportError:
            from tvm.arith import ConstIntBound, Extension
        self.ConstIntBound, self.Extension = ConstIntBound, Extension
        t = self.tir
        self.calls.update({
            "Div": t.truncdiv, "Mod": t.truncmod, "if_then_else": t.if_then_else,
            "EQ": t.EQ, "NE": t.NE,
        })

        def const(dtype):
            # `True` is read as a bool constant already; T.bool(True) keeps it.
            return lambda v: v if not isinstance(v, (int, float)) else t.const(v, dtype)

        for dt in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float16", "float32", "float64"):
            self.calls[dt] = const(dt)
        self._T, self._tvm = T, tvm

    def analyzer_for(self, case, mode):
        a = self.Analyzer()
        if case["ext"]:
            a.enabled_extensions = getattr(self.Extension, case["ext"])
        return a

    def bound(self, ana, var, lo, hi):
        inf = self.ConstIntBound.POS_INF
        lo = -inf if lo == "-inf" else int(lo)
        hi = inf if hi == "inf" else int(hi)
        ana.update(var, self.ConstIntBound(lo, hi), True)

    def eq(self, a, b):
        return self.tir.EQ(a, b)


class TesselCases(TesselImpl):
    def eq(self, a, b):
        return self.ir.EQ(a, b)

    def analyzer_for(self, case, mode):
        if mode == "no_overflow":
            return self.arith.Analyzer(assume_no_overflow=True)
        return self.arith.Analyzer()

    def bound(self, ana, var, lo, hi):
        if lo != "-inf" and hi != "inf":
            ana.bind(var, self.ir.Range(int(lo), int(hi) - int(lo) + 1))
            return None
        conds = []
        if lo != "-inf":
            conds.append(var >= int(lo))
        if hi != "inf":
            conds.append(var <= int(hi))
        return conds


def setup(impl, case, mode):
    names = impl.new_scope()
    for name, dtype in case["vars"]:
        impl.var(names, name, dtype)
    ana = impl.analyzer_for(case, mode)
    scopes = contextlib.ExitStack()
    for name, lo, hi in case["bounds"]:
        more = impl.bound(ana, names[name], lo, hi)
        for cond in more or ():
            scopes.enter_context(ana.constraint_scope(cond))
    for text in case["assume"]:
        scopes.enter_context(ana.constraint_scope(impl.parse(names, text)))
    return names, ana, scopes


def wrap_validity(cases: list[dict]) -> list[bool | None]:
    """Whether each case's expected answer equals its input for every value under wrap-around
    (tessel's Z3 prover: True proved, False refuted with a counterexample, None unknown)."""
    impl = TesselCases()
    out = []
    for c in cases:
        try:
            names, ana, scopes = setup(impl, c, "wrap")
            with scopes:
                before = impl.parse(names, c["expr"])
                want = impl.parse(names, c["want"])
                if before.dtype != want.dtype or before.dtype.lanes != 1:
                    out.append(None)
                    continue
                fact = impl.eq(before, want)
                if ana.can_prove(fact):
                    out.append(True)
                elif impl.arith.z3_available() and ana.z3_counterexample(fact):
                    out.append(False)
                else:
                    out.append(None)
        except Exception:
            out.append(None)
    return out


def run(impl, cases: list[dict], mode: str, reps: int, verbose: bool) -> dict:
    results = []
    for c in cases:
        r = {"line": c["line"], "met": False, "proved": False, "us": None, "error": None}
        try:
            names, ana, scopes = setup(impl, c, mode)
            with scopes:
                e = impl.parse(names, c["expr"])
                want = impl.parse(names, c["want"])
                r["us"], out = time_call(getattr(ana, c["call"]), e, reps)
                r["met"] = bool(impl.equal(out, want)) or text_size(impl.to_text(out)) <= text_size(
                    impl.to_text(want))
                r["out"] = impl.to_text(out)
                try:
                    r["proved"] = bool(ana.can_prove(impl.eq(e, want)))
                except Exception:
                    r["proved"] = False
        except Exception as err:  # a case this side cannot state or answer
            r["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:120] if str(err) else ''}"
        if verbose and not r["met"]:
            print(f"[{impl.name}/{mode}] {c['family']} line {c['line']}: {c['expr']} -> "
                  f"{r.get('out', r['error'])}   (TVM expects {c['want']})", file=sys.stderr)
        results.append(r)
    return {"impl": impl.name, "version": impl.version, "mode": mode, "cases": results}


def summarize(res: dict, valid: list, tvm_proved: list | None) -> dict:
    cs = res["cases"]
    us = sorted(r["us"] for r in cs if r["us"] is not None)
    met = sum(r["met"] for r in cs)
    valid_idx = [i for i, v in enumerate(valid) if v is not False]
    met_valid = sum(cs[i]["met"] for i in valid_idx)
    facts = [i for i in range(len(cs)) if tvm_proved is None or tvm_proved[i]]
    proved = sum(cs[i]["proved"] for i in facts)
    p99 = us[min(len(us) - 1, round(0.99 * (len(us) - 1)))] if us else 0.0
    return {"label": f"{res['impl']} {res['version']} ({res['mode']})", "met": (met, len(cs)),
            "met_valid": (met_valid, len(valid_idx)), "proved": (proved, len(facts)),
            "errors": sum(r["error"] is not None for r in cs),
            "median_us": statistics.median(us) if us else 0.0, "p99_us": p99,
            "mean_us": statistics.fmean(us) if us else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path, default=DEFAULT_CASES)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--impl", choices=("tessel", "tvm"), default="tessel")
    ap.add_argument("--mode", choices=("wrap", "no_overflow", "both"), default="both")
    ap.add_argument("--family", help="only the cases of this TVM test class or function")
    ap.add_argument("--tvm-python", help="a Python with apache-tvm: also measure TVM")
    ap.add_argument("--json", action="store_true", help="print raw results as JSON only")
    ap.add_argument("--verbose", action="store_true", help="list the misses (stderr)")
    args = ap.parse_args()
    cases = read_cases(args.cases)
    if args.family:
        cases = [c for c in cases if c["family"] == args.family]
    if args.impl == "tvm":
        res = run(TvmCases(), cases, "tvm", args.reps, args.verbose)
        print(json.dumps(res))
        return 0
    impl = TesselCases()
    modes = ("wrap", "no_overflow") if args.mode == "both" else (args.mode,)
    runs = [run(impl, cases, m, args.reps, args.verbose) for m in modes]
    tvm_run = None
    if args.tvm_python:
        cmd = [args.tvm_python, __file__, "--impl", "tvm", "--cases", str(args.cases),
               "--reps", str(args.reps)] + (["--verbose"] if args.verbose else [])
        if args.family:
            cmd += ["--family", args.family]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        sys.stderr.write("\n".join(l for l in out.stderr.splitlines() if "Warning" not in l))
        tvm_run = json.loads(out.stdout.strip().splitlines()[-1])
    if args.json:
        print(json.dumps({"runs": runs, "tvm": tvm_run}))
        return 0
    valid = wrap_validity(cases)
    tvm_proved = [r["proved"] for r in tvm_run["cases"]] if tvm_run else None
    rows = [summarize(r, valid, tvm_proved) for r in runs + ([tvm_run] if tvm_run else [])]
    n_invalid = sum(v is False for v in valid)
    print(f"cases {args.cases} ({len(cases)} cases; TVM's expected answer is refuted under "
          f"wrap-around for {n_invalid}, proved for {sum(v is True for v in valid)}), "
          f"{args.reps} reps per case")
    w = max(len(r["label"]) for r in rows) + 2
    print(f"{'':34}" + "".join(f"{r['label']:>{w}}" for r in rows))

    def frac(p):
        return f"{p[0]} of {p[1]} ({100.0 * p[0] / p[1]:.0f}%)" if p[1] else "-"

    for key, label in (("met", "TVM's answer or no larger"),
                       ("met_valid", "  of those valid under wrap"),
                       ("proved", "facts proved (TVM proves them)"),
                       ("errors", "cases not stated/answered")):
        print(f"{label:34}" + "".join(
            f"{frac(r[key]) if isinstance(r[key], tuple) else r[key]:>{w}}" for r in rows))
    for key in ("median_us", "p99_us", "mean_us"):
        print(f"{'time per call ' + key.replace('_us', ' us'):34}"
              + "".join(f"{r[key]:>{w}.2f}" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
