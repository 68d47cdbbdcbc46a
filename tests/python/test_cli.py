"""The tessel command line."""

import subprocess

import pytest
from conftest import needs_text

import tessel

KERNEL = '''# from tvm.script import tir as T

@T.prim_func
def scale(A: T.Buffer((64,), "float32")):
    for i in range(64):
        A[i] = A[i] * T.float32(2)
'''


def run(cli, *args, stdin=None):
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, input=stdin,
                          timeout=60)


def test_help_lists_commands(cli):
    r = run(cli, "--help")
    assert r.returncode == 0
    assert "usage: tessel" in r.stdout and "fmt" in r.stdout


def test_version_matches_package(cli):
    r = run(cli, "--version")
    assert r.returncode == 0 and r.stdout.strip() == f"tessel {tessel.__version__}"


def test_no_arguments_is_a_usage_error(cli):
    r = run(cli)
    assert r.returncode == 2 and "usage" in r.stderr


def test_unknown_command(cli):
    r = run(cli, "frobnicate")
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr


def test_fmt_help(cli):
    r = run(cli, "fmt", "--help")
    assert r.returncode == 0 and "tessel fmt" in r.stdout


def test_fmt_usage_errors(cli):
    assert run(cli, "fmt").returncode == 2
    r = run(cli, "fmt", "--bogus", "x.py")
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr


def test_fmt_missing_file(cli, tmp_path):
    r = run(cli, "fmt", tmp_path / "absent.py")
    assert r.returncode == 1
    assert "absent.py" in r.stderr and r.stdout == ""


@needs_text
def test_fmt_prints_canonical_text(cli, tmp_path):
    f = tmp_path / "k.py"
    f.write_text(KERNEL)
    r = run(cli, "fmt", f)
    assert r.returncode == 0, r.stderr
    assert r.stdout == tessel.as_text(tessel.parse(KERNEL))
    # The canonical form is a fixed point.
    canon = tmp_path / "canon.py"
    canon.write_text(r.stdout)
    assert run(cli, "fmt", "--check", canon).returncode == 0
    assert run(cli, "fmt", canon).stdout == r.stdout


@needs_text
def test_fmt_keeps_a_python_kernel_files_preamble(cli, tmp_path, repo):
    """A kernel file that is also a Python module keeps its comments and imports; the result is
    a fixed point and still imports as a module."""
    f = tmp_path / "mod_kernel.py"
    f.write_text((repo / "examples" / "matmul.py").read_text())
    assert run(cli, "fmt", "-i", f).returncode == 0
    text = f.read_text()
    assert "from tessel.script import tir as T\n" in text and "# from tvm.script" not in text
    assert text.startswith("#")  # the description comment stays first
    assert run(cli, "fmt", "--check", f).returncode == 0
    from conftest import import_file  # noqa: PLC0415

    mod = import_file(f, "fmt_mod_kernel")
    tessel.ir.assert_structural_equal(mod.matmul, tessel.parse(text))


@needs_text
def test_fmt_stdin_and_in_place(cli, tmp_path):
    r = run(cli, "fmt", "-", stdin=KERNEL)
    assert r.returncode == 0, r.stderr
    f = tmp_path / "k.py"
    f.write_text(KERNEL)
    assert run(cli, "fmt", "-i", f).returncode == 0
    assert f.read_text() == r.stdout


@needs_text
def test_fmt_bad_input_reports_location_and_continues(cli, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("@T.prim_func\ndef f(:\n")
    good = tmp_path / "good.py"
    good.write_text(KERNEL)
    r = run(cli, "fmt", bad, good)
    assert r.returncode == 1
    assert "bad.py:" in r.stderr and "error" in r.stderr
    assert "T.float32(2)" in r.stdout  # the good file is still printed
