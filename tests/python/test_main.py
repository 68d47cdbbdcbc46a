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
    assert "a few analyzer answers" in r.stdout


@needs_text
def test_main_job_fails_on_bad_input(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("@T.prim_func\ndef f(:\n")
    r = run_main(bad)
    assert r.returncode == 1
    assert "bad.py" in r.stderr


def test_main_job_answers_analyzer_questions():
    # The analyzer answers need no parser: check the ones whose answer is certain.
    r = subprocess.run([sys.executable, "-c", "from tessel.__main__ import analyzer_answers as h;"
                        "print(dict(h()))"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    answers = eval(r.stdout)  # noqa: S307 (our own dict repr)
    assert answers["bound bx * 64 + ty * 8 + tx"] == "[0, 1023]"
    assert answers["prove bx * 64 + ty * 8 + tx < 1024"] == "proved"
    assert answers["prove bx * 64 + ty * 8 + tx < 1023"] == "not proved"
    assert answers["prove x + 1 > x (x: any int32; wraps at max)"] == "not proved"
