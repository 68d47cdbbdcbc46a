"""The jit's disk cache: a new process loads a compiled kernel without running the compiler or
lowering, processes share the cache safely, the key follows the IR (a changed captured value
recompiles), and the Python cache API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tessel
from tessel.script import tir as T

from tessel._lib import get_global_func

pytestmark = pytest.mark.skipif(get_global_func("tessel.ir.ParseSource") is None,
                                reason="libtessel has no Python-source parser yet "
                                       "(tessel.ir.ParseSource)")

KERNEL = '''
from __future__ import annotations
import json, os, sys, time
import numpy as np
t0 = time.perf_counter()
import tessel
from tessel.script import tir as T

t_import = time.perf_counter() - t0
if os.environ.get("TESSEL_TEST_FORBID_CC"):  # no lowering either: building raises
    def forbidden(*args, **kwargs):
        raise AssertionError("tessel.build ran on a disk hit")
    sys.modules["tessel.build"].build = forbidden

FACTOR = {factor}

@tessel.jit(out=["B"])
def scale(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(FACTOR)

a = np.arange(10, dtype="float32")
t1 = time.perf_counter()
b = scale(a)
first = time.perf_counter() - t1
k = scale.compile()
print(json.dumps({{"ok": bool((b == a * FACTOR).all()), "from_disk": k.from_disk,
                  "reasons": scale.recompile_reasons, "first_call": first,
                  "import": t_import}}))
'''


def cc_wrapper(tmp_path: Path) -> tuple:
    """A C compiler that records each run in a log, and fails when TESSEL_TEST_FORBID_CC is
    set."""
    log = tmp_path / "cc.log"
    script = tmp_path / "cc.sh"
    real = os.environ.get("TESSEL_CC") or os.environ.get("CC") or "cc"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" >> {log}
        if [ -n "$TESSEL_TEST_FORBID_CC" ]; then echo "compiler forbidden" >&2; exit 1; fi
        exec {real} "$@"
        """))
    script.chmod(0o755)
    return script, log


def run_kernel(tmp_path: Path, env: dict, factor: int = 3, name: str = "k.py"):
    path = tmp_path / name
    path.write_text(KERNEL.format(factor=factor))
    return subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def result(proc) -> dict:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def base_env(tmp_path: Path) -> dict:
    env = dict(os.environ)
    env["TESSEL_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("TESSEL_LOG", None)
    return env


def test_new_process_loads_from_disk_without_compiler(tmp_path):
    cc, log = cc_wrapper(tmp_path)
    env = dict(base_env(tmp_path), TESSEL_CC=str(cc))
    first = result(run_kernel(tmp_path, env))
    assert first["ok"] and not first["from_disk"]
    assert "disk cache miss" in first["reasons"][0]
    runs = log.read_text()
    assert runs  # the compiler ran (--version and the build)
    # A new process with a compiler that fails and tessel.build replaced by a function that
    # raises: the kernel is loaded, nothing is lowered or compiled.
    second = result(run_kernel(tmp_path, dict(env, TESSEL_TEST_FORBID_CC="1")))
    assert second["ok"] and second["from_disk"], second
    assert "loaded from disk cache" in second["reasons"][0]
    assert log.read_text() == runs, "a compiler ran on a disk hit"


def test_changed_captured_value_recompiles(tmp_path):
    env = base_env(tmp_path)
    assert result(run_kernel(tmp_path, env, factor=3))["ok"]
    r = result(run_kernel(tmp_path, env, factor=4))
    assert r["ok"] and not r["from_disk"]
    assert len(list((tmp_path / "cache" / "jit").glob("*.json"))) == 2


def test_two_processes_compile_the_same_kernel_at_once(tmp_path):
    env = base_env(tmp_path)
    procs = [run_kernel(tmp_path, env, name=f"k{i}.py") for i in range(2)]
    results = [result(p) for p in procs]
    assert all(r["ok"] for r in results)
    jit_dir = tmp_path / "cache" / "jit"
    metas = list(jit_dir.glob("*.json"))
    assert len(metas) == 1 and len(list(jit_dir.glob("*.so"))) == 1
    assert not list(jit_dir.glob(".tmp-*"))
    info = json.loads(metas[0].read_text())
    assert info["name"] == "scale" and info["key"] == metas[0].stem
    third = result(run_kernel(tmp_path, env, name="k2.py"))
    assert third["ok"] and third["from_disk"]


def test_cache_api(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSEL_CACHE_DIR", str(tmp_path / "c"))
    assert tessel.jit.cache_dir() == tmp_path / "c" / "jit"

    @tessel.jit
    def zero(A: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("A"):
                vi = T.axis.spatial(n, i)
                A[vi] = T.float32(0)

    a = np.ones(4, np.float32)
    zero(a)
    assert (a == 0).all()
    entries = tessel.jit.list_entries()
    assert [e["name"] for e in entries] == ["zero"] and entries[0]["target"] == "c"
    assert (tessel.jit.cache_dir() / "meta").is_dir()  # memoized library hash, compiler id
    assert tessel.jit.clear_cache() >= 3
    assert tessel.jit.list_entries() == []
    monkeypatch.delenv("TESSEL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tessel.jit.cache_dir() == tmp_path / "xdg" / "tessel" / "jit"
