"""The Python front end: @T.prim_func / @I.ir_module read a function's source with the C++ parser,
substitute captured values, and report mistakes at the user's file, line and column."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import import_file, needs_text

import tessel
from tessel import ir
from tessel.script import ScriptError, template

pytestmark = needs_text

PRELUDE = "from tessel.script import tir as T, ir as I\n"


def load(tmp_path: Path, body: str, name: str = "kernel_mod", future: bool = True):
    """Imports `body` (after the imports) as a module from a real file, as a user's file is."""
    text = ("from __future__ import annotations\n" if future else "") + PRELUDE + body
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return import_file(path, name), path


def test_prim_func_equals_parsed_text(tmp_path):
    body = textwrap.dedent('''
        @T.prim_func
        def add_one(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
            for i in range(128):
                B[i] = A[i] + T.float32(1)
        ''')
    mod, _ = load(tmp_path, body)
    f = mod.add_one
    assert isinstance(f, ir.PrimFunc)
    # A function that does not say otherwise has its name as its global symbol.
    assert f.attrs["global_symbol"] == "add_one"
    ir.assert_structural_equal(f, tessel.parse(body))
    ir.assert_structural_equal(f, tessel.parse(tessel.as_text(f)))


def test_every_example_through_prim_func_equals_its_text(repo):
    """Each example file imported as Python (its @T.prim_func / @I.ir_module run) gives what
    tessel.parse of its text gives."""
    files = sorted((repo / "examples").glob("*.py"))
    assert len(files) >= 40
    for i, path in enumerate(files):
        mod = import_file(path, f"tessel_example_{i}")
        parsed = tessel.parse(path.read_text(), str(path))
        made = [v for v in vars(mod).values() if isinstance(v, (ir.PrimFunc, ir.IRModule))]
        assert len(made) == 1, path.name
        ir.assert_structural_equal(made[0], parsed, map_free_vars=True)
        # The printed text is the contract: parsing it gives the function back.
        ir.assert_structural_equal(made[0], tessel.parse(made[0].script()), map_free_vars=True)


def test_private_and_s_tir_flags(tmp_path):
    body = textwrap.dedent('''
        @T.prim_func(private=True)
        def hidden(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(0)

        @T.prim_func(s_tir=True)
        def shown(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(0)
        ''')
    mod, _ = load(tmp_path, body)
    assert "global_symbol" not in (mod.hidden.attrs or {})
    assert mod.shown.attrs["global_symbol"] == "shown"
    # The printer marks a function without a global symbol private, so text round-trips.
    text = tessel.as_text(mod.hidden)
    assert "@T.prim_func(private=True)" in text
    ir.assert_structural_equal(tessel.parse(text), mod.hidden)


def test_ir_module_class(tmp_path):
    body = textwrap.dedent('''
        @I.ir_module
        class Module:
            @T.prim_func
            def first(A: T.Buffer((8,), "float32")):
                for i in range(8):
                    A[i] = T.float32(1)

            @T.prim_func(private=True)
            def second(A: T.Buffer((8,), "float32")):
                for i in range(8):
                    A[i] = T.float32(2)
        ''')
    mod, _ = load(tmp_path, body)
    m = mod.Module
    assert isinstance(m, ir.IRModule)
    assert sorted(str(k) for k in m.functions.keys()) == ["first", "second"]
    assert m.functions["first"].attrs["global_symbol"] == "first"
    assert "global_symbol" not in (m.functions["second"].attrs or {})
    ir.assert_structural_equal(m, tessel.parse(tessel.as_text(m)))


def test_captured_values(tmp_path):
    body = textwrap.dedent('''
        import numpy as np
        N = 64
        SCALE = 2.5
        DTYPE = np.float32
        FLAG = True

        def make(width):
            @T.prim_func
            def scaled(A: T.Buffer((N, width), DTYPE), B: T.Buffer((N, width), "float32")):
                for i, j in T.grid(N, width):
                    if FLAG:
                        B[i, j] = A[i, j] * SCALE
            return scaled

        kernel = make(16)
        ''')
    mod, _ = load(tmp_path, body)
    f = mod.kernel
    a = f.buffer_map[f.params[0]]
    assert [int(x) for x in a.shape] == [64, 16]
    assert str(a.dtype) == "float32"
    text = tessel.as_text(f)
    assert "2.5" in text
    expected = textwrap.dedent('''
        @T.prim_func
        def scaled(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64, 16), "float32")):
            for i, j in T.grid(64, 16):
                if True:
                    B[i, j] = A[i, j] * T.float32(2.5)
        ''')
    ir.assert_structural_equal(f, tessel.parse(expected))


def test_arithmetic_on_captured_values_is_python_arithmetic(tmp_path):
    """Python computes `N * 2` before TVMScript sees it: the parser folds arithmetic whose
    operands are given values and literals (Python's floor division and remainder), and leaves
    written literals alone."""
    body = textwrap.dedent('''
        N = 64
        SCALE = 1.5

        @T.prim_func
        def k(A: T.Buffer((N * 2 + 1,), "float32"), B: T.Buffer((N // 5, -N % 5), "float32")):
            A[-N // 5 + 20] = A[1] * (SCALE * 2 - 1)
            for i in range(2 * 3):
                A[i] = T.float32(0)
        ''')
    mod, _ = load(tmp_path, body)
    f = mod.k
    assert [int(x.value) for x in f.buffer_map[f.params[0]].shape] == [129]
    assert [int(x.value) for x in f.buffer_map[f.params[1]].shape] == [64 // 5, -64 % 5]
    text = tessel.as_text(f)
    assert f"A[{-64 // 5 + 20}] = A[1] * T.float32(2)" in text, text
    assert "range(2 * 3)" in text, text  # written digits stay as written


def test_captured_ir_variable(tmp_path):
    body = textwrap.dedent('''
        from tessel import ir
        n = ir.Var("n", "int32")

        @T.prim_func
        def fill(A: T.Buffer((n,), "float32")):
            for i in range(n):
                A[i] = T.float32(0)
        ''')
    mod, _ = load(tmp_path, body)
    f = mod.fill
    assert f.buffer_map[f.params[0]].shape[0].same_as(mod.n)


def test_string_dims_without_future_annotations(tmp_path):
    """TVM's spelling: string dims in the annotation, declared in the body after their use."""
    body = textwrap.dedent('''
        @T.prim_func
        def rows(A: T.Buffer(("n", "m"), "float32"), B: T.Buffer(("n",), "float32")):
            n, m = T.int64(), T.int64()
            for i in range(n):
                B[i] = A[i, 0]
        ''')
    mod, _ = load(tmp_path, body, future=False)
    f = mod.rows
    a = f.buffer_map[f.params[0]]
    b = f.buffer_map[f.params[1]]
    assert str(a.shape[0].dtype) == "int64"
    assert a.shape[0].same_as(b.shape[0])


def test_handle_params_and_match_buffer(tmp_path):
    """TVMScript's other way to declare buffers: handle parameters matched in the body, with the
    symbolic dims declared first."""
    body = textwrap.dedent('''
        @T.prim_func
        def scale(a: T.handle, b: T.handle, alpha: T.float32):
            n = T.int32()
            A = T.match_buffer(a, (n,), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for i in range(n):
                B[i] = A[i] * alpha
        ''')
    mod, _ = load(tmp_path, body, future=False)
    f = mod.scale
    assert [str(p.dtype) for p in f.params] == ["handle", "handle", "float32"]
    a = f.buffer_map[f.params[0]]
    assert a.shape[0].same_as(f.buffer_map[f.params[1]].shape[0])
    ir.assert_structural_equal(f, tessel.parse(tessel.as_text(f)), map_free_vars=True)
    import numpy as np
    import tvm_ffi

    lib = tessel.build(f)
    x = np.arange(7, dtype="float32")
    y = np.empty_like(x)
    lib["scale"](tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y), 2.0)
    np.testing.assert_array_equal(y, x * 2)


def test_bare_symbolic_names_need_future_annotations(tmp_path):
    body = textwrap.dedent('''
        @T.prim_func
        def rows(A: T.Buffer((n,), "float32")):
            for i in range(n):
                A[i] = T.float32(0)
        ''')
    mod, _ = load(tmp_path, body, name="with_future")
    assert isinstance(mod.rows, ir.PrimFunc)
    with pytest.raises(NameError, match="'n'"):
        load(tmp_path, body, name="without_future", future=False)


def test_exec_defined_function_is_a_clear_error():
    scope = {"T": tessel.script.tir}
    with pytest.raises(ScriptError, match=r"tessel\.parse\(text\)"):
        exec(
            "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = T.float32(1)\n",
            scope,
        )


def test_template_specializes_constexprs(tmp_path):
    body = textwrap.dedent('''
        def tiled(A: T.Buffer(("n",), "float32"), *, BLOCK: T.constexpr = 8, dtype: T.constexpr = "float32"):
            for io in range(n // BLOCK):
                for ii in range(BLOCK):
                    A[io * BLOCK + ii] = T.Cast(dtype, T.float32(1))
        ''')
    mod, _ = load(tmp_path, body)
    tmpl = template(mod.tiled)
    assert tmpl.name == "tiled"
    assert tmpl.constexprs == {"BLOCK": 8, "dtype": "float32"}
    f8 = tmpl.specialize()
    f4 = tmpl.specialize(BLOCK=4)
    assert len(f8.params) == 1
    assert "// 8" in tessel.as_text(f8) and "// 4" in tessel.as_text(f4)
    assert f8.attrs["global_symbol"] == "tiled"
    with pytest.raises(TypeError, match="unknown compile-time parameter 'BLOK'"):
        tmpl.specialize(BLOK=4)
    with pytest.raises(TypeError, match="'BLOCK' is a list"):
        tmpl.specialize(BLOCK=[4])


# Each case: a kernel with one mistake; `@@` marks where the error must point (removed before
# the file is written). The first line of each is the line after the prelude.
ERRORS = {
    "unknown_name": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = @@undefined_thing
''', "unknown name 'undefined_thing'"),
    "unknown_intrinsic": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = @@T.exq(A[i])
''', "T.exq"),
    "mixed_dtypes": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = A[i] @@+ T.int32(1)
''', "different dtypes"),
    "unknown_dtype": ('''
@T.prim_func
def k(A: T.Buffer((4,), @@"float33")):
    A[0] = T.float32(0)
''', "unknown dtype 'float33'"),
    "wrong_rank": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i, i] @@= T.float32(0)
''', "indices"),
    "bad_captured_value": ('''
SCALES = [1.0, 2.0]

@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = A[i] * @@SCALES
''', "captured variable 'SCALES' is a list"),
    "augmented_assignment": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] @@+= T.float32(1)
''', "augmented assignment"),
    "condition_not_bool": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in range(4):
        if @@i:
            A[i] = T.float32(1)
''', "must be bool"),
    "return_statement": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    @@return
''', "'return' is not supported"),
    "unknown_loop_kind": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32")):
    for i in @@T.sequential(4):
        A[i] = T.float32(1)
''', "unknown loop kind"),
    "constexpr_without_value": ('''
@T.prim_func
def k(A: T.Buffer((4,), "float32"), *, @@BLOCK: T.constexpr):
    A[0] = T.float32(1)
''', "BLOCK"),
    "indented_in_a_function": ('''
def make():
    @T.prim_func
    def k(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + @@missing
    return k
kernel = make()
''', "unknown name 'missing'"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_error_points_at_the_users_line_and_column(tmp_path, case):
    src, message = ERRORS[case]
    marked = src.lstrip("\n")
    first_line = 3  # after the future import and the prelude
    before = marked[: marked.index("@@")]
    line = first_line + before.count("\n")
    col = len(before) - (before.rfind("\n") + 1) + 1
    body = marked.replace("@@", "")
    with pytest.raises((ScriptError, TypeError)) as info:
        load(tmp_path, body, name=f"err_{case}")
    err = info.value
    assert message in str(err), str(err)
    if case == "constexpr_without_value":
        # Known before parsing: a TypeError naming the parameter (no position needed).
        return
    assert isinstance(err, ScriptError), repr(err)
    assert isinstance(err, ValueError)
    assert Path(err.filename) == tmp_path / f"err_{case}.py"
    assert (err.lineno, err.offset) == (line, col), f"{err.msg} at {err.lineno}:{err.offset}"
    assert err.text.rstrip("\n") == body.splitlines()[line - first_line]
