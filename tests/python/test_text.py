"""The text format from Python: parse, print, round trip. Skipped while libtessel lacks the
parser and printer."""

import pytest
from conftest import needs_text

import tessel
from tessel import ir

pytestmark = needs_text

KERNEL = '''# from tvm.script import tir as T

@T.prim_func
def add_one(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        B[i] = A[i] + T.float32(1)
'''


def test_parse_print_parse_is_stable():
    f = tessel.parse(KERNEL)
    assert isinstance(f, ir.PrimFunc)
    text = str(f)
    again = tessel.parse(text)
    ir.assert_structural_equal(f, again)
    assert str(again) == text
    assert tessel.as_text(f) == text


def test_examples_round_trip(repo):
    files = sorted((repo / "examples").glob("*.py"))
    if not files:
        pytest.skip("no examples yet")
    for path in files:
        node = tessel.parse(path.read_text(), str(path))
        # Each parse makes its own free variables (`n = T.int32()`): map them.
        ir.assert_structural_equal(node, tessel.parse(str(node)), map_free_vars=True)


def test_parse_expr_reuses_given_vars():
    x = ir.Var("x")
    e = tessel.parse_expr("x * 2 + 1", {"x": x})
    # x is free in both: equality holds only if the parser used this very Var.
    assert ir.structural_equal(e, x * 2 + 1)
    assert not ir.structural_equal(e, ir.Var("x") * 2 + 1)
    n = tessel.parse_expr("n + 1", {"n": "int64"})
    assert n.dtype == "int64"


def test_parse_error_names_the_place():
    with pytest.raises(ValueError, match=r"bad\.py:\d+:\d+: error"):
        tessel.parse("@T.prim_func\ndef f(:\n", "bad.py")


def test_parse_rejects_non_strings():
    with pytest.raises(TypeError, match="parse: text"):
        tessel.parse(3)
