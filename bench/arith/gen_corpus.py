"""Writes bench/arith/corpus.txt: the index arithmetic that tiled, fused, vectorized and swizzled
kernels produce, as simplify and prove queries (deterministic; rerun after editing a template).

    python bench/arith/gen_corpus.py [OUT]

Line format (fields separated by " ; "; '#' starts a comment line):

    KIND ; EXPR ; FIELD ; FIELD ...

KIND is `simplify` or `prove`. EXPR is in the text format's expression syntax. FIELDs:
    var NAME:DTYPE     declares NAME (undeclared names are int32)
    bind NAME=LO:HI    NAME ranges over [LO, HI)
    bind NAME=VALUE    NAME equals VALUE
    assume COND        COND holds (a constraint scope around the query)
    want EXPR          (simplify) the simplest form we know; a result structurally equal to it,
                       or no bigger, counts
    expect true|false  (prove) whether COND really holds for every allowed value: a complete
                       analyzer proves every `true` one, and proving a `false` one is unsound
"""

from __future__ import annotations

import sys
from pathlib import Path

TILES = (2, 4, 8, 16, 32, 64, 128)


def q(kind: str, expr: str, *fields: str) -> str:
    return " ; ".join((kind, expr) + fields)


def simplify_queries() -> list[str]:
    out = []
    # Split and fuse: the loop-tiling identities.
    for t in TILES:
        n = t * 16
        out.append(q("simplify", f"(i // {t}) * {t} + i % {t}", f"bind i=0:{n}", "want i"))
        out.append(q("simplify", f"i % {t} + (i // {t}) * {t}", "want i"))
        out.append(q("simplify", f"(io * {t} + ii) // {t}", f"bind ii=0:{t}", f"bind io=0:{n}",
                     "want io"))
        out.append(q("simplify", f"(io * {t} + ii) % {t}", f"bind ii=0:{t}", f"bind io=0:{n}",
                     "want ii"))
        out.append(q("simplify", f"((i // {t}) * {t} + i % {t}) // {t}", f"bind i=0:{n}",
                     f"want i // {t}"))
        out.append(q("simplify", f"(f // {t}) // 4", f"bind f=0:{n * 4}", f"want f // {t * 4}"))
        out.append(q("simplify", f"(f % {t * 4}) // {t}", f"bind f=0:{n * 4}",
                     f"want f % {t * 4} // {t}"))
        out.append(q("simplify", f"i * {t} + j - i * {t}", "want j"))
        out.append(q("simplify", f"(i + {t}) - i", f"want {t}"))
        out.append(q("simplify", f"(i * {t}) % {t}", "want 0"))
        # Bounded: for any int32 i, i * 2t may wrap and the identity fails.
        out.append(q("simplify", f"(i * {t * 2}) // {t}", "bind i=0:4096", "want i * 2"))
        out.append(q("simplify", f"(i * {t * 2} + {t}) % {t * 2}", f"want {t}"))
        out.append(q("simplify", f"(i * {t * 2} + j) % {t}", f"bind j=0:{t}", "want j"))
        out.append(q("simplify", f"i % {t} % {t * 4}", f"want i % {t}"))
        out.append(q("simplify", f"(i % {t}) // {t}", "want 0"))
    # Tile offsets of a 2-level GPU tiling: block, thread-y, thread-x.
    for bs, ty, tx in ((64, 8, 8), (128, 16, 8), (256, 16, 16), (32, 4, 8), (512, 32, 16)):
        binds = (f"bind bx=0:16", f"bind ty=0:{ty}", f"bind tx=0:{tx}")
        idx = f"bx * {bs} + ty * {tx} + tx"
        out.append(q("simplify", idx, *binds, f"want {idx}"))
        out.append(q("simplify", f"({idx}) // {bs}", *binds, "want bx"))
        out.append(q("simplify", f"({idx}) % {bs}", *binds, f"want ty * {tx} + tx"))
        out.append(q("simplify", f"({idx}) % {tx}", *binds, "want tx"))
        out.append(q("simplify", f"({idx}) // {tx} % {ty}", *binds, "want ty"))
        out.append(q("simplify", f"({idx}) - bx * {bs}", *binds, f"want ty * {tx} + tx"))
        out.append(q("simplify", f"T.min({idx}, {16 * bs - 1})", *binds, f"want {idx}"))
        out.append(q("simplify", f"T.max({idx}, 0)", *binds, f"want {idx}"))
        out.append(q("simplify", f"T.Select({idx} < {16 * bs}, {idx}, 0)", *binds, f"want {idx}"))
    # Fused loops over a 3-d iteration space.
    for a, b, c in ((4, 8, 16), (2, 16, 32), (8, 8, 8), (3, 5, 7), (16, 4, 2)):
        fb = f"bind f=0:{a * b * c}"
        out.append(q("simplify", f"(f // {b * c}) * {b * c} + (f // {c}) % {b} * {c} + f % {c}",
                     fb, "want f"))
        out.append(q("simplify", f"(f // {c}) // {b}", fb, f"want f // {b * c}"))
        out.append(q("simplify", f"(f // {c}) % {b} * {c} + f % {c}", fb, f"want f % {b * c}"))
        out.append(q("simplify", f"(x * {b} + y) * {c} + z", f"bind x=0:{a}", f"bind y=0:{b}",
                     f"bind z=0:{c}", f"want x * {b * c} + y * {c} + z"))
        out.append(q("simplify", f"((x * {b} + y) * {c} + z) // {c}", f"bind x=0:{a}",
                     f"bind y=0:{b}", f"bind z=0:{c}", f"want x * {b} + y"))
        out.append(q("simplify", f"((x * {b} + y) * {c} + z) % {c}", f"bind x=0:{a}",
                     f"bind y=0:{b}", f"bind z=0:{c}", "want z"))
    # Vector lanes: Ramp bases of vectorized loads.
    for lanes in (2, 4, 8):
        for t in (8, 16, 32):
            bt = f"T.Broadcast({t}, {lanes})"
            out.append(q("simplify", f"T.Ramp(i * {t}, 1, {lanes}) // {bt}", f"bind i=0:64",
                         f"want T.Broadcast(i, {lanes})"))
            out.append(q("simplify", f"T.Ramp(i * {t}, 1, {lanes}) % {bt}", f"bind i=0:64",
                         f"want T.Ramp(0, 1, {lanes})"))
            diff = f"T.Ramp(i * {t} + {lanes}, 1, {lanes}) - T.Broadcast(i * {t}, {lanes})"
            out.append(q("simplify", diff, "bind i=0:64", f"want T.Ramp({lanes}, 1, {lanes})"))
    # XOR swizzles of shared-memory layouts.
    for w in (4, 8):
        for g in (8, 16):
            rb = (f"bind row=0:{w}", f"bind col=0:{w * g}")
            sw = f"row ^ col // {g}"
            out.append(q("simplify", f"({sw}) % {w}", *rb, f"want {sw}"))
            out.append(q("simplify", f"(({sw}) % {w}) * {g} + col % {g}", *rb,
                         f"want ({sw}) * {g} + col % {g}"))
            out.append(q("simplify", f"(({sw}) * {g} + col % {g}) // {g}", *rb, f"want {sw}"))
            out.append(q("simplify", f"(({sw}) * {g} + col % {g}) % {g}", *rb, f"want col % {g}"))
            out.append(q("simplify", f"(row % {w}) ^ (col // {g} % {w})", *rb, f"want {sw}"))
    # Symbolic extents and facts.
    for t in (4, 16, 64):
        out.append(q("simplify", f"T.min(i, n - 1)", "bind i=0:n", "var n:int32",
                     "assume 0 < n", "want i"))
        # n is limited so that i * t and n * t cannot wrap (else the wanted form is wrong).
        out.append(q("simplify", f"T.max(i * {t}, 0)", "bind i=0:n", "assume n <= 65536",
                     "want i * " + str(t)))
        out.append(q("simplify", f"T.min(i * {t} + j, n * {t})", "bind i=0:n", f"bind j=0:{t}",
                     "assume n <= 65536", f"want i * {t} + j"))
        out.append(q("simplify", f"(n + {t - 1}) // {t} * {t} - n", "assume 0 <= n",
                     "assume n < 100000"))
        out.append(q("simplify", f"T.Select(i < n, i, n - 1)", "bind i=0:n", "want i"))
        out.append(q("simplify", f"i < n", "bind i=0:n", "want True"))
        out.append(q("simplify", f"i * {t} + j < n * {t}", "bind i=0:n", f"bind j=0:{t}",
                     "assume n <= 65536", "want True"))
        out.append(q("simplify", f"i < {t} and i < {t * 2}", f"want i < {t}"))
        out.append(q("simplify", f"not (i < {t})", f"want {t} <= i"))
    return out


def prove_queries() -> list[str]:
    out = []
    # Bounds checks of tiled accesses: i * t + j < n.
    for t in TILES:
        for m in (4, 16, 100):
            n = t * m
            binds = (f"bind i=0:{m}", f"bind j=0:{t}")
            out.append(q("prove", f"i * {t} + j < {n}", *binds, "expect true"))
            out.append(q("prove", f"i * {t} + j < {n - 1}", *binds, "expect false"))
            out.append(q("prove", f"0 <= i * {t} + j", *binds, "expect true"))
            out.append(q("prove", f"(i * {t} + j) // {t} == i", *binds, "expect true"))
        out.append(q("prove", f"i % {t} < {t}", "expect true"))
        out.append(q("prove", f"0 <= i % {t}", "expect true"))
        out.append(q("prove", f"i // {t} < 16", f"bind i=0:{t * 16}", "expect true"))
        out.append(q("prove", f"i // {t} < 15", f"bind i=0:{t * 16}", "expect false"))
        out.append(q("prove", f"(i // {t}) * {t} + i % {t} == i", "expect true"))
        out.append(q("prove", f"(i // {t}) * {t} <= i", f"bind i=0:{t * 64}", "expect true"))
        out.append(q("prove", f"i - (i // {t}) * {t} < {t}", f"bind i=0:{t * 64}", "expect true"))
        out.append(q("prove", f"(i * {t}) % {t} == 0", "expect true"))
        out.append(q("prove", f"(i * {t * 2} + {t}) % {t * 2} == {t}", "expect true"))
        out.append(q("prove", f"i * {t} + 1 != i * {t} + {t + 1}", "expect true"))
    # Symbolic bounds: loops over n with tiles.
    for t in (4, 8, 32, 128):
        out.append(q("prove", f"i * {t} + j < n * {t}", "bind i=0:n", f"bind j=0:{t}",
                     "assume n <= 65536", "expect true"))
        # Without a limit on n, n * t may wrap: then it is false.
        out.append(q("prove", f"i * {t} + j < n * {t}", "bind i=0:n", f"bind j=0:{t}",
                     "expect false"))
        out.append(q("prove", f"i < n", "bind i=0:n", "expect true"))
        out.append(q("prove", f"i + 1 <= n", "bind i=0:n", "expect true"))
        out.append(q("prove", f"i * {t} + j < m", "bind i=0:1024", f"bind j=0:{t}",
                     f"assume i * {t} + {t} <= m", "expect true"))
        out.append(q("prove", f"i < n", f"assume i < m", "assume m <= n", "expect true"))
        out.append(q("prove", f"i < n", f"assume i < m", "assume m < n + 2", "expect false"))
        out.append(q("prove", f"i + {t} < k", f"assume i + {t} < j", "assume j <= k",
                     "expect true"))
        out.append(q("prove", f"T.min(i, n - 1) < n", "bind i=0:n", "expect true"))
        out.append(q("prove", f"T.max(i, j) < n", "bind i=0:n", "bind j=0:n", "expect true"))
        out.append(q("prove", f"(n + {t - 1}) // {t} * {t} >= n", "assume 0 <= n",
                     "assume n < 1000000", "expect true"))
        # n + t wraps for n near the int32 maximum: false under the IR's semantics.
        out.append(q("prove", f"i < n + {t}", "bind i=0:n", "expect false"))
        out.append(q("prove", f"i < n + {t}", "bind i=0:n", "assume n < 1000000", "expect true"))
        out.append(q("prove", f"i < n - 1", "bind i=0:n", "expect false"))
    # GPU tile offsets.
    for bs, ty, tx in ((64, 8, 8), (128, 16, 8), (256, 16, 16), (32, 4, 8), (512, 32, 16)):
        binds = (f"bind bx=0:16", f"bind ty=0:{ty}", f"bind tx=0:{tx}")
        idx = f"bx * {bs} + ty * {tx} + tx"
        out.append(q("prove", f"{idx} < {16 * bs}", *binds, "expect true"))
        out.append(q("prove", f"{idx} < {16 * bs - 1}", *binds, "expect false"))
        out.append(q("prove", f"({idx}) // {bs} == bx", *binds, "expect true"))
        out.append(q("prove", f"({idx}) % {tx} == tx", *binds, "expect true"))
        out.append(q("prove", f"ty * {tx} + tx < {bs}", *binds, "expect true"))
        out.append(q("prove", f"({idx}) * 4 + 3 < {16 * bs * 4}", *binds, "expect true"))
        out.append(q("prove", f"{idx} < n", *binds, f"assume {16 * bs} <= n", "expect true"))
    # Fused loops.
    for a, b, c in ((4, 8, 16), (2, 16, 32), (8, 8, 8), (3, 5, 7), (16, 4, 2)):
        fb = f"bind f=0:{a * b * c}"
        out.append(q("prove", f"f // {b * c} < {a}", fb, "expect true"))
        out.append(q("prove", f"(f // {c}) % {b} < {b}", fb, "expect true"))
        out.append(q("prove", f"(f // {b * c}) * {b * c} + (f // {c}) % {b} * {c} + f % {c} == f",
                     fb, "expect true"))
        out.append(q("prove", f"(x * {b} + y) * {c} + z < {a * b * c}", f"bind x=0:{a}",
                     f"bind y=0:{b}", f"bind z=0:{c}", "expect true"))
        out.append(q("prove", f"(x * {b} + y) * {c} + z < {a * b * c - 1}", f"bind x=0:{a}",
                     f"bind y=0:{b}", f"bind z=0:{c}", "expect false"))
    # XOR swizzles.
    for w in (4, 8):
        for g in (8, 16):
            rb = (f"bind row=0:{w}", f"bind col=0:{w * g}")
            sw = f"row ^ col // {g}"
            out.append(q("prove", f"{sw} < {w}", *rb, "expect true"))
            out.append(q("prove", f"0 <= {sw}", *rb, "expect true"))
            out.append(q("prove", f"({sw}) * {g} + col % {g} < {w * g}", *rb, "expect true"))
            out.append(q("prove", f"{sw} < {w - 1}", *rb, "expect false"))
            out.append(q("prove", f"(row * {w * g} + (({sw}) * {g} + col % {g})) < {w * w * g}",
                         *rb, "expect true"))
    # Vectorized accesses: every lane in bounds, int64 offsets.
    for lanes in (4, 8):
        for t in (16, 64):
            out.append(q("prove", f"i * {t} + v * {lanes} + {lanes - 1} < {64 * t}", "bind i=0:64",
                         f"bind v=0:{t // lanes}", "expect true"))
            out.append(q("prove", f"(i * {t} + v * {lanes}) % {lanes} == 0", "bind i=0:64",
                         f"bind v=0:{t // lanes}", "expect true"))
            out.append(q("prove", f"i * T.int64({t}) + T.Cast(\"int64\", v) < n", "var i:int64",
                         "var n:int64", "bind i=0:1024", f"bind v=0:{t}",
                         f"assume T.int64({1024 * t}) <= n", "expect true"))
    # Wrap-around: true only without overflow, so false under the IR's wrapping semantics.
    out.append(q("prove", "x + 1 > x", "expect false"))
    out.append(q("prove", "x * 2 >= x", "bind x=0:1073741824", "expect true"))
    out.append(q("prove", "x * 2 >= x", "expect false"))
    out.append(q("prove", "x + 1 > x", "bind x=0:100", "expect true"))
    return out


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("corpus.txt")
    simp, prove = simplify_queries(), prove_queries()
    head = [
        "# Index-arithmetic corpus for tessel_bench_arith and bench/arith_bench.py.",
        "# Generated by bench/arith/gen_corpus.py (the format is described there); do not edit.",
        f"# {len(simp)} simplify queries, {len(prove)} prove queries.",
    ]
    out.write_text("\n".join(head + simp + prove) + "\n")
    print(f"wrote {out}: {len(simp)} simplify, {len(prove)} prove")


if __name__ == "__main__":
    main()
