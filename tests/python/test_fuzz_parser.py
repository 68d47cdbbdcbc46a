"""A seeded, time-bounded mutation fuzzer of the text parser (docs/reliability.md, "Parser fuzzer").

Seeds are real programs: the TVM 0.27 corpus (tests/python/tvm_corpus, as TVM prints them), the
examples and the libFuzzer corpus (tests/fuzz/corpus). Each input is a seed mutated a few times:
characters deleted, inserted or replaced, a token from a dictionary of the format's words
inserted or substituted, a line duplicated, deleted or swapped, a bracket dropped, the text cut
short, two seeds spliced. Every input must parse, or raise a ValueError / SyntaxError /
RecursionError whose message gives the line and column ("<fuzz>:12:5: ..."); a crash, a hang, any
other exception, or an error without a location fails the case.

Each seed runs in a child process (a crash kills the child, not pytest) with the cases of a
`default_rng([seed, i])`, so `python tests/python/test_fuzz_parser.py --seed S --case I` replays
one. The seeds share a time budget: TESSEL_FUZZ_SECONDS (default 15) in all.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = [5, 6, 7]
SECONDS = float(os.environ.get("TESSEL_FUZZ_SECONDS", "15"))

WORDS = [
    "T.prim_func", "T.Buffer", "T.block", "T.axis.spatial", "T.axis.reduce", "T.reads", "T.writes",
    "T.init()", "T.grid", "T.serial", "T.parallel", "T.unroll", "T.vectorized", "T.thread_binding",
    "T.alloc_buffer", "T.match_buffer", "T.func_attr", "T.if_then_else", "T.Cast", "T.int32",
    "T.float32", "T.bool", "T.handle", "T.Let", "T.Select", "T.max", "T.min", "T.exp",
    "T.address_of", "T.call_extern", "T.launch_thread", "T.env_thread", "T.evaluate",
    "T.decl_buffer", "T.allocate", "T.Kernel", "T.copy", "T.gemm", "T.Pipelined", "T.Parallel",
    "@I.ir_module", "class", "def", "for", "in", "if", "else", "with", "as", "return", "lambda",
    "and", "or", "not", "None", "True", "False", '"float16"', '"int64"', '"global"', '"shared"',
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "=", "==", "+", "-", "*", "//", "%", "/", "**",
    "<", "<=", ">", ">=", "!=", "<<", ">>", "&", "|", "^", "~", "@", "#", "\\", "'", '"', "\t",
    "\n", "    ", "0", "1", "-1", "2147483648", "9223372036854775808", "1e400", "0x10", "1.5",
    "nan", "inf", "x", "i", "A", "B", "T", "I", "\x00", "\u00e9", "\U0001F600",
]


def seed_texts() -> list[str]:
    texts = []
    for folder, pattern in [(ROOT / "tests" / "python" / "tvm_corpus", "*.py"),
                            (ROOT / "tests" / "fuzz" / "corpus", "*"),
                            (ROOT / "examples", "*.py")]:
        for path in sorted(folder.glob(pattern)):
            text = path.read_text(errors="replace")
            if "T.prim_func" in text and path.name != "check_tvm_parses.py":
                texts.append(text)
    return texts


def mutate(text: str, texts: list[str], rng: np.random.Generator) -> str:
    for _ in range(int(rng.integers(1, 5))):
        kind = int(rng.integers(0, 10))
        n = len(text)
        at = int(rng.integers(0, n + 1))
        if kind == 0 and n:  # delete a run of characters
            text = text[:at] + text[at + int(rng.integers(1, 8)):]
        elif kind == 1:  # insert random characters
            chars = "".join(chr(int(c)) for c in rng.integers(32, 127, int(rng.integers(1, 6))))
            text = text[:at] + chars + text[at:]
        elif kind == 2:  # insert a word of the format
            text = text[:at] + WORDS[int(rng.integers(0, len(WORDS)))] + text[at:]
        elif kind == 3:  # replace an identifier-like token with a word
            tokens = list(re.finditer(r"[A-Za-z_][A-Za-z_0-9.]*|\d+", text))
            if tokens:
                m = tokens[int(rng.integers(0, len(tokens)))]
                word = WORDS[int(rng.integers(0, len(WORDS)))]
                text = text[:m.start()] + word + text[m.end():]
        elif kind in (4, 5, 6):  # duplicate, delete or swap lines
            lines = text.split("\n")
            i, j = (int(v) for v in rng.integers(0, len(lines), 2))
            if kind == 4:
                lines.insert(j, lines[i])
            elif kind == 5 and len(lines) > 1:
                del lines[i]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        elif kind == 7:  # drop a bracket
            brackets = [m.start() for m in re.finditer(r"[()\[\]{}]", text)]
            if brackets:
                k = brackets[int(rng.integers(0, len(brackets)))]
                text = text[:k] + text[k + 1:]
        elif kind == 8:  # cut the text short
            text = text[:at]
        else:  # splice another seed in
            other = texts[int(rng.integers(0, len(texts)))]
            k = int(rng.integers(0, len(other) + 1))
            text = text[:at] + other[k:k + int(rng.integers(1, 400))] + text[at:]
    return text


LOCATED = re.compile(r"<fuzz>:\d+:\d+")


def check(text: str) -> str | None:
    """None when the parser's answer is acceptable, else what was wrong."""
    import tvm_ffi

    try:
        tvm_ffi.get_global_func("tessel.ir.ParseModule")(text, "<fuzz>")
    except (ValueError, SyntaxError, RecursionError) as err:
        if not LOCATED.search(str(err)):
            return f"{type(err).__name__} without a line and column: {str(err)[:300]}"
    except Exception as err:  # noqa: BLE001  (any other kind is the finding)
        return f"unexpected {type(err).__name__}: {str(err)[:300]}"
    return None


def child(seed: int, seconds: float, case: int | None) -> int:
    import tessel  # noqa: F401  (loads libtessel)

    texts = seed_texts()
    cases = [case] if case is not None else range(10**9)
    start, count, bad = time.monotonic(), 0, []
    for i in cases:
        if case is None and time.monotonic() - start > seconds:
            break
        rng = np.random.default_rng([seed, i])
        base = texts[int(rng.integers(0, len(texts)))]
        text = mutate(base, texts, rng)
        # The case in flight, for the parent to name if this process dies or hangs.
        sys.stderr.write(f"case {i}\n")
        problem = check(text)
        count += 1
        if problem is not None:
            bad.append(f"seed {seed} case {i}: {problem}")
            if len(bad) >= 5:
                break
    print(f"inputs {count}")
    for b in bad:
        print("BAD", b)
    return 0


def run_seed(seed: int, seconds: float) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "python")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [sys.executable, __file__, "--seed", str(seed), "--seconds", str(seconds)]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=seconds + 60)
    except subprocess.TimeoutExpired as err:
        last = (err.stderr or b"").decode(errors="replace").strip().splitlines()[-1:]
        pytest.fail(f"seed {seed}: the parser hung ({last}); replay: {' '.join(cmd[1:3])} "
                    f"--seed {seed} --case N")
    last = proc.stderr.strip().splitlines()[-1:] if proc.stderr.strip() else []
    assert proc.returncode == 0, (
        f"seed {seed}: the child died with {proc.returncode} (negative: signal) at {last}; "
        f"replay: python {__file__} --seed {seed} --case N\n{proc.stderr[-3000:]}")
    return proc.stdout


@pytest.mark.parametrize("seed", SEEDS)
def test_mutated_programs_parse_or_fail_with_a_location(seed):
    out = run_seed(seed, SECONDS / len(SEEDS))
    count = int(re.search(r"inputs (\d+)", out).group(1))
    print(f"seed {seed}: {count} inputs")
    bad = [line for line in out.splitlines() if line.startswith("BAD")]
    assert not bad, "\n".join(bad)
    assert count > 50, out


def test_the_mutator_makes_inputs_the_parser_refuses_and_accepts():
    # The fuzzer is only as good as its mix: most mutants fail to parse, some still parse.
    import tvm_ffi

    import tessel  # noqa: F401

    texts = seed_texts()
    assert len(texts) >= 80
    parsed = refused = 0
    for i in range(200):
        rng = np.random.default_rng([1, i])
        text = mutate(texts[int(rng.integers(0, len(texts)))], texts, rng)
        try:
            tvm_ffi.get_global_func("tessel.ir.ParseModule")(text, "<fuzz>")
            parsed += 1
        except Exception:  # noqa: BLE001
            refused += 1
    assert parsed >= 5 and refused >= 100, (parsed, refused)


FUNC = """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in T.serial(8):
        A[i] = A[i] + T.float32(1)
"""


def test_what_the_fuzzer_found_is_reported_with_a_location():
    import tvm_ffi

    import tessel  # noqa: F401

    parse = tvm_ffi.get_global_func("tessel.ir.ParseModule")
    # An IR constructor's error inside a statement (a string as a loop extent) gets the
    # statement's line and column.
    with pytest.raises(ValueError, match=r"<fuzz>:4:5: error: IntImm: dtype must be a scalar integer"):
        parse(FUNC.replace("T.serial(8)", 'T.unroll("int64")'), "<fuzz>")
    # An unknown escape before a multi-byte character: the message names the character whole
    # (it used to cut its UTF-8 sequence, and the message could not be decoded).
    bad = FUNC.replace("A[i] = A[i] + T.float32(1)", 'T.evaluate(T.call_extern("int32", "f", "\\\u00e9"))')
    with pytest.raises(ValueError, match="<fuzz>:5:.*unknown escape sequence '\\\\\u00e9'"):
        parse(bad, "<fuzz>")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--seconds", type=float, default=SECONDS)
    ap.add_argument("--case", type=int)
    args = ap.parse_args()
    sys.exit(child(args.seed, args.seconds, args.case))
