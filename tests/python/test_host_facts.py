"""Host-checked facts in lowering (docs/transform.md, "Host-checked facts"): the host wrapper checks
that each buffer's element count fits its index dtype, and the passes use that as a fact, so index
arithmetic over symbolic shapes simplifies soundly. Each test fails if the facts are lost (the
simplification disappears) or given where no wrapper guards the call (it appears there too)."""

import pathlib

import numpy as np
import pytest
import tvm_ffi

import tessel
from tessel.build import lower
from tessel.text import parse

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _lowered(name, target="c", called=False):
    src = (EXAMPLES / f"{name}.py").read_text()
    if called:
        # Another function calls it through T.call_global: no host wrapper guards that call.
        body = "\n".join("    " + line for line in src.splitlines()
                         if not line.startswith(("from ", "#")))
        src = (f"@I.ir_module\nclass Module:\n{body}\n    @T.prim_func\n"
               f"    def caller(x: T.int32) -> T.int32:\n"
               f"        T.ret(T.call_global(\"{name}\", \"int32\", x))\n")
    return str(lower(parse(src, name), target))


def test_fused_rows_guard_and_division_go_with_the_facts():
    text = _lowered("symbolic_fused_rows")
    assert "B[ko] = B[ko] + A_1[ko * 8 + ki]" in text
    assert "n * 8:" not in text and "// 8" not in text
    without = _lowered("symbolic_fused_rows", called=True)
    assert "if ko * 8 + ki < n * 8:" in without
    assert "B[(ko * 8 + ki) // 8]" in without


def test_flat_guard_over_two_symbolic_sizes_goes_with_the_facts():
    text = _lowered("symbolic_flat_guard")
    assert "B_1[i * m + j] = A_1[i * m + j] + T.float32(1)" in text
    assert " if " not in text
    without = _lowered("symbolic_flat_guard", called=True)
    assert "if i * m + j < m * n:" in without


def test_device_kernel_gets_the_facts_of_its_host():
    text = _lowered("smem_symbolic", target="cuda -arch=sm_90")
    assert '"tessel.host_facts": [n >= 0, m >= 0, m == 0 or n <= 2147483647 // m]' in text


@pytest.mark.parametrize("name", ["symbolic_fused_rows", "symbolic_flat_guard"])
@pytest.mark.parametrize("shape", [(5, 8), (1, 8), (0, 8), (37, 8)])
def test_examples_compute_the_reference(name, shape):
    f = tessel.build(EXAMPLES / f"{name}.py")[name]
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype("float32")
    if name == "symbolic_fused_rows":
        b = np.zeros(shape[0], "float32")
        f(tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
        np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5, atol=1e-6)
    else:
        b = np.zeros(shape, "float32")
        f(tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b))
        np.testing.assert_array_equal(b, a + 1)
