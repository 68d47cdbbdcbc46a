"""tessel.build: target strings, the C compile step and cache, and (once the lowering passes and
the C code generator are in the build) kernels built from text, called with NumPy arrays through
tvm-ffi, exported and loaded by a process that imports only tvm_ffi and numpy."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tvm_ffi
from conftest import REPO, find_cli

import tessel
from tessel._lib import get_global_func
from tessel.target import Target

PIPELINE = [str(n) for n in get_global_func("tessel.codegen.LowerPipeline")("c")]


def _missing_part() -> str:
    registered = set(tessel.transform.list_passes())
    for name in PIPELINE:
        if name not in registered:
            return f"needs the {name} pass"
    if get_global_func("tessel.codegen.GenerateC") is None:
        return "needs the C code generator"
    return ""


def test_every_part_of_the_pipeline_is_built_in():
    assert _missing_part() == ""

VECTOR_ADD = REPO / "examples" / "vector_add.py"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path / "cache"))


# ---- targets ----


def test_target_parses_kind_and_options():
    t = Target("cuda -arch=sm_90")
    assert t.kind == "cuda" and dict(t.attrs) == {"arch": "sm_90"} and str(t) == "cuda -arch=sm_90"
    assert Target("c").kind == "c" and len(Target("metal").attrs) == 0
    assert tessel.target.kinds() == ["c", "cuda", "metal"]


@pytest.mark.parametrize(
    "text, fact",
    [
        ("vulkan", "unknown kind 'vulkan'; the kinds are c, cuda, metal"),
        ("cuda arch=sm_90", "malformed option 'arch=sm_90'"),
        ("cuda -arch", "-arch=true is not valid"),
        ("c -O3", "unknown option '-O3' for kind c"),
    ],
)
def test_target_errors_name_the_problem(text, fact):
    with pytest.raises(ValueError) as info:
        Target(text)
    assert fact in str(info.value)


# ---- the compile step, without the pipeline ----

TWICE_C = r"""#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 2 * args[0].v_int64;
  return 0;
}
"""


def test_compile_c_source_loads_in_tvm_ffi(tmp_path):
    out = tmp_path / "a dir" / "twice.so"
    get_global_func("tessel.codegen.CompileCSource")(TWICE_C, str(out))
    assert tvm_ffi.load_module(str(out))["twice"](21) == 42


def test_compile_error_carries_the_compiler_output(tmp_path):
    with pytest.raises(RuntimeError) as info:
        get_global_func("tessel.codegen.CompileCSource")("int f( {\n", str(tmp_path / "x.so"))
    msg = str(info.value)
    assert "the C compiler failed" in msg and "-std=c11" in msg and "kernel.c" in msg


def test_thread_bindings_are_refused_for_c():
    with pytest.raises(ValueError, match="loop_kinds: thread bindings need a GPU target"):
        tessel.build(REPO / "examples" / "loop_kinds.py")


def test_build_rejects_unsupported_inputs():
    with pytest.raises(TypeError, match="expected an IRModule, a PrimFunc, text"):
        tessel.build(42)
    with pytest.raises(ValueError, match="vector_add: target metal: buffer . is accessed outside a "
                                         "GPU kernel"):
        tessel.build(VECTOR_ADD, target="metal")


# ---- the whole path ----


def _vector_add_args(n, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype("float32")
    b = rng.standard_normal(n).astype("float32")
    c = np.zeros(n, dtype="float32")
    return a, b, c


@pytest.mark.parametrize("n", [1, 7, 8, 64, 1003])
def test_vector_add_matches_numpy(n):
    mod = tessel.build(VECTOR_ADD.read_text())
    a, b, c = _vector_add_args(n)
    mod["vector_add"](tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b), tvm_ffi.from_dlpack(c))
    np.testing.assert_array_equal(c, a + b)
    mod.vector_add(tvm_ffi.from_dlpack(b), tvm_ffi.from_dlpack(b), tvm_ffi.from_dlpack(c))
    np.testing.assert_array_equal(c, b + b)


def test_module_faces():
    mod = tessel.build(tessel.parse(VECTOR_ADD.read_text()))  # a PrimFunc with a global_symbol
    assert mod.function_names == ["vector_add"] and "vector_add" in mod
    assert "__tvm_ffi_vector_add" in mod.get_source()
    assert Path(mod.library_path).is_file()
    assert set(mod.timings) == {"parse", "lower", "codegen", "cc", "load"}
    assert mod.compile_seconds >= sum(mod.timings.values()) * 0.99
    with pytest.raises(KeyError, match="no function 'nope'"):
        mod["nope"]
    with pytest.raises(AttributeError):
        mod.nope
    again = tessel.build(VECTOR_ADD)
    assert again.cache_hit and not mod.cache_hit and again.library_path == mod.library_path


def test_build_runs_under_the_pass_context(tmp_path):
    dump = tmp_path / "ir"
    with tessel.transform.PassContext(dump_dir=str(dump)) as ctx:
        tessel.build(VECTOR_ADD)
    names = [t[0] for t in ctx.timings()]
    for p in PIPELINE:
        assert p in names
    assert any(f.name.endswith("_LowerBlocks_after.py") for f in dump.iterdir())


def test_lower_gives_what_codegen_sees():
    lowered = tessel.lower(VECTOR_ADD)
    assert isinstance(lowered, tessel.ir.IRModule)
    text = tessel.as_text(lowered)
    assert "T.block" not in text and "vector_add" in text


LOADER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import tvm_ffi
    f = tvm_ffi.load_module(sys.argv[1])["vector_add"]
    n = 1003
    a = np.arange(n, dtype="float32")
    b = np.full(n, 0.5, dtype="float32")
    c = np.zeros(n, dtype="float32")
    f(tvm_ffi.from_dlpack(a), tvm_ffi.from_dlpack(b), tvm_ffi.from_dlpack(c))
    assert (c == a + b).all(), c
    assert "tessel" not in sys.modules
    print("ok")
    """
)


def test_exported_library_runs_without_tessel(tmp_path):
    mod = tessel.build(VECTOR_ADD)
    out = tmp_path / "with space" / "vector_add.so"
    mod.export_library(out)
    assert out.read_bytes() == Path(mod.library_path).read_bytes()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSEL_")}
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", LOADER, str(out)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_rebuild_in_a_fresh_cache_gives_identical_bytes(tmp_path, monkeypatch):
    first = tessel.build(VECTOR_ADD)
    first.export_library(tmp_path / "first.so")
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path / "other cache"))
    second = tessel.build(VECTOR_ADD)
    assert not second.cache_hit and second.library_path != first.library_path
    assert second.get_source() == first.get_source()
    assert Path(second.library_path).read_bytes() == (tmp_path / "first.so").read_bytes()


# ---- the CLI ----


def _cli():
    path = find_cli()
    if path is None:
        pytest.skip("the tessel CLI is not built")
    return path


def test_cli_build_errors_exit_1(tmp_path):
    cli = _cli()
    bad = tmp_path / "bad.py"
    bad.write_text("@T.prim_func\ndef f(:\n")
    r = subprocess.run([str(cli), "build", str(bad), "-o", str(tmp_path / "x.so")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "bad.py:2" in r.stderr
    r = subprocess.run([str(cli), "build", str(REPO / "examples" / "loop_kinds.py"), "-o",
                        str(tmp_path / "x.so")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert "tessel build: loop_kinds: thread bindings need a GPU target" in r.stderr
    r = subprocess.run([str(cli), "build", str(VECTOR_ADD), "--target", "gpu", "-o",
                        str(tmp_path / "x.so")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "unknown kind 'gpu'" in r.stderr
    r = subprocess.run([str(cli), "build", str(VECTOR_ADD)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "no output" in r.stderr


def test_cli_build_writes_library_and_c(tmp_path):
    cli = _cli()
    out, c_out = tmp_path / "va.so", tmp_path / "va.c"
    r = subprocess.run([str(cli), "build", str(VECTOR_ADD), "--target", "c", "-o", str(out),
                        "--emit-c", str(c_out), "--timing"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "lower " in r.stderr and " s, cc " in r.stderr
    assert "__tvm_ffi_vector_add" in c_out.read_text()
    assert c_out.read_text() == tessel.build(VECTOR_ADD).get_source()
    a, b, c = _vector_add_args(100)
    tvm_ffi.load_module(str(out))["vector_add"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
    np.testing.assert_array_equal(c, a + b)
    # The text can come from stdin.
    stdin_out = tmp_path / "stdin.so"
    r = subprocess.run([str(cli), "build", "-", "-o", str(stdin_out)], input=VECTOR_ADD.read_text(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert stdin_out.read_bytes() == out.read_bytes()


BUILDER = textwrap.dedent(
    """
    import sys
    import tessel
    mod = tessel.build(open(sys.argv[1]).read())
    print(mod.library_path, mod.cache_hit)
    """
)


def test_two_processes_building_at_once_share_one_cache_entry(tmp_path):
    env = dict(os.environ, TESSEL_CACHE_DIR=str(tmp_path / "shared"))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python"), env.get("PYTHONPATH", "")])
    procs = [subprocess.Popen([sys.executable, "-c", BUILDER, str(VECTOR_ADD)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    paths = {out.split()[0] for out, _ in outs}
    assert len(paths) == 1
    # One library and its key, no temporary names left behind.
    assert sorted(f.suffix for f in (tmp_path / "shared").iterdir()) == [".key", ".so"]


POW2_DIVISION = """
@T.prim_func
def pow2_division(A: T.Buffer((64,), "{t}"), D: T.Buffer((64, 4), "{t}"),
                  M: T.Buffer((64, 4), "{t}")):
    for i in range(64):
        D[i, 0] = T.floordiv(A[i], T.{t}(1))
        D[i, 1] = T.floordiv(A[i], T.{t}(2))
        D[i, 2] = T.floordiv(A[i], T.{t}(8))
        D[i, 3] = T.floordiv(A[i], T.{t}({big}))
        M[i, 0] = T.floormod(A[i], T.{t}(1))
        M[i, 1] = T.floormod(A[i], T.{t}(2))
        M[i, 2] = T.floormod(A[i], T.{t}(8))
        M[i, 3] = T.floormod(A[i], T.{t}({big}))
"""


@pytest.mark.parametrize("dtype,big", [("int32", 2**30), ("int64", 2**62)])
def test_floor_division_by_a_power_of_two_is_a_shift_and_exact_on_negatives(dtype, big):
    # An arithmetic shift and a mask: floor semantics for every sign, the extremes included.
    info = np.iinfo(dtype)
    a = np.random.default_rng(3).integers(info.min, info.max, 64, endpoint=True).astype(dtype)
    a[:6] = [info.min, info.max, -1, 0, -big - 1, big]
    d, m = np.zeros((64, 4), dtype), np.zeros((64, 4), dtype)
    mod = tessel.build(POW2_DIVISION.replace("{t}", dtype).replace("{big}", str(big)))
    mod["pow2_division"](*(tvm_ffi.from_dlpack(x) for x in (a, d, m)))
    divisors = np.array([1, 2, 8, big], dtype)
    np.testing.assert_array_equal(d, a[:, None] // divisors[None, :])
    np.testing.assert_array_equal(m, a[:, None] % divisors[None, :])
    src = mod.get_source()
    assert " >> 3)" in src and f" >> {big.bit_length() - 1})" in src
    assert "tsl_floordiv_" not in src.split("pow2_division", 1)[1].split("__tvm_ffi")[0]
