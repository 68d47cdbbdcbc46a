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


# What TVM 0.27 prints for a matmul after its block-lowering passes (LowerOpaqueBlock,
# FlattenBuffer): flattened aliases through Buffer.view.
TVM_LOWERED = '''# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        T.func_attr({"global_symbol": "mm", "tirx.noalias": True})
        A_1 = A.view(256)
        B_1 = B.view(-1)
        C_1 = C.view(256)
        for i_0 in T.parallel(4):
            for i_1, j in T.grid(4, 16):
                C_1[i_0 * 64 + i_1 * 16 + j] = T.float32(0.0)
                for k in range(16):
                    C_1[i_0 * 64 + i_1 * 16 + j] = C_1[i_0 * 64 + i_1 * 16 + j] + A_1[i_0 * 64 + i_1 * 16 + k] * B_1[k * 16 + j]
'''


def test_buffer_view_as_tvm_prints_it():
    import numpy as np
    import tvm_ffi

    mod = tessel.parse(TVM_LOWERED)
    text = str(mod)
    assert 'B_1 = T.decl_buffer((256,), "float32", data=B.data)' in text, text
    ir.assert_structural_equal(mod, tessel.parse(text))
    lib = tessel.build(mod)
    a, b = (np.random.default_rng(s).random((16, 16), dtype=np.float32) for s in (1, 2))
    c = np.zeros_like(a)
    lib["mm"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    with pytest.raises(ValueError, match=r"A.view: the view has 200 elements, A has 256"):
        tessel.parse(TVM_LOWERED.replace("A.view(256)", "A.view(200)"))
    with pytest.raises(ValueError, match=r"reinterprets"):
        tessel.parse(TVM_LOWERED.replace("A.view(256)", 'A.view("float16")'))


def test_tvm_let_and_vscale_spellings():
    """TVM's three-argument T.Let(var, value, body) over a declared variable, and T.vscale()
    (scalable vectors): both parse and round-trip; no tessel target has scalable vectors, so
    building names the op."""
    text = '''
@T.prim_func
def f(A: T.Buffer((64,), "float32")):
    x = T.int32()
    for i in range(T.vscale() * 4):
        A[i] = T.Cast("float32", T.Let(x, i * 2, x + 1))
'''
    f = tessel.parse(text)
    printed = str(f)
    assert "T.vscale() * 4" in printed and "T.Let(x + 1, where={x: i * 2})" in printed, printed
    ir.assert_structural_equal(f, tessel.parse(printed), map_free_vars=True)
    with pytest.raises(ValueError, match=r"unsupported op vscale"):
        tessel.build(f)
    with pytest.raises(ValueError, match=r"first argument of T.Let\(var, value, body\) must be"):
        tessel.parse(text.replace("T.Let(x, i * 2", "T.Let(x + 1, i * 2"))
