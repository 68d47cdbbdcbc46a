"""Times Apache TVM's TVMScript parser and printer on a text file (the peer figure for
tessel_bench_text). Run it with a Python that has apache-tvm installed, on the module that
`tessel_bench_text --emit FILE` wrote:

    python bench/tvm_peer_text.py FILE [--runs N]

Recent apache-tvm releases (0.25 and later) renamed T.block to T.sblock, and their well-formedness
check rejects blocks outside a root block; the text is adapted for that (the rename only), and the
check is switched off so that both sides do the same work: parse and print.
"""
import argparse
import statistics
import time

import tvm
import tvm.script.parser.tirx
from tvm.script import from_source


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    text = open(args.file).read()
    if not hasattr(tvm.script.parser.tirx, "block"):
        text = text.replace("T.block(", "T.sblock(")
    lines = text.count("\n")
    parse_ms, print_ms = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        mod = from_source(text, check_well_formed=False)
        t1 = time.perf_counter()
        mod.script()
        t2 = time.perf_counter()
        parse_ms.append((t1 - t0) * 1e3)
        print_ms.append((t2 - t1) * 1e3)
    total = [p + q for p, q in zip(parse_ms, print_ms)]
    print(f"apache-tvm {tvm.__version__}: {lines} lines, median of {args.runs} runs")
    print(f"{'phase':<12} {'median ms':>10} {'min ms':>10} {'lines/s':>14}")
    for name, v in (("parse", parse_ms), ("print", print_ms), ("parse+print", total)):
        med = statistics.median(v)
        print(f"{name:<12} {med:>10.1f} {min(v):>10.1f} {lines / (med / 1e3):>14.0f}")


if __name__ == "__main__":
    main()
