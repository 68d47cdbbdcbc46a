"""Does Apache TVM 0.27 parse what tessel prints? Not a pytest (TVM is not a dependency): a check
to run by hand, in two environments.

    .venv/bin/python tests/python/tvm_corpus/check_tvm_parses.py print /tmp/printed
    /tmp/tvm027/bin/python tests/python/tvm_corpus/check_tvm_parses.py parse /tmp/printed

`print` writes tessel's text of every corpus function and every example into the folder; `parse`
(in the environment of generate.py, with apache-tvm installed) has TVM parse each file and lists
the ones it refuses with TVM's first error line. Exit status 1 when a corpus function is refused
(examples may use constructs TVM 0.27 lacks, such as T.allocate or T.grid_sync).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def print_all(out: Path) -> None:
    import tessel  # noqa: PLC0415

    out.mkdir(parents=True, exist_ok=True)
    for entry in json.loads((HERE / "manifest.json").read_text()):
        text = (HERE / entry["file"]).read_text()
        (out / entry["file"]).write_text(tessel.as_text(tessel.parse(text)))
    for path in sorted((REPO / "examples").glob("*.py")):
        (out / ("example_" + path.name)).write_text(tessel.as_text(tessel.parse(path.read_text())))


def parse_all(folder: Path) -> int:
    import tvm  # noqa: PLC0415

    refused = {}
    files = sorted(folder.glob("*.py"))
    for path in files:
        try:
            tvm.script.from_source(path.read_text())
        except Exception as err:  # noqa: BLE001  (TVM raises several kinds)
            lines = [ln for ln in str(err).splitlines() if ln.strip()]
            first = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
            refused[path.name] = first.strip()[:160]
    print(f"TVM {tvm.__version__} parsed {len(files) - len(refused)} of {len(files)} files")
    for name, why in refused.items():
        print(f"  {name}: {why}")
    return 1 if any(not n.startswith("example_") for n in refused) else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("print", "parse"):
        sys.exit(__doc__)
    if sys.argv[1] == "print":
        print_all(Path(sys.argv[2]))
    else:
        sys.exit(parse_all(Path(sys.argv[2])))
