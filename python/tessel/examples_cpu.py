"""The CPU examples of the main job: each kernel in examples/ that runs on the CPU, with the shapes to
try, a random-input maker and a NumPy reference. An installed package ships examples/ as
tessel/examples.

`check_example(spec, shape)` builds (once per spec, cached), runs the kernel on fresh random data and
compares with NumPy; both the main job (`python -m tessel`) and tests/python use it, so what the
README's first command shows is what the tests check.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np


def examples_dir() -> Path:
    """The example kernels: the installed package's tessel/examples (the wheel ships them), else the
    source tree's examples/."""
    here = Path(__file__).resolve().parent
    installed = here / "examples"
    return installed if installed.is_dir() else here.parents[1] / "examples"


EXAMPLES = examples_dir()


@dataclass
class Example:
    name: str
    # Shapes to try: each a tuple handed to `make`. Include sizes that no vector width divides.
    shapes: list
    # (rng, shape) -> the kernel's arguments in order; output arrays are zero-filled.
    make: Callable
    # The kernel's arguments -> {argument position: expected array}.
    reference: Callable
    rtol: float = 1e-5
    atol: float = 1e-6
    file: str = ""
    _module: object = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return EXAMPLES / (self.file or f"{self.name}.py")


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


def _softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _rows_f16(rng, m, n=4096):
    return (rng.standard_normal((m, n)) * 3).astype("float16")


def _norm(x, eps, center):
    # In float64 from the float16 inputs: the tile examples compute in float32.
    x = x.astype("float64")
    if center:
        x = x - x.mean(axis=1, keepdims=True)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)


def _attention(q, k, v):
    q, k, v = (x.astype("float64") for x in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def _indices(rng, n, k, dtype):
    # About a quarter of the indices out of range on either side, to exercise the mode.
    return rng.integers(-n // 2 - 1, n + n // 2 + 2, size=k).astype(dtype)


EXAMPLES_CPU = [
    Example(
        "vector_add",
        shapes=[(1024,), (1000,), (7,), (1,), (100003,)],
        make=lambda rng, s: [_f32(rng, *s), _f32(rng, *s), np.zeros(s, "float32")],
        reference=lambda a, b, c: {2: a + b},
        atol=0.0, rtol=0.0),
    Example(
        "matmul",
        shapes=[(64, 64, 64), (33, 17, 65), (1, 5, 1), (128, 96, 80)],
        make=lambda rng, s: [_f32(rng, s[0], s[2]), _f32(rng, s[2], s[1]),
                             np.zeros((s[0], s[1]), "float32")],
        reference=lambda a, b, c: {2: a @ b},
        rtol=1e-4, atol=1e-4),
    Example(
        "tile_gemm",
        shapes=[(64, 64, 64), (33, 17, 65), (1, 5, 1), (100, 70, 0)],
        make=lambda rng, s: [_f32(rng, s[0], s[2]), _f32(rng, s[2], s[1]),
                             np.zeros((s[0], s[1]), "float32")],
        reference=lambda a, b, c: {2: a @ b},
        rtol=1e-4, atol=1e-4),
    Example(
        "softmax_row",
        shapes=[(64, 256), (7, 33), (1, 1), (3, 1000)],
        make=lambda rng, s: [_f32(rng, *s), np.zeros(s, "float32")],
        reference=lambda a, b: {1: _softmax(a)},
        rtol=1e-5, atol=1e-6),
    # Row reductions written with tile operations (float16 rows of 4096, float32 math).
    Example(
        "tile_gemm_hopper",
        shapes=[(128, 256, 64), (70, 300, 100), (1, 1, 1)],
        make=lambda rng, s: [rng.standard_normal((s[0], s[2])).astype("float16"),
                             rng.standard_normal((s[1], s[2])).astype("float16"),
                             np.zeros((s[0], s[1]), "float16")],
        reference=lambda a, b, c: {2: a.astype("float64") @ b.astype("float64").T},
        rtol=1e-2, atol=2e-2),
    Example(
        "flash_attention",
        shapes=[(1, 2, 200), (2, 1, 1), (1, 1, 130)],
        make=lambda rng, s: [rng.standard_normal((*s, 64)).astype("float16") for _ in range(3)]
        + [np.zeros((*s, 64), "float16")],
        reference=lambda q, k, v, o: {3: _attention(q, k, v)},
        rtol=1e-2, atol=4e-3),
    Example(
        "gemm_softmax",
        shapes=[(100, 200, 70), (64, 256, 32), (1, 1, 1)],
        make=lambda rng, s: [rng.standard_normal((s[0], s[2])).astype("float16"),
                             rng.standard_normal((s[1], s[2])).astype("float16"),
                             np.zeros((s[0], s[1]), "float16")],
        reference=lambda a, b, y: {2: _softmax(a.astype("float64") @ b.astype("float64").T)},
        rtol=1e-2, atol=1e-3),
    Example(
        "softmax_tile",
        shapes=[(5,), (1,), (16,)],
        make=lambda rng, s: [_rows_f16(rng, *s), np.zeros((s[0], 4096), "float16")],
        reference=lambda x, y: {1: _softmax(x.astype("float64"))},
        rtol=1e-2, atol=4e-3),
    Example(
        "layernorm_tile",
        shapes=[(5,), (1,), (16,)],
        make=lambda rng, s: [_rows_f16(rng, *s), (1 + 0.5 * rng.standard_normal(4096)).astype(
            "float16"), (0.5 * rng.standard_normal(4096)).astype("float16"),
            np.zeros((s[0], 4096), "float16")],
        reference=lambda x, w, b, y: {3: _norm(x, 1e-5, True) * w.astype("float64")
                                      + b.astype("float64")},
        rtol=1e-2, atol=4e-3),
    Example(
        "rmsnorm_tile",
        shapes=[(5,), (1,), (16,)],
        make=lambda rng, s: [_rows_f16(rng, *s), (1 + 0.5 * rng.standard_normal(4096)).astype(
            "float16"), np.zeros((s[0], 4096), "float16")],
        reference=lambda x, w, y: {2: _norm(x, 1e-6, False) * w.astype("float64")},
        rtol=1e-2, atol=4e-3),
    Example(
        "take_gather",
        shapes=[(1000, 64, 32), (5, 3, 17), (1, 1, 4)],
        make=lambda rng, s: [_f32(rng, s[0], s[1]), _indices(rng, s[0], s[2], "int32"),
                             np.zeros((s[2], s[1]), "float32")],
        reference=lambda a, idx, b: {2: a[np.clip(idx, 0, a.shape[0] - 1)]},
        atol=0.0, rtol=0.0),
    Example(
        "take_fill",
        shapes=[(100, 16, 40), (5, 3, 17), (1, 7, 9)],
        make=lambda rng, s: [rng.integers(-1000, 1000, size=(s[0], s[1])).astype("int32"),
                             _indices(rng, s[0], s[2], "int64"), -7,
                             np.zeros((s[2], s[1]), "int32")],
        reference=lambda a, idx, fill, b: {3: np.where(
            ((idx >= 0) & (idx < a.shape[0]))[:, None],
            a[np.clip(idx, 0, a.shape[0] - 1)], np.int32(fill)).astype("int32")},
        atol=0.0, rtol=0.0),
]


def build_example(ex: Example):
    """The example's kernel built for the CPU (cached on the spec) and the build's wall time (s)."""
    if ex._module is None:
        from .build import build

        start = time.perf_counter()
        ex._module = build(ex.path, target="c")
        ex._compile_seconds = time.perf_counter() - start
    return ex._module, ex._compile_seconds


def _to_ffi(args):
    import tvm_ffi

    return [tvm_ffi.from_dlpack(a) if isinstance(a, np.ndarray) else a for a in args]


def check_example(ex: Example, shape, seed: int = 0, time_runs: int = 0):
    """Runs the example on random data of `shape`; raises AssertionError on a mismatch with NumPy.
    Returns the median run time in seconds over `time_runs` extra calls (0: not timed)."""
    mod, _ = build_example(ex)
    func = mod[ex.name]
    rng = np.random.default_rng(seed)
    args = ex.make(rng, shape)
    ffi_args = _to_ffi(args)
    func(*ffi_args)
    inputs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    for pos, want in ex.reference(*inputs).items():
        np.testing.assert_allclose(args[pos], want, rtol=ex.rtol, atol=ex.atol,
                                   err_msg=f"{ex.name} shape {shape}")
    if not time_runs:
        return 0.0
    times = []
    for _ in range(time_runs):
        start = time.perf_counter()
        func(*ffi_args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))
