"""`python -m tessel`, the main job of ./scripts/run.sh."""

import subprocess
import sys

from conftest import needs_text


def run_main(*args):
    return subprocess.run([sys.executable, "-m", "tessel", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


@needs_text
def test_main_job_passes_on_examples():
    r = run_main()
    assert r.returncode == 0, r.stderr
    assert "round-tripped" in r.stdout
    assert "floordiv(-7, 2)" in r.stdout


@needs_text
def test_main_job_fails_on_bad_input(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("@T.prim_func\ndef f(:\n")
    r = run_main(bad)
    assert r.returncode == 1
    assert "bad.py" in r.stderr


def test_main_job_answers_folding_questions(tmp_path):
    # With no kernels given, only the helper answers are printed (no parser needed).
    r = subprocess.run([sys.executable, "-c", "from tessel.__main__ import helper_answers as h;"
                        "print(dict((k, str(v)) for k, v in h()))"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "-4" in r.stdout and "-128" in r.stdout
