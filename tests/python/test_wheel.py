"""The installed package outside the source tree: scripts/test_wheel.sh builds the wheel, installs
it into a fresh venv and runs tessel from a temp folder (import, a kernel against NumPy,
`python -m tessel`, the CLI). About a minute and a half when ccache holds the objects; the first run
compiles the library (several minutes on two cores)."""

import subprocess


def test_wheel_installs_and_runs_outside_the_source_tree(repo):
    r = subprocess.run(["bash", str(repo / "scripts" / "test_wheel.sh")], capture_output=True,
                       text=True, timeout=1800, cwd="/")
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
