"""Every CPU example built for target c and checked against NumPy on several shapes (sizes no vector
width divides among them), from tessel and from a process that imports only tvm_ffi and NumPy."""

import subprocess
import sys
import textwrap

import pytest

from tessel.examples_cpu import EXAMPLES_CPU, check_example

CASES = [(ex, shape) for ex in EXAMPLES_CPU for shape in ex.shapes]


@pytest.mark.parametrize("ex,shape", CASES,
                         ids=[f"{ex.name}-{'x'.join(map(str, s))}" for ex, s in CASES])
def test_example_matches_numpy(ex, shape):
    for seed in range(3):
        check_example(ex, shape, seed=seed)


@pytest.mark.parametrize("ex", EXAMPLES_CPU, ids=[ex.name for ex in EXAMPLES_CPU])
def test_exported_library_runs_under_plain_tvm_ffi(ex, tmp_path, repo):
    from tessel.examples_cpu import build_example

    mod, _ = build_example(ex)
    lib = tmp_path / f"{ex.name}.so"
    mod.export_library(str(lib))
    # The child imports tvm_ffi and NumPy only; it reuses the example table's data makers and
    # references by loading examples_cpu.py as a plain file (no tessel package, no libtessel).
    script = textwrap.dedent(f"""
        import importlib.util, sys
        import numpy as np, tvm_ffi
        spec = importlib.util.spec_from_file_location("ex", {str(repo / "python/tessel/examples_cpu.py")!r})
        exmod = importlib.util.module_from_spec(spec)
        sys.modules["ex"] = exmod  # dataclasses look their module up there
        spec.loader.exec_module(exmod)
        ex = next(e for e in exmod.EXAMPLES_CPU if e.name == {ex.name!r})
        func = tvm_ffi.load_module({str(lib)!r})[{ex.name!r}]
        for shape in ex.shapes:
            args = ex.make(np.random.default_rng(1), shape)
            func(*[tvm_ffi.from_dlpack(a) if isinstance(a, np.ndarray) else a for a in args])
            for pos, want in ex.reference(*args).items():
                np.testing.assert_allclose(args[pos], want, rtol=ex.rtol, atol=ex.atol)
        assert "tessel" not in sys.modules, sorted(m for m in sys.modules if "tessel" in m)
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True,
                       timeout=120, env=_env_without_tessel())
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def _env_without_tessel():
    import os

    import numpy
    import tvm_ffi

    env = dict(os.environ)
    # -S drops site-packages (and the dev .pth that puts tessel on the path): hand the child only
    # the directories holding numpy and tvm_ffi.
    from pathlib import Path

    env["PYTHONPATH"] = os.pathsep.join(
        sorted({str(Path(numpy.__file__).parents[1]), str(Path(tvm_ffi.__file__).parents[1])}))
    env.pop("TESSEL_LIBRARY_PATH", None)
    return env
