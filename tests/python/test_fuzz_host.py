"""A seeded, time-bounded fuzzer of the host wrapper (docs/reliability.md, "Host wrapper fuzzer").

Random argument lists (made in fuzz_host_cases.py, which test_fuzz_host_gpu.py shares) go to a
handful of kernels built for the C target: wrong argument counts,
non-tensors, wrong dtypes and ranks, shapes that disagree, non-contiguous and zero-size arrays,
scalars at and past their range, tensors on other devices, with byte offsets, NULL data or
negative extents (DLPack capsules made here, so any DLTensor can be faked), read-only arrays,
and strided views whose element indices reach just inside or just past int32. Each call either
raises a TypeError or ValueError whose message starts with the function's name, names the
argument, and says what was expected and what it got, with no output written; or it succeeds
and the outputs equal NumPy's. Anything else fails the case.

Each seed of SEEDS runs in a child process, so a crash fails one test and names the seed and
the last case; case i of a seed draws everything from `default_rng([seed, i])`, so
`python tests/python/test_fuzz_host.py --seed S --case I` replays it alone. The seeds share a
time budget: TESSEL_FUZZ_SECONDS (default 18, about 22 s with the children's start-up) in
all.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from fuzz_host_cases import KERNELS, FakeTensor, arguments, big_memory, fuzz, run_seed

SEEDS = [11, 22, 33, 44]
SECONDS = float(os.environ.get("TESSEL_FUZZ_SECONDS", "18"))


@pytest.mark.parametrize("seed", SEEDS)
def test_fuzz_host_wrapper(seed):
    run_seed(__file__, seed, SECONDS / len(SEEDS))


def regressions():
    """What the fuzzer found, replayed by hand with the exact messages: a strided view whose
    element indices pass int32 made the kernel's wrapping index arithmetic read elsewhere (a
    segfault here) until the wrapper checked the span."""
    from numpy.lib.stride_tricks import as_strided

    import tessel

    f = tessel.build(KERNELS, target="c")["strided"]
    big = big_memory()
    if big is None:
        print("skip: cannot map 8 GiB of address space")
        return 0
    span_error = ("strided: A.strides: expected element indices within int32 (-2147483648 to "
                  "2147483647), got {} to {} (elem_offset + sum((shape[d] - 1) * strides[d]))")

    def view(rows, stride, start=0):
        v = as_strided(big[start:], shape=(rows, 2), strides=(4 * stride, 4))
        for k in range(rows):
            v[k] = [k + 1, -k]
        return v

    # Three rows 2^30 apart: the last element's index is 2^31 + 1.
    a, b = view(3, 2**30), np.zeros((3, 2), "float32")
    try:
        f(a, b)
        raise AssertionError("a view past int32 indices was accepted")
    except ValueError as err:
        assert str(err) == span_error.format(0, 2**31 + 1), str(err)
    assert not b.any()
    # The largest legal span, both ways; the kernel reads every row from where it is.
    for rows, stride, start in [(3, (2**31 - 2) // 2, 0), (3, -2**30, 2**31)]:
        a, b = view(rows, stride, start), np.zeros((rows, 2), "float32")
        f(a, b)
        assert np.array_equal(b, a * 2 + 1), (rows, stride, b)
    # An element offset counts too: byte_offset 2^32 puts row 0 at index 2^30.
    a = FakeTensor(big, shape=(2, 2), strides=(2**30, 1), byte_offset=4 * 2**30)
    try:
        f(a, np.zeros((2, 2), "float32"))
        raise AssertionError("an offset view past int32 indices was accepted")
    except ValueError as err:
        assert str(err) == span_error.format(2**30, 2**31 + 1), str(err)
    print("ok")
    return 0


def test_regressions_in_a_child():
    proc = subprocess.run([sys.executable, __file__, "--regressions"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    if proc.stdout.startswith("skip"):
        pytest.skip(proc.stdout.strip())
    assert proc.stdout.strip() == "ok"


if __name__ == "__main__":
    opts = arguments(extra=lambda ap: ap.add_argument("--regressions", action="store_true"))
    if opts.regressions:
        sys.exit(regressions())
    sys.exit(fuzz(opts.seed, opts.seconds, opts.case))
