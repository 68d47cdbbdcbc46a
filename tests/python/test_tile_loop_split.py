"""The split of a T.Pipelined loop at the iterations where its T.Parallel selects are decided
(src/transform/tile_loop_split.h): random conditions, linear or not, checked by enumeration. Sound:
below the bound every element of the nest takes the select's first operand. Exact: at the bound
some element does not. Undecidable conditions (a negative or zero coefficient of the loop
variable, a product of variables, a value bound inside the loop, a buffer load, floats) give no
split."""

from __future__ import annotations

import random

import pytest
import tvm_ffi

import tessel

PROGRAM = """
@T.prim_func
def f(A: T.Buffer((S, 16), "float32"), L: T.Buffer((4,), "int32")):
    with T.Kernel(T.ceildiv(S, 128), threads=128) as bx:
        F = T.alloc_fragment((8, 16), "float32")
        for k in T.Pipelined(T.ceildiv(S, 16), num_stages=2):
            for i, j in T.Parallel(8, 16):
                F[i, j] = T.if_then_else({cond}, F[i, j], T.float32(0))
        T.copy(F, A[bx * 8, 0])
"""


def split_of(cond: str):
    body = tessel.parse(PROGRAM.format(cond=cond)).body
    return tvm_ffi.get_global_func("tessel.tile.PlanLoopSplit")(body)


def py(text: str) -> str:
    return text.replace("T.min", "min").replace("T.max", "max")


def linear(rng: random.Random) -> str:
    terms = [f"{rng.randint(-3, 3)} * {v}" for v in ("k", "i", "j", "bx", "S")
             if rng.random() < 0.7]
    terms.append(str(rng.randint(-40, 40)))
    return " + ".join(terms)


def side(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return f"T.{rng.choice(['min', 'max'])}({linear(rng)}, {linear(rng)})"
    return linear(rng)


def condition(rng: random.Random) -> str:
    cmp = lambda: f"{side(rng)} {rng.choice(['<', '<=', '>', '>='])} {side(rng)}"  # noqa: E731
    return cmp() if rng.random() < 0.7 else f"{cmp()} and {cmp()}"


def holds(cond: str, env: dict) -> bool:
    return all(eval(cond, {"min": min, "max": max}, dict(env, i=i, j=j))  # noqa: S307
               for i in range(8) for j in range(16))


def test_random_conditions_split_soundly_and_exactly():
    rng = random.Random(16)
    decided = 0
    for _ in range(400):
        cond = condition(rng)
        got = split_of(cond)
        if got is None:
            continue
        decided += 1
        bound = py(tessel.as_text(got[0]))
        assert int(got[1]) == 1
        for s in (1, 17, 128, 300):
            for bx in (0, 1, 5):
                env = {"S": s, "bx": bx}
                b = eval(bound, {"min": min, "max": max}, env)  # noqa: S307
                for k in range(max(b - 6, -20), b):
                    assert holds(py(cond), dict(env, k=k)), (cond, bound, s, bx, k)
                assert not holds(py(cond), dict(env, k=b)), (cond, bound, s, bx, "exact")
    # Most random comparisons have some coefficient of k <= 0 in one part; enough qualify.
    assert decided >= 60, decided


@pytest.mark.parametrize("cond", [
    "k * 16 + j > S",          # holds late, not early
    "j < S",                   # not a function of k
    "k * k + j < S",           # not linear in k
    "k * 16 + j * i < S",      # nor in the nest's variables
    "k * 16 + j < S or i < 2",  # not a conjunction
    'T.Cast("float32", k) < T.float32(3)',  # not integers
    "k * 16 + j < L[0]",       # a load: the loop could change it
    "k * 16 + j < T.min(S, bx) * 2",  # fine: a min of invariants is invariant
])
def test_conditions_that_are_not_decided(cond):
    got = split_of(cond)
    if cond.startswith("k * 16 + j < T.min"):
        assert got is not None and tessel.as_text(got[0]) == "(T.min(S, bx) * 2 - 16) // 16 + 1"
    else:
        assert got is None


def test_the_attention_masks():
    got = split_of("k * 16 + j < S")
    assert tessel.as_text(got[0]) == "(S - 16) // 16 + 1"
    got = split_of("k * 16 + j <= T.min(bx * 8 + i, S - 1)")
    assert tessel.as_text(got[0]) == "T.min(bx * 8 - 15, S - 16) // 16 + 1"
