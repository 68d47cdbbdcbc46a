"""Writes bench/arith/tvm_cases.txt: the simplification cases of Apache TVM's own arithmetic tests,
as queries in the corpus format of bench/arith/gen_corpus.py, so that tessel is measured on what
TVM's users expect and not only on a corpus written here.

    <tvm-venv>/bin/python bench/arith/extract_tvm_cases.py TVM_TESTS_DIR [OUT]

TVM_TESTS_DIR holds TVM's ``tests/python/arith`` files (from a checkout of apache/tvm of the
installed release). It runs under a Python with apache-tvm (0.27 spells the IR module ``tirx``)
and pytest, imports the test modules with recording hooks, and writes one query per case:

- test_arith_rewrite_simplify.py: every ``TestCase(before, expected, preconditions)`` of the
  ``BaseCompare`` classes, asked with ``rewrite_simplify`` under the preconditions (extensions as
  the class sets them);
- test_arith_canonical_simplify.py: every ``CanonicalChecker.verify(data, expected)``, asked with
  ``canonical_simplify`` under the bounds the test gave the analyzer (``update``/``bind``).

Extra fields (besides those gen_corpus.py describes):
    call rewrite_simplify|canonical_simplify|simplify   the analyzer method TVM's test calls
    family NAME        the TVM test class or function the case comes from
    ext NAME           TVM analyzer extensions the test enables (TVM side only)
    bound NAME=LO..HI  NAME lies in [LO, HI] (TVM: ``update(var, ConstIntBound)``)
Cases whose expected answer is an exception, or that print something tessel's expression syntax
cannot state (buffer loads, calls of other intrinsics), are skipped and counted on stderr.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import tvm
import tvm.testing
from tvm import tirx

if not hasattr(tvm, "arith"):  # 0.27 names the module tvm.sym; TVM's main branch tvm.arith again
    import tvm.sym

    tvm.arith = tvm.sym
    sys.modules["tvm.arith"] = tvm.sym

ROOT = Path(__file__).resolve().parents[2]

_recorded_params: list[tuple] = []


def _parameter(*values, ids=None, by_dict=None):
    _recorded_params.append(values)
    return list(values)


def _load(path: Path, name: str):
    """Runs the test module one top-level statement at a time, so that a class using something
    this TVM release lacks (the tests are newer or older than the wheel) is skipped, not fatal."""
    import ast
    import types

    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    sys.modules[name] = mod
    tree = ast.parse(path.read_text(), str(path))
    for stmt in tree.body:
        code = compile(ast.Module([stmt], []), str(path), "exec")
        try:
            exec(code, mod.__dict__)
        except Exception as err:
            what = getattr(stmt, "name", type(stmt).__name__)
            print(f"  {path.name}:{stmt.lineno} {what}: skipped ({type(err).__name__}: "
                  f"{str(err).splitlines()[-1][:80] if str(err) else ''})", file=sys.stderr)
    return mod


def _vars(*exprs) -> dict:
    """Free variables of the expressions: name -> dtype (None when one name has two dtypes)."""
    from tvm.tirx.analysis import undefined_vars

    out: dict = {}
    for e in exprs:
        if not tvm.ir.is_prim_expr(e):
            continue
        for v in undefined_vars(e):
            dt = str(v.ty)
            out[v.name] = None if v.name in out and out[v.name] != dt else dt
    return out


_BAD_TEXT = ("T.call", "T.Buffer", "buffer", "[", "T.vscale", "T.reinterpret", "T.clz",
             "T.shift_left", "min_value", "T.Let")


def _obj(e):
    return e.asobject() if hasattr(e, "asobject") else e  # EqualOp / NotEqualOp


def _text(e) -> str | None:
    e = _obj(e)
    if isinstance(e, bool):
        return "True" if e else "False"
    if isinstance(e, int):
        return str(e)
    t = str(e)
    if "\n" in t or any(b in t for b in _BAD_TEXT):
        return None
    return t


def _line(call, family, before, expected, assumes=(), bounds=(), ext=None):
    before, expected = _obj(before), _obj(expected)
    assumes = [_obj(a) for a in assumes]
    b, w = _text(before), _text(expected)
    if b is None or w is None:
        return None
    fields = ["simplify", b, f"call {call}", f"family {family}"]
    vs = _vars(before, expected, *assumes)
    if any(dt is None for dt in vs.values()):
        return None
    for name, dt in sorted(vs.items()):
        fields.append(f"var {name}:{dt}")
    for name, lo, hi in bounds:
        fields.append(f"bound {name}={lo}..{hi}")
    for a in assumes:
        t = _text(a)
        if t is None:
            return None
        fields.append(f"assume {t}")
    if ext:
        fields.append(f"ext {ext}")
    fields.append(f"want {w}")
    for f in fields:
        if " ; " in f:
            return None
    return " ; ".join(fields)


def rewrite_cases(tests: Path) -> tuple[list[str], int]:
    tvm.testing.parameter = _parameter
    mod = _load(tests / "test_arith_rewrite_simplify.py", "tvm_rewrite_tests")
    out, skipped = [], 0
    for cname in dir(mod):
        cls = getattr(mod, cname)
        if not (isinstance(cls, type) and issubclass(cls, mod.BaseCompare)):
            continue
        cases = getattr(cls, "test_case", None)
        if not isinstance(cases, list):
            continue
        ext = cls.extensions
        ext_name = None if ext == tvm.arith.Extension.NoExtensions else str(ext).split(".")[-1]
        for tc in cases:
            if isinstance(tc.expected, type):
                skipped += 1
                continue
            assumes = []
            if tc.preconditions is not None:
                c = tc.constraint
                assumes = [c]
            line = _line("rewrite_simplify", cname, tc.before, tc.expected, assumes, (), ext_name)
            if line is None:
                skipped += 1
                continue
            out.append(line)
    return out, skipped


def canonical_cases(tests: Path) -> tuple[list[str], int]:
    out: list[str] = []
    skipped = [0]
    real_analyzer = tvm.arith.Analyzer

    class Recording:
        """TVM's Analyzer (a tvm-ffi object that takes no new attributes), with the bounds a test
        gives it recorded."""

        def __init__(self, *a, **k):
            self._real = real_analyzer(*a, **k)
            self._bounds: dict = {}

        def update(self, var, info, override=False):
            self._bounds[var.name] = (var, info.min_value, info.max_value)
            return self._real.update(var, info, override)

        def bind(self, var, value, allow_override=False):
            rng = value if isinstance(value, tvm.ir.Range) else None
            if rng is not None:
                try:
                    lo, ext = int(rng.min), int(rng.extent)
                    self._bounds[var.name] = (var, lo, lo + ext - 1)
                except (TypeError, ValueError):
                    pass  # a symbolic range: not recorded (the case then lacks that fact)
            return self._real.bind(var, value, allow_override)

        def __getattr__(self, name):
            return getattr(self._real, name)

    tvm.arith.Analyzer = Recording
    try:
        mod = _load(tests / "test_arith_canonical_simplify.py", "tvm_canonical_tests")
    finally:
        tvm.arith.Analyzer = real_analyzer
    family = ["?"]
    orig_verify = mod.CanonicalChecker.verify

    def verify(self, data, expected):
        bounds = []
        inf = tvm.arith.ConstIntBound.POS_INF
        used = _vars(data, expected)
        for name, (var, lo, hi) in sorted(self.analyzer._bounds.items()):
            if name not in used:
                continue
            lo_t = "-inf" if lo <= -inf else str(lo)
            hi_t = "inf" if hi >= inf else str(hi)
            bounds.append((name, lo_t, hi_t))
        line = _line("canonical_simplify", family[0], data, self._convert(expected), (), bounds)
        if line is None:
            skipped[0] += 1
        else:
            out.append(line)
        try:
            orig_verify(self, data, expected)
        except AssertionError:
            pass  # the case is recorded with TVM's expected answer; TVM's own result is measured

    mod.CanonicalChecker.verify = verify
    tvm.arith.Analyzer = Recording
    try:
        for name in dir(mod):
            if name.startswith("test_") and callable(getattr(mod, name)):
                family[0] = name
                try:
                    getattr(mod, name)()
                except Exception as err:  # a test that needs something else (a target, te)
                    print(f"  {name}: stopped early ({type(err).__name__})", file=sys.stderr)
    finally:
        tvm.arith.Analyzer = real_analyzer
    return out, skipped[0]


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    tests = Path(sys.argv[1])
    dest = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "bench" / "arith" / "tvm_cases.txt"
    rw, rw_skip = rewrite_cases(tests)
    cn, cn_skip = canonical_cases(tests)
    seen, lines = set(), []
    for line in rw + cn:
        if line not in seen:
            seen.add(line)
            lines.append(line)
    header = [
        "# Simplification cases of Apache TVM's own tests (tests/python/arith of apache/tvm, "
        f"apache-tvm {tvm.__version__}),",
        "# written by bench/arith/extract_tvm_cases.py (the format is described there); do not "
        "edit.",
        f"# {len(rw)} rewrite_simplify cases ({rw_skip} skipped), {len(cn)} canonical_simplify "
        f"cases ({cn_skip} skipped), {len(lines)} after removing duplicates.",
    ]
    dest.write_text("\n".join(header + lines) + "\n")
    print(f"wrote {dest}: {len(lines)} cases (skipped {rw_skip} + {cn_skip})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
