"""LowerBlocks and FlattenBuffer through the pass registry, on examples/matmul.py."""

import re

import pytest
from conftest import REPO, needs_text

import tessel
from tessel import ir, transform

pytestmark = [
    needs_text,
    pytest.mark.skipif(
        "LowerBlocks" not in transform.list_passes()
        or "FlattenBuffer" not in transform.list_passes(),
        reason="libtessel has no LowerBlocks/FlattenBuffer passes yet",
    ),
]


def matmul():
    func = tessel.parse((REPO / "examples" / "matmul.py").read_text())
    return ir.IRModule({"matmul": func})


def test_lower_blocks_removes_blocks_and_guards_init():
    mod = matmul()
    assert "T.sblock" in str(mod)
    lowered = transform.get_pass("LowerBlocks")(mod)
    text = str(lowered)
    assert "T.sblock" not in text and "T.init" not in text and "T.reads" not in text
    assert "if k == 0:" in text
    # The init store comes right under its guard, before the update.
    lines = [line.strip() for line in text.splitlines()]
    guard = lines.index("if k == 0:")
    assert lines[guard + 1] == "C[i, j] = T.float32(0)"
    assert lines[guard + 2] == "C[i, j] = C[i, j] + A[i, k] * B[k, j]"
    assert transform.verify_well_formed(lowered) == []


def test_flatten_buffer_after_lower_blocks():
    mod = matmul()
    seq = transform.Sequential(
        [transform.get_pass("LowerBlocks"), transform.get_pass("FlattenBuffer")]
    )
    flat = seq(mod)
    text = str(flat)
    assert "T.sblock" not in text
    assert "if k == 0:" in text
    # Every access has one index into a 1-D twin of the parameter buffer (row-major).
    assert "C_1[i * N + j] = C_1[i * N + j] + A_1[i * K + k] * B_1[k * N + j]" in text
    assert re.search(r"\b[ABC]\[", text.split("T.func_attr")[1]) is None
    # Parameters keep their 2-D declaration; the body declares the flat twins over the same data.
    assert 'A: T.Buffer(("M", "K"), "float32")' in text
    assert re.search(r"A_1 = T.decl_buffer\(\(\w+ \* \w+,\), \"float32\", data=A.data\)", text)
    assert transform.verify_well_formed(flat) == []


def test_passes_return_their_input_when_nothing_to_do():
    flat = transform.get_pass("FlattenBuffer")(transform.get_pass("LowerBlocks")(matmul()))
    assert transform.get_pass("LowerBlocks")(flat).same_as(flat)
    assert transform.get_pass("FlattenBuffer")(flat).same_as(flat)


def test_flatten_buffer_refuses_blocks():
    with pytest.raises(ValueError, match='run LowerBlocks first: block "C" found'):
        transform.get_pass("FlattenBuffer")(matmul())
