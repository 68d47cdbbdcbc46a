"""Source spans: statements of a @T.prim_func remember their line in the user's file, and errors
raised after parsing (the verifier, a lowering pass, the code generator) name that file and line."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from conftest import import_file, needs_text

import tessel
from tessel import ir, transform

pytestmark = needs_text

PRELUDE = "from __future__ import annotations\nfrom tessel.script import tir as T, ir as I\n"


def load(tmp_path: Path, body: str, name: str):
    """Imports PRELUDE + `body` from a real file, as a user's module is; returns it and its path."""
    path = tmp_path / f"{name}.py"
    path.write_text(PRELUDE + textwrap.dedent(body))
    return import_file(path, name), path


def line_of(path: Path, marker: str) -> int:
    """The 1-based line of `path` that holds `marker`."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if marker in line:
            return i
    raise AssertionError(f"{marker!r} not in {path}")


def col_of(path: Path, marker: str) -> int:
    line = path.read_text().splitlines()[line_of(path, marker) - 1]
    return len(line) - len(line.lstrip()) + 1


def test_statements_carry_the_users_file_line_and_column(tmp_path):
    # Indented inside a module's class body: the front end dedents and passes a column offset.
    mod, path = load(tmp_path, '''
        @I.ir_module
        class Kernels:
            @T.prim_func
            def scale(A: T.Buffer((8,), "float32")):
                for i in range(8):  # the loop
                    A[i] = A[i] * T.float32(2)  # the store
        ''', "span_kernels")
    f = mod.Kernels.functions["scale"]
    loop = f.body
    assert isinstance(loop, ir.For)
    assert isinstance(loop.span, ir.Span)
    assert loop.span.source_name == str(path)
    assert (loop.span.line, loop.span.column) == (line_of(path, "# the loop"),
                                                  col_of(path, "# the loop"))
    store = loop.body
    assert str(store.span) == f"{path}:{line_of(path, '# the store')}:{col_of(path, '# the store')}"
    # Spans are not structure: the same text from another place is equal and hashes alike.
    again = tessel.parse(tessel.as_text(f))
    assert again.body.span.source_name == "<string>"
    ir.assert_structural_equal(f, again)
    assert ir.structural_hash(f) == ir.structural_hash(again)
    assert ir.structural_equal(store, store.with_span(None))
    assert store.with_span(None).span is None


def test_verifier_error_names_the_line(tmp_path):
    mod, path = load(tmp_path, '''
        @T.prim_func
        def add(A: T.Buffer((16,), "float32")):
            k = T.int32()
            for i in range(16):
                A[i] = T.Cast("float32", i + k)  # uses k
        ''', "span_verify")
    where = f"{path}:{line_of(path, '# uses k')}:"
    errors = transform.verify_well_formed(mod.add)
    assert [e.check for e in errors] == ["free_var"]
    assert str(errors[0]).startswith(where)
    with pytest.raises(ValueError, match=re.escape(where) + r"\d+: \[free_var\]"):
        tessel.build(mod.add)


def test_lowering_error_names_the_line(tmp_path):
    mod, path = load(tmp_path, '''
        @T.prim_func
        def nested(A: T.Buffer((64,), "float32")):
            for b in T.thread_binding(2, thread="blockIdx.x"):
                for t in T.thread_binding(32, thread="threadIdx.x"):
                    for u in T.thread_binding(16, thread="threadIdx.x"):  # bound twice
                        A[b * 32 + t] = T.Cast("float32", u)
        ''', "span_lower")
    where = f"{path}:{line_of(path, '# bound twice')}:{col_of(path, '# bound twice')}: "
    with pytest.raises(ValueError) as err:
        tessel.lower(mod.nested, "cuda -arch=sm_80")
    assert str(err.value).startswith(where + "LowerThreadBinding: thread \"threadIdx.x\"")


def test_lowering_intrinsic_error_names_the_store(tmp_path):
    mod, path = load(tmp_path, '''
        @T.prim_func
        def iexp(A: T.Buffer((4, 4), "int32"), B: T.Buffer((4, 4), "int32")):
            for i, j in T.grid(4, 4):
                B[i, j] = T.exp(A[i, j])  # exp of int32
        ''', "span_intrin")
    where = f"{path}:{line_of(path, '# exp of int32')}:"
    with pytest.raises(ValueError) as err:
        tessel.build(mod.iexp)
    assert str(err.value).startswith(where), str(err.value)
    assert "LowerIntrinsics: exp of int32" in str(err.value)


def test_build_error_names_the_line(tmp_path):
    mod, path = load(tmp_path, '''
        @T.prim_func
        def cond_alloc(A: T.Buffer((8,), "float32"), use: T.bool):
            data = T.allocate([8], "float32", "global", use)  # conditional
            tmp = T.decl_buffer((8,), "float32", data=data)
            for i in range(8):
                tmp[i] = A[i]
            for i in range(8):
                A[i] = tmp[i] + T.float32(1)
        ''', "span_build")
    where = f"{path}:{line_of(path, '# conditional')}:{col_of(path, '# conditional')}: "
    with pytest.raises(ValueError) as err:
        tessel.build(mod.cond_alloc)
    assert str(err.value).startswith(where + "codegen c: an Allocate of data with a condition")
