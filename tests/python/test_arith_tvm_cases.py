"""The analyzer on the cases of Apache TVM's own arithmetic tests (bench/arith/tvm_cases.txt,
bench/arith_tvm_cases.py): every rewrite_simplify answer is a fixed point (two rules that undo
each other would cycle until the step budget), Z3 finds no counterexample to `before == after`
under the analyzer's own semantics, and the share of TVM's answers reached does not fall below
what it is now (docs/performance.md, "TVM's own test cases")."""

import sys
from pathlib import Path

import pytest

from tessel import arith, ir

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import arith_tvm_cases as cases_mod  # noqa: E402

CASES = cases_mod.read_cases(cases_mod.DEFAULT_CASES)
# Reached now: 512 (wrap) and 746 (no_overflow) of 829.
FLOOR = {"wrap": 505, "no_overflow": 740}


@pytest.mark.parametrize("mode", ["wrap", "no_overflow"])
def test_tvm_cases(mode):
    impl = cases_mod.TesselCases()
    met = 0
    problems = []
    for c in CASES:
        try:
            names, ana, scopes = cases_mod.setup(impl, c, mode)
        except Exception:
            continue  # a case this side cannot state (counted by the bench)
        with scopes:
            try:
                before = impl.parse(names, c["expr"])
                want = impl.parse(names, c["want"])
            except ValueError:
                continue
            call = getattr(ana, c["call"])
            after = call(before)
            # (The canonical simplifier is not always idempotent, docs/arith.md.)
            again = call(after) if c["call"] == "rewrite_simplify" else after
            if not ir.structural_equal(again, after):
                problems.append(f"line {c['line']}: not a fixed point: {after} -> {again}")
            if ir.structural_equal(after, want) or cases_mod.text_size(str(after)) <= \
                    cases_mod.text_size(str(want)):
                met += 1
            scalar_int = before.dtype == after.dtype and before.dtype.lanes == 1 and \
                str(before.dtype).startswith(("int", "uint", "bool"))
            if arith.z3_available() and scalar_int and not ir.structural_equal(before, after):
                cex = ana.z3_counterexample(ir.EQ(before, after))
                if cex:
                    problems.append(f"line {c['line']}: {before} -> {after} is wrong at {cex}")
    assert not problems, "\n".join(problems[:20])
    assert met >= FLOOR[mode], f"{mode}: {met} of {len(CASES)} reach TVM's answer"
