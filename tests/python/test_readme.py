"""The README's front-end example runs as written (from a file, as a user would run it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def test_readme_jit_example_runs(repo, tmp_path):
    text = (repo / "README.md").read_text()
    section = text[text.index("### Write a kernel in Python and call it"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    code += "\nassert np.allclose(c, a + b)\nprint('ok', vector_add.recompile_reasons)\n"
    script = tmp_path / "readme_example.py"
    script.write_text(code)
    env = dict(os.environ, TESSEL_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(repo / "python"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ok" in r.stdout and "first call" in r.stdout
