"""IR 100,000 levels deep through every family of recursive walk (docs/reliability.md, "Deep IR").

Each walk runs in a child process, so a stack overflow fails its test instead of killing pytest.
A walk passes when it finishes, or when it stops with an error that names tessel's depth limit.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

DEPTH = 100_000

# Builds the deep IR iteratively, so Python itself never recurses. `deep_expr` is a left-deep Add
# chain x + 1 + 1 + ...; `deep_right` a right-deep one 1 + (1 + (... + x)); `deep_select` and
# `deep_let` nest Select and Let; `deep_stmt` is a LetStmt chain, `deep_if` IfThenElse in
# SeqStmt.
PRELUDE = textwrap.dedent(
    f"""
    import re, sys
    import tessel
    from tessel import ir
    from tessel.arith import Analyzer
    N = {DEPTH}
    x = ir.Var("x", "int32")

    def deep_expr(n=N):
        e = x
        for _ in range(n):
            e = ir.Add(e, ir.const(1))
        return e

    def deep_right(n=N):
        e = x
        for _ in range(n):
            e = ir.Add(ir.const(1), e)
        return e

    def deep_select(n=N):
        e = x
        for i in range(n):
            e = ir.Select(x < i, e, x)
        return e

    def deep_let(n=N):
        e = x
        for i in range(n):
            v = ir.Var("v", "int32")
            e = ir.Let(v, e, v + 1)
        return e

    def deep_stmt(n=N, A=None):
        A = A or ir.decl_buffer("A", [1], "int32")
        vs = [ir.Var("v%d" % i, "int32") for i in range(n)]
        s = ir.BufferStore(A, vs[-1], [0])
        for i in range(n - 1, -1, -1):
            s = ir.LetStmt(vs[i], (vs[i - 1] if i else x) + 1, s)
        return s

    def deep_if(n=N, A=None):
        A = A or ir.decl_buffer("A", [1], "int32")
        s = ir.BufferStore(A, x, [0])
        for i in range(n):
            s = ir.IfThenElse(x > i, ir.SeqStmt([s, ir.BufferStore(A, x, [0])]))
        return s

    def func(body, A):
        Ah = ir.Var("A_h", "handle")
        return ir.PrimFunc([x, Ah], body, {{Ah: A}}, {{"global_symbol": "deep"}})

    def limited(err):
        # The documented limit appears in the message as "deeper than <N> levels".
        return re.search(r"deeper than [0-9,]+ levels", str(err)) is not None
    """
)


def run_walk(code: str, timeout: float = 60) -> str:
    """Runs PRELUDE + code in a child; returns its stdout. The code prints OK, or LIMIT when a
    walk stopped at the documented limit (any other exception fails the test)."""
    body = textwrap.indent(textwrap.dedent(code), "    ")
    script = (
        PRELUDE
        + "try:\n"
        + body
        + "\n    print('OK')\n"
        + "except Exception as err:\n"
        + "    if not limited(err):\n"
        + "        raise\n"
        + "    print('LIMIT', str(err).splitlines()[0])\n"
        # Leaves without dropping the IR: destruction is a family of its own, tested by name.
        + "sys.stdout.flush()\n"
        + "import os; os._exit(0)\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "python")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode} (negative: killed by that signal, -11 is a stack "
        f"overflow)\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-4000:]}"
    )
    return proc.stdout


def ok_or_limit(out: str) -> None:
    assert "OK" in out or "LIMIT" in out, out


# ---- construction and destruction ----


def test_expr_chains_destroyed_when_last_reference_drops():
    code = ""
    for shape in ["deep_expr", "deep_right", "deep_select", "deep_let"]:
        code += f"e = {shape}()\ndel e\n"
    assert "OK" in run_walk(code)


@pytest.mark.parametrize("shape", ["deep_stmt", "deep_if"])
def test_stmt_chain_destroyed_when_last_reference_drops(shape):
    out = run_walk(f"s = {shape}()\ndel s\nimport gc; gc.collect()")
    assert "OK" in out


# ---- printer and parser ----


def test_print_deep_expr():
    ok_or_limit(run_walk("t = str(deep_expr())\nassert t.count('+ 1') == N, t[:200]"))


def test_print_deep_stmt():
    ok_or_limit(run_walk("A = ir.decl_buffer('A', [1], 'int32')\nt = tessel.text.as_text(func(deep_stmt(A=A), A))"))


def test_parse_deep_parenthesised_text():
    out = run_walk(
        """
        text = "(" * N + "x" + " + 1)" * N
        try:
            tessel.text.parse_expr(text, {"x": x})
        except Exception as err:
            assert re.search(r"line 1, col(umn)? [0-9]+|:1:[0-9]+", str(err)), str(err)[:500]
            raise
        """
    )
    ok_or_limit(out)


def test_parse_left_deep_chain_without_brackets():
    out = run_walk('tessel.text.parse_expr("x" + " + 1" * N, {"x": x})')
    ok_or_limit(out)


# ---- structural equality and hashing ----


@pytest.mark.parametrize("make", ["deep_expr", "deep_let", "deep_stmt", "deep_if"])
@pytest.mark.parametrize("call", [
    "ir.structural_equal(a, b, map_free_vars=True)",
    "ir.structural_hash(a)",
    "ir.first_mismatch(a, b, map_free_vars=True)",
])
def test_structural_equal_and_hash_stop_at_their_limit(make, call):
    # tvm-ffi's walks recurse; tessel measures the depth first (src/ir/structural_depth.cc).
    out = run_walk(f"A = ir.decl_buffer('A', [1], 'int32')\na, b = {make}(A=A) "
                   f"if '{make}' in ('deep_stmt', 'deep_if') else {make}(), None\n"
                   f"b = b if b is not None else a\n{call}")
    assert "LIMIT IR nested deeper than 2000 levels of objects" in out, out


def test_structural_equal_and_hash_below_the_limit_and_on_shared_subtrees():
    out = run_walk(
        """
        A = ir.decl_buffer('A', [1], 'int32')
        for a, b in [(deep_expr(1900), deep_expr(1900)), (deep_let(900), deep_let(900)),
                     (deep_stmt(600, A=A), deep_stmt(600, A=A))]:
            assert ir.structural_equal(a, b, map_free_vars=True)
            assert ir.structural_hash(a, map_free_vars=True) == ir.structural_hash(
                b, map_free_vars=True)
        # e + e doubled 60 times: 2^60 paths, 61 distinct nodes; the depth walk visits each node
        # once per new greatest depth, so it returns at once (tvm-ffi's hash would not).
        e = x
        for _ in range(60):
            e = e + e
        depth = tessel.ir._base.ffi_func("tessel.ir.StructuralDepth")(e, 10000)
        assert 61 <= depth <= 70, depth
        """
    )
    assert "OK" in out, out


# ---- the analyzer ----


ANALYZER_CALLS = [
    "Analyzer().simplify(e)",
    "Analyzer().can_prove(e > x)",
    "Analyzer().const_int_bound(e)",
    "Analyzer().modular_set(e)",
    "Analyzer().int_set(e, {x: ir.Range(0, 8)})",
]


@pytest.mark.parametrize("shape", ["deep_expr", "deep_select"])
def test_analyzer(shape):
    # Each call reports on its own line, so one child runs them all.
    code = f"e = {shape}()\n"
    for call in ANALYZER_CALLS:
        code += f"try:\n    {call}\nexcept RecursionError as err:\n    assert limited(err), err\n"
    ok_or_limit(run_walk(code))


def test_z3_encoder():
    ok_or_limit(
        run_walk(
            """
            from tessel import arith
            if arith.z3_available():
                Analyzer().get_smtlib2(deep_expr() > x)
            """
        )
    )


# ---- passes and code generation ----


def test_verify_well_formed_deep_stmt():
    ok_or_limit(
        run_walk(
            """
            A = ir.decl_buffer('A', [1], 'int32')
            tessel.transform.verify_well_formed(func(deep_stmt(A=A), A))
            """
        )
    )


# The deep bodies built by tessel.build, as text for the child (A: the buffer they store into).
BUILD_BODIES = {
    "deep_expr_store": "ir.BufferStore(A, deep_expr(), [0])",
    "deep_stmt": "deep_stmt(A=A)",
    "deep_if": "deep_if(A=A)",
}


@pytest.mark.parametrize("target", ["cuda -arch=sm_90", "metal"])
@pytest.mark.parametrize("shape", list(BUILD_BODIES))
def test_build_gpu(shape, target, tmp_path):
    # A kernel (the deep body under a threadIdx.x loop) through the CUDA and Metal pipelines and
    # code generators; building stops at a limit before any compiler sees the source.
    body = BUILD_BODIES[shape]
    ok_or_limit(
        run_walk(
            f"""
            import os
            os.environ['TESSEL_CACHE_DIR'] = {str(tmp_path)!r}
            A = ir.decl_buffer('A', [1], 'int32')
            tx = ir.Var('tx', 'int32')
            kernel = ir.For(tx, 0, 1, 'thread_binding', {body}, 'threadIdx.x')
            Ah = ir.Var('A_h', 'handle')
            f = ir.PrimFunc([x, Ah], kernel, {{Ah: A}},
                            {{'global_symbol': 'deep', 'target': {target.split()[0]!r}}})
            tessel.build(f, target={target!r})
            """,
            timeout=120,
        )
    )


@pytest.mark.parametrize("shape", list(BUILD_BODIES))
def test_build_c(shape, tmp_path):
    body = BUILD_BODIES[shape]
    ok_or_limit(
        run_walk(
            f"""
            import os
            os.environ['TESSEL_CACHE_DIR'] = {str(tmp_path)!r}
            A = ir.decl_buffer('A', [1], 'int32')
            f = func({body}, A)  # outlives the error, whose traceback would drop it
            tessel.build(f, target="c")
            """,
            timeout=120,
        )
    )
