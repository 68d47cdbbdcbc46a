import re
import shutil
import subprocess
import sys
import tomllib

import pytest

import tessel
from tessel import ir


def node_names_from_header(repo):
    text = (repo / "include/tessel/ir/node_list.h").read_text()
    return sorted(set(re.findall(r"^\s*X\((\w+)\)", text, re.M)))


OTHER_NODES = [
    "PrimExpr", "Stmt", "Range", "Buffer", "Op", "IterVar", "BufferRegion", "MatchBufferRegion",
    "PrimFunc", "GlobalVar", "IRModule",
]


def test_version_matches_pyproject(repo):
    meta = tomllib.loads((repo / "pyproject.toml").read_text())
    assert tessel.__version__ == meta["project"]["version"]


def test_library_loaded_from_a_searched_place():
    assert tessel._lib.LIB_PATH.is_file()
    assert tessel._lib.LIB_PATH in [p for p in tessel._lib.candidate_paths() if p.is_file()]


def test_every_node_kind_has_a_registered_class(repo):
    names = node_names_from_header(repo) + OTHER_NODES
    assert len(names) > 40
    for name in names:
        cls = getattr(ir, name, None)
        assert cls is not None, f"tessel.ir.{name} has no Python class"
        assert cls.__tvm_ffi_type_info__.type_key == f"tessel.ir.{name}"


def test_objects_from_cpp_come_back_as_registered_classes():
    x = ir.Var("x")
    e = ir.floordiv(x, 4)
    assert type(e) is ir.FloorDiv
    assert type(e.a) is ir.Var and type(e.b) is ir.IntImm


def test_library_path_env_is_searched_first(monkeypatch, tmp_path):
    monkeypatch.setenv("TESSEL_LIBRARY_PATH", str(tmp_path))
    assert tessel._lib.candidate_paths()[0] == tmp_path / "libtessel.so"


# Mangled prefixes of namespace std, __gnu_cxx and z3 (functions, typeinfo, vtables, guard
# variables, function-local statics): cmake/local_std.map keeps them out of the dynamic symbol
# table, because tessel is loaded with RTLD_GLOBAL into processes holding other copies of them.
LOCAL_PREFIXES = re.compile(r"_Z(N|NK|GVZN|GVZNK|ZN|ZNK|TIN|TSN|TVN|TI|TS|TV|GVZ|Z)?"
                            r"(St|9__gnu_cxx|2z3)")


@pytest.mark.skipif(sys.platform != "linux" or shutil.which("nm") is None,
                    reason="needs Linux (an ELF library) and binutils' nm")
@pytest.mark.parametrize("name", ["libtessel.so", "libtessel_runtime.so"])
def test_libraries_export_no_standard_library_instantiations(name):
    lib = tessel._lib.LIB_PATH.parent / name
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                         text=True, check=True).stdout
    symbols = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert any(s.startswith("_ZN6tessel") for s in symbols)  # the reading itself works
    leaked = [s for s in symbols if LOCAL_PREFIXES.match(s)]
    assert not leaked, f"{name} exports {len(leaked)} std/__gnu_cxx/z3 symbols, e.g. {leaked[:3]}"
