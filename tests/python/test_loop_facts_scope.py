"""A loop's range is a fact only inside the loop: `for i in range(n)` says `0 <= i < n` where `i`
exists, not `n > 0` after the loop (which may not have run). The lowering used to drop a later
`if n > 0:` guard, so a call with n == 0 computed the guarded branch."""

import numpy as np

import tessel
from tessel.build import lower
from tessel.text import parse

SRC = '''
from tessel.script import tir as T

@T.prim_func
def after_loop(a: T.handle, out: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    Out = T.match_buffer(out, (1,), "float32")
    Out[0] = T.float32(0)
    for i in range(n):
        Out[0] = Out[0] + A[i]
    if n > 0:
        Out[0] = Out[0] + T.float32(100)
'''


def test_guard_after_the_loop_stays():
    text = str(lower(parse(SRC, "after_loop"), "c"))
    assert "if n >= 1:" in text or "if n > 0:" in text, text


def test_guard_after_the_loop_runs_correctly():
    f = tessel.build(parse(SRC, "after_loop"))["after_loop"]
    for n in (0, 1, 5):
        a = np.arange(n, dtype="float32")
        out = np.full(1, -1.0, "float32")
        f(a, out)
        want = a.sum() + (100.0 if n > 0 else 0.0)
        assert out[0] == want, (n, out[0], want)
