import re
import tomllib

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
