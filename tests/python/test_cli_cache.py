"""`tessel cache ls|clear|dir`: the jit cache's kernels and the C build cache, from the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tessel._lib import get_global_func

pytestmark = pytest.mark.skipif(get_global_func("tessel.ir.ParseSource") is None,
                                reason="libtessel has no Python-source parser yet "
                                       "(tessel.ir.ParseSource)")


KERNEL = textwrap.dedent('''
    from __future__ import annotations
    import numpy as np, tessel
    from tessel.script import tir as T

    @tessel.jit
    def fill_one(A: T.Buffer((n,), "float32")):
        for i in range(n):
            A[i] = T.float32(1)

    a = np.zeros(8, "float32")
    fill_one(a)
    assert (a == 1).all()
''')


def run(cli, env, *args):
    return subprocess.run([str(cli), "cache", *args], capture_output=True, text=True, env=env,
                          timeout=60)


@pytest.fixture()
def env(tmp_path):
    e = dict(os.environ, TESSEL_CACHE_DIR=str(tmp_path / "cache"))
    e.pop("TESSEL_LOG", None)
    return e


def test_ls_and_clear(cli, env, tmp_path):
    r = run(cli, env, "ls")
    assert r.returncode == 0, r.stderr
    assert "jit cache: " + str(tmp_path / "cache" / "jit") + " (0 kernels" in r.stdout
    # Fill both caches through the jit in another process.
    script = tmp_path / "fill.py"
    script.write_text(KERNEL)
    p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    (tmp_path / "cache" / "unrelated.txt").write_text("kept")
    r = run(cli, env, "ls")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "(1 kernel," in lines[0]
    row = next(line for line in lines if "fill_one" in line)
    assert row.split()[1] == "c" and ("KB" in row or " B " in row)
    build = next(line for line in lines if line.startswith("build cache: "))
    assert str(tmp_path / "cache") in build and "(0 files" not in build
    r = run(cli, env, "clear")
    assert r.returncode == 0, r.stderr
    assert "removed 1 kernel" in r.stdout and "build cache: removed" in r.stdout
    r = run(cli, env, "ls")
    assert "(0 kernels" in r.stdout and "(0 files" in r.stdout
    assert (tmp_path / "cache" / "unrelated.txt").read_text() == "kept"


def test_clear_one_cache_and_usage(cli, env, tmp_path):
    r = run(cli, env, "clear", "--jit")
    assert r.returncode == 0 and "build cache" not in r.stdout
    r = run(cli, env, "dir")
    assert r.returncode == 0 and f"jit: {tmp_path / 'cache' / 'jit'}" in r.stdout
    assert run(cli, env).returncode == 2
    r = run(cli, env, "frob")
    assert r.returncode == 2 and "unknown subcommand 'frob'" in r.stderr
    r = run(cli, env, "clear", "--all")
    assert r.returncode == 2 and "unknown option '--all'" in r.stderr
    r = subprocess.run([str(cli), "--help"], capture_output=True, text=True)
    assert "cache" in r.stdout
