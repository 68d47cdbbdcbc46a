"""tessel.arith.Analyzer misused or overloaded: a clear error or a correct answer, never a crash.
Cases that used to kill the interpreter run in a subprocess."""

import gc
import subprocess
import sys
import textwrap

import pytest

from tessel import ir
from tessel.arith import Analyzer


def run_python(code):
    """Runs code in a fresh interpreter (a crash there fails the test instead of the run)."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, f"exit code {r.returncode}\n{r.stdout}\n{r.stderr[-3000:]}"
    return r.stdout


# ---- constraint scopes that outlive their analyzer ----

def test_scope_entered_never_exited_analyzer_freed_first():
    # Used to crash at garbage collection or at interpreter exit: the scope's undo ran on the
    # freed analyzer.
    out = run_python("""
        import gc
        from tessel import arith, ir
        a = arith.Analyzer()
        x = ir.Var("x")
        s = a.constraint_scope(x > 0)
        s.__enter__()
        del a
        gc.collect()
        print("alive")
    """)
    assert out.strip() == "alive"


def test_scope_handle_dropped_at_exit_in_any_order():
    run_python("""
        from tessel import arith, ir
        a = arith.Analyzer()
        x = ir.Var("x")
        scopes = [a.constraint_scope(x > i) for i in range(5)]
        for s in scopes:
            s.__enter__()
        leave = a._handle.enter_constraint_scope(x < 100)
        del a
    """)


def test_exit_after_analyzer_gone_and_exit_twice():
    x = ir.Var("x")
    a = Analyzer()
    s = a.constraint_scope(x > 0)
    s.__enter__()
    b = a.clone()
    del a
    gc.collect()
    s.__exit__(None, None, None)
    s.__exit__(None, None, None)
    assert b.can_prove(x >= 1)  # a clone made inside the scope keeps its fact


def test_exit_twice_restores_once():
    x = ir.Var("x")
    a = Analyzer()
    with a.constraint_scope(x > 0):
        s = a.constraint_scope(x < 10)
        s.__enter__()
        assert a.can_prove(x < 20)
        s.__exit__(None, None, None)
        s.__exit__(None, None, None)
        assert not a.can_prove(x < 20)
        assert a.can_prove(x >= 1)  # the outer scope is still open
    assert not a.can_prove(x >= 1)


def test_leaving_outer_scope_first_is_a_clear_error():
    x = ir.Var("x")
    a = Analyzer()
    outer, inner = a.constraint_scope(x > 0), a.constraint_scope(x < 10)
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(ValueError, match="reverse order of entry"):
        outer.__exit__(None, None, None)
    assert a.can_prove(x >= 1) and a.can_prove(x < 20)  # nothing was left
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)
    assert not a.can_prove(x >= 1) and not a.can_prove(x < 20)


def test_dropped_outer_scope_is_left_after_the_inner_one():
    x = ir.Var("x")
    a = Analyzer()
    outer, inner = a.constraint_scope(x > 0), a.constraint_scope(x < 10)
    outer.__enter__()
    inner.__enter__()
    del outer  # dropped while an inner scope is open: stays until the inner one is left
    gc.collect()
    assert a.can_prove(x >= 1)
    inner.__exit__(None, None, None)
    assert not a.can_prove(x >= 1) and not a.can_prove(x < 20)


# ---- expressions nested deeper than the analyzer's walks go ----

def test_deep_expression_is_a_clear_error_not_a_crash():
    # 100,000 levels used to overflow the stack (segmentation fault) in every recursive walk.
    out = run_python("""
        from tessel import arith, ir
        x = ir.Var("x")
        adds, muldivs = x, x
        for i in range(100000):
            adds = adds + 1
        for i in range(50000):
            muldivs = (muldivs * 3) // 2
        for e in (adds, muldivs):
            a = arith.Analyzer()
            for ask in (a.simplify, lambda e: a.can_prove(e < 5), a.const_int_bound,
                        a.modular_set, a.canonical_simplify, a.rewrite_simplify):
                try:
                    ask(e)
                except RecursionError as err:
                    assert "expression is deeper than 5000 levels" in str(err), err
                else:
                    raise AssertionError("no error")
        print("ok")
    """)
    assert out.strip() == "ok"


def test_expression_below_the_depth_limit_still_simplifies():
    x = ir.Var("x")
    e = x
    for _ in range(4000):
        e = e + 1
    a = Analyzer()
    assert str(a.simplify(e)) == "x + 4000"
    # after an error the analyzer (and the depth count) is as before
    deep = x
    for _ in range(6000):
        deep = deep + 1
    with pytest.raises(RecursionError, match="deeper than 5000 levels"):
        a.simplify(deep)
    assert str(a.simplify(e)) == "x + 4000"
