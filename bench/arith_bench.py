"""Times the arithmetic analyzer from Python on bench/arith/corpus.txt (format: see
bench/arith/gen_corpus.py): tessel's ``tessel.arith.Analyzer`` and, as the peer, Apache TVM's
``Analyzer`` (``tvm.sym.Analyzer`` in 0.27; ``tvm.arith.Analyzer`` before), on the same queries.

    python bench/arith_bench.py [--corpus FILE] [--reps N] [--tvm-python PYTHON] [--verbose]

The tessel side runs in this interpreter; with ``--tvm-python`` the script re-runs itself with
``--impl tvm`` under that interpreter (a separate virtual environment with apache-tvm: the two
packages bring different tvm-ffi builds, so they do not share a process) and prints both.

Method (both sides): per query, one analyzer is set up (variables, bindings, assumption scopes),
the call is made 3 times to warm up, then timed in 5 batches of ``--reps`` / 5 calls on that same
analyzer; the query's time is the median batch's mean per call. Reported: median, p99 and mean
over the queries. Quality: how many simplify results are structurally equal to the corpus's
``want`` form or no bigger (``text_size``: names, numbers and operators of the printed form), how
many of the true conditions are proved, and how many false ones are (wrongly) proved.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "bench" / "arith" / "corpus.txt"


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|//|<=|>=|==|!=|<<|>>|[-+*/%<>^&|~]")


def text_size(text: str) -> int:
    """The size of a printed expression: names, numbers and operators (not parentheses, commas or
    the `T.` prefix), so that the two sides' printers compare fairly."""
    return sum(1 for tok in _TOKEN.findall(text) if tok != "T")


def read_corpus(path: Path) -> list[dict]:
    out = []
    for no, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in line.split(" ; ")]
        q = {"line": no, "kind": fields[0], "expr": fields[1], "setup": [], "want": None,
             "expect": None}
        if q["kind"] not in ("simplify", "prove"):
            raise SystemExit(f"{path}:{no}: unknown kind {q['kind']!r}")
        for f in fields[2:]:
            key, _, value = f.partition(" ")
            if key in ("var", "bind", "assume"):
                q["setup"].append((key, value))
            elif key == "want":
                q["want"] = value
            elif key == "expect" and value in ("true", "false"):
                q["expect"] = value == "true"
            else:
                raise SystemExit(f"{path}:{no}: unknown field {f!r}")
        out.append(q)
    return out


# ---- the two implementations: parse a query's text, set up an analyzer, make the calls ----

class TesselImpl:
    name = "tessel"

    def __init__(self) -> None:
        try:
            import tessel  # noqa: F401
        except ImportError:
            sys.path.insert(0, str(ROOT / "python"))
        import tessel
        from tessel import arith, ir

        self.tessel, self.arith, self.ir = tessel, arith, ir
        self.version = tessel.__version__

    def new_scope(self):
        return {}

    def var(self, names, name, dtype):
        names[name] = self.ir.Var(name, dtype)

    def parse(self, names, text):
        while True:
            try:
                return self.tessel.parse_expr(text, names)
            except ValueError as err:
                msg = str(err)
                marker = "error: unknown name '"
                at = msg.find(marker)
                if at < 0:
                    raise
                name = msg[at + len(marker):].split("'", 1)[0]
                if name in names:
                    raise
                names[name] = self.ir.Var(name, "int32")

    def analyzer(self):
        return self.arith.Analyzer()

    def range(self, lo, hi):
        return self.ir.Range(lo, hi - lo)

    def equal(self, a, b):
        return self.ir.structural_equal(a, b)

    def to_text(self, e):
        return str(e)


class TvmImpl:
    name = "tvm"

    def __init__(self) -> None:
        import tvm

        try:
            from tvm import tirx as tir
        except ImportError:  # releases before 0.25
            from tvm import tir
        try:
            from tvm.sym import Analyzer
        except ImportError:
            from tvm.arith import Analyzer
        self.tvm, self.tir, self.Analyzer = tvm, tir, Analyzer
        self.version = tvm.__version__
        t = tir
        self.calls = {
            "floordiv": t.floordiv, "floormod": t.floormod, "truncdiv": t.truncdiv,
            "truncmod": t.truncmod, "min": t.min, "max": t.max, "Select": t.Select,
            "Ramp": t.Ramp, "Broadcast": t.Broadcast,
            "Cast": lambda dtype, v: t.Cast(dtype, v),
            "int64": lambda v: t.IntImm("int64", v), "int32": lambda v: t.IntImm("int32", v),
        }

    def new_scope(self):
        return {}

    def var(self, names, name, dtype):
        names[name] = self.tir.Var(name, dtype)

    def parse(self, names, text):
        e = self._eval(ast.parse(text, mode="eval").body, names)
        return self.tir.const(e, "int32") if isinstance(e, int) else e

    def _eval(self, n, names):
        t = self.tir
        ev = lambda x: self._eval(x, names)  # noqa: E731
        if isinstance(n, ast.Constant):
            if isinstance(n.value, bool):
                return t.const(n.value, "bool")
            return n.value
        if isinstance(n, ast.Name):
            if n.id in ("True", "False"):
                return t.const(n.id == "True", "bool")
            if n.id not in names:
                names[n.id] = t.Var(n.id, "int32")
            return names[n.id]
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.FloorDiv: lambda: t.floordiv(a, b), ast.Mod: lambda: t.floormod(a, b),
                   ast.BitXor: lambda: t.bitwise_xor(a, b), ast.BitAnd: lambda: t.bitwise_and(a, b),
                   ast.BitOr: lambda: t.bitwise_or(a, b), ast.LShift: lambda: t.shift_left(a, b),
                   ast.RShift: lambda: t.shift_right(a, b)}
            return ops[type(n.op)]()
        if isinstance(n, ast.UnaryOp):
            a = ev(n.operand)
            if isinstance(n.op, ast.USub):
                return -a
            if isinstance(n.op, ast.Not):
                return t.Not(a)
            if isinstance(n.op, ast.Invert):
                return t.bitwise_not(a)
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            make = t.And if isinstance(n.op, ast.And) else t.Or
            out = vals[0]
            for v in vals[1:]:
                out = make(out, v)
            return out
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            a, b = ev(n.left), ev(n.comparators[0])
            ops = {ast.Lt: t.LT, ast.LtE: t.LE, ast.Gt: t.GT, ast.GtE: t.GE, ast.Eq: t.EQ,
                   ast.NotEq: t.NE}
            return ops[type(n.ops[0])](a, b)
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and isinstance(n.func.value, ast.Name) and n.func.value.id == "T"
                and n.func.attr in self.calls):
            return self.calls[n.func.attr](*[ev(a) for a in n.args])
        raise ValueError(f"cannot read {ast.dump(n)} for TVM")

    def analyzer(self):
        return self.Analyzer()

    def range(self, lo, hi):
        return self.tvm.ir.Range(lo, hi)

    def equal(self, a, b):
        equal = getattr(self.tvm.ir, "structural_equal", None)
        if equal is None:  # 0.27 moved it to tvm_ffi
            import tvm_ffi

            equal = tvm_ffi.structural_equal
        return bool(equal(a, b))

    def to_text(self, e):
        return str(e)


def time_call(call, arg, reps: int):
    """3 warm-up calls, then 5 batches of reps // 5 calls: (the median batch's mean per call in
    microseconds, the last result). The median batch counts: a batch slowed by another process
    does not."""
    for _ in range(3):
        r = call(arg)
    per_batch = max(1, reps // 5)
    batch_us = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            r = call(arg)
        batch_us.append((time.perf_counter() - t0) / per_batch * 1e6)
    return statistics.median(batch_us), r


def run(impl, queries: list[dict], reps: int, verbose: bool) -> dict:
    times = {"simplify": [], "prove": []}
    want_total = want_met = true_total = true_proved = false_total = false_proved = 0
    for q in queries:
        names = impl.new_scope()
        ana = impl.analyzer()
        with contextlib.ExitStack() as scopes:
            for key, value in q["setup"]:
                if key == "var":
                    name, dtype = value.split(":")
                    impl.var(names, name.strip(), dtype.strip())
            for key, value in q["setup"]:
                if key == "bind":
                    name, rhs = (s.strip() for s in value.split("=", 1))
                    var = impl.parse(names, name)
                    if ":" in rhs:
                        lo, hi = (impl.parse(names, s) for s in rhs.split(":", 1))
                        ana.bind(var, impl.range(lo, hi))
                    else:
                        ana.bind(var, impl.parse(names, rhs))
            for key, value in q["setup"]:
                if key == "assume":
                    scopes.enter_context(ana.constraint_scope(impl.parse(names, value)))
            e = impl.parse(names, q["expr"])
            call = ana.simplify if q["kind"] == "simplify" else ana.can_prove
            us, r = time_call(call, e, reps)
            times[q["kind"]].append(us)
            if q["kind"] == "simplify" and q["want"] is not None:
                want_total += 1
                want = impl.parse(names, q["want"])
                # An equivalent result no bigger than the wanted form counts (a different order
                # of the terms of a sum is as simple).
                met = impl.equal(r, want) or text_size(impl.to_text(r)) <= text_size(
                    impl.to_text(want))
                want_met += met
                if verbose and not met:
                    print(f"[{impl.name}] line {q['line']}: {q['expr']} -> {impl.to_text(r)}"
                          f"   (want {q['want']})", file=sys.stderr)
            elif q["kind"] == "prove" and q["expect"] is not None:
                proved = bool(r)
                if q["expect"]:
                    true_total += 1
                    true_proved += proved
                else:
                    false_total += 1
                    false_proved += proved
                if verbose and proved != q["expect"]:
                    print(f"[{impl.name}] line {q['line']}: {q['expr']}: "
                          f"{'PROVED a false condition' if proved else 'not proved'}",
                          file=sys.stderr)

    def stats(v):
        s = sorted(v)
        p99 = s[min(len(s) - 1, round(0.99 * (len(s) - 1)))] if s else 0.0
        return {"n": len(v), "median_us": statistics.median(v) if v else 0.0, "p99_us": p99,
                "mean_us": statistics.fmean(v) if v else 0.0}

    return {"impl": impl.name, "version": impl.version, "reps": reps,
            "simplify": stats(times["simplify"]), "prove": stats(times["prove"]),
            "all": stats(times["simplify"] + times["prove"]),
            "want": [want_met, want_total], "true_proved": [true_proved, true_total],
            "false_proved": [false_proved, false_total]}


def report(results: list[dict]) -> None:
    print(f"{'':22}" + "".join(f"{r['impl'] + ' ' + r['version']:>26}" for r in results))
    for kind, label in (("simplify", "simplify"), ("prove", "can_prove"), ("all", "all queries")):
        for key in ("median_us", "p99_us", "mean_us"):
            print(f"{label + ' ' + key.replace('_us', ' us'):22}"
                  + "".join(f"{r[kind][key]:>26.2f}" for r in results))
    if len(results) == 2:
        # How many times faster the first is: the peer's time over ours (the mean over all queries
        # is the time to answer the whole corpus, per query).
        a, b = results
        for kind, key, label in (("simplify", "median_us", "simplify median"),
                                 ("simplify", "mean_us", "simplify mean"),
                                 ("prove", "median_us", "can_prove median"),
                                 ("prove", "mean_us", "can_prove mean"),
                                 ("all", "mean_us", "all queries mean")):
            ratio = b[kind][key] / a[kind][key] if a[kind][key] else float("nan")
            print(f"{'speedup ' + label:32}{ratio:>16.2f}x")
    for key, label in (("want", "simplify <= want size"), ("true_proved", "proved (true)"),
                       ("false_proved", "proved (false!)")):
        print(f"{label:22}" + "".join(f"{f'{r[key][0]} of {r[key][1]}':>26}" for r in results))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--impl", choices=("tessel", "tvm"), default="tessel")
    ap.add_argument("--tvm-python", help="a Python with apache-tvm: also measure TVM")
    ap.add_argument("--json", action="store_true", help="print the result as JSON only")
    ap.add_argument("--verbose", action="store_true", help="list the queries that miss (stderr)")
    args = ap.parse_args()
    queries = read_corpus(args.corpus)
    impl = TesselImpl() if args.impl == "tessel" else TvmImpl()
    result = run(impl, queries, args.reps, args.verbose)
    if args.json:
        print(json.dumps(result))
        return 0
    results = [result]
    if args.tvm_python:
        cmd = [args.tvm_python, __file__, "--impl", "tvm", "--json", "--corpus", str(args.corpus),
               "--reps", str(args.reps)] + (["--verbose"] if args.verbose else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        sys.stderr.write(out.stderr)
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"corpus {args.corpus} ({len(queries)} queries), {args.reps} reps per query, "
          "one analyzer per query (reused)")
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
