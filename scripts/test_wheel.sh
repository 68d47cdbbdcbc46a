#!/usr/bin/env bash
# Tests the installed package outside the source tree: builds the wheel (`pip wheel . --no-deps`
# with the build requirements pinned in pyproject.toml), installs it into a fresh venv in a temp
# folder and, from a temp folder, imports tessel, builds a kernel and checks it against NumPy (from
# Python and through `tessel build`), runs `python -m tessel`, `tessel --help` and `tessel fmt`.
# Exits 1 naming the failed step (and the tail of its output) on any failure.
#
# usage: scripts/test_wheel.sh [--isolated] [--keep]
#   --isolated  build in pip's own isolated build environment, exactly as a user's `pip wheel .`
#               (expect a cold build: its temporary paths, new each run, reach the compile commands)
#   --keep      keep the temp folder (printed at the start)
#
# By default the build requirements live in a reused build environment, TESSEL_WHEEL_BUILD_ENV
# (default: ${TMPDIR:-/tmp}/tessel-wheel-build-env), and the wheel is built with --no-build-isolation in
# a fresh build folder: with stable include paths, ccache (which CMakeLists.txt uses when
# installed) makes a rebuild cheap. Needs python3 (PYTHON) with venv and pip, and PyPI or a pip
# cache for the pinned packages.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
isolated=0
keep=0
for arg in "$@"; do
  case "$arg" in
    --isolated) isolated=1 ;;
    --keep) keep=1 ;;
    *) echo "usage: scripts/test_wheel.sh [--isolated] [--keep]" >&2; exit 2 ;;
  esac
done

TMP="$(mktemp -d "${TMPDIR:-/tmp}/tessel-wheel-test.XXXXXX")"
if [[ $keep -eq 0 ]]; then trap 'rm -rf "$TMP"' EXIT; fi
mkdir -p "$TMP/dist" "$TMP/work"
START=$SECONDS
log() { echo "[test_wheel $((SECONDS - START))s] $*"; }
log "temp folder $TMP"

# step NAME CMD...: runs CMD with its output in $TMP/NAME.log; on failure prints the tail and exits.
step() {
  local name="$1" out t0=$SECONDS rc=0
  out="$TMP/$(tr -c 'a-zA-Z0-9\n-' _ <<<"$name").log"
  shift
  "$@" >"$out" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "test_wheel: FAILED: $name (exit $rc); the last lines of its output ($out):" >&2
    tail -n 40 "$out" >&2
    exit 1
  fi
  log "ok: $name ($((SECONDS - t0))s)"
}

# ---- 1. the wheel ----
if [[ $isolated -eq 1 ]]; then
  step "build the wheel (isolated)" "$PY" -m pip wheel "$ROOT" --no-deps -w "$TMP/dist" \
    -C build-dir="$TMP/build"
else
  BENV="${TESSEL_WHEEL_BUILD_ENV:-${TMPDIR:-/tmp}/tessel-wheel-build-env}"
  reqs="$("$PY" -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]))' \
    "$ROOT/pyproject.toml")"
  # The development venv made by scripts/setup.sh holds the same pinned build requirements. Built
  # from it, the wheel's compile commands equal build/'s (same include paths, same build type
  # below, the folder left out of ccache's hash there too), so ccache gives back build/'s objects.
  if [[ -z "${TESSEL_WHEEL_BUILD_ENV:-}" && -f "$ROOT/.venv/.tessel-requirements" ]] &&
    "$ROOT/.venv/bin/python" -c 'import scikit_build_core' 2>/dev/null; then
    BENV="$ROOT/.venv"
  fi
  if [[ "$BENV" == "$ROOT/.venv" ]]; then
    :
  elif [[ ! -f "$BENV/.requirements" ]] || [[ "$(cat "$BENV/.requirements")" != "$reqs" ]]; then
    rm -rf "$BENV"
    log "build environment $BENV"
    step "create the build environment" "$PY" -m venv "$BENV"
    # shellcheck disable=SC2086
    step "install the pinned build requirements" "$BENV/bin/python" -m pip install $reqs
    printf '%s' "$reqs" >"$BENV/.requirements"
  fi
  # A fresh build folder each run; without the folder in ccache's hash, objects of earlier runs hit.
  # The same compilers as build/ too (pip's environment can make CMake pick g++ where build/
  # has c++, and ccache tells the two apart).
  compilers=()
  if [[ -f "$ROOT/build/CMakeCache.txt" ]]; then
    for lang in C CXX; do
      c="$(sed -n "s/^CMAKE_${lang}_COMPILER:[A-Z]*=//p" "$ROOT/build/CMakeCache.txt")"
      if [[ -n "$c" ]]; then compilers+=(-C "cmake.define.CMAKE_${lang}_COMPILER=$c"); fi
    done
  fi
  step "build the wheel" env CCACHE_NOHASHDIR=1 "$BENV/bin/python" -m pip wheel "$ROOT" \
    --no-deps --no-build-isolation -w "$TMP/dist" -C build-dir="$TMP/build" \
    -C cmake.build-type=RelWithDebInfo "${compilers[@]}"
fi
WHEEL="$(ls "$TMP"/dist/tessel-*.whl)"
log "built $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1))"
step "wheel contents" "$PY" - "$WHEEL" <<'EOF'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["tessel/__init__.py", "tessel/build.py", "tessel/__main__.py", "tessel/lib/libtessel.so",
        "tessel/lib/libtessel_runtime.so", "tessel/examples/vector_add.py"]
missing = [n for n in need if n not in names]
assert not missing, f"the wheel lacks {missing}"
assert any(n.endswith(".data/scripts/tessel") for n in names), "the wheel lacks the tessel CLI"
EOF

# ---- 2. a fresh venv, used from a folder outside the source tree ----
VENV="$TMP/venv"
step "create a fresh venv" "$PY" -m venv "$VENV"
step "install the wheel" "$VENV/bin/python" -m pip install "$WHEEL"
cd "$TMP/work"
unset PYTHONPATH TESSEL_LIBRARY_PATH TESSEL_CLI
export PATH="$VENV/bin:$PATH" TESSEL_CACHE_DIR="$TMP/kernel-cache"
cp "$ROOT/examples/vector_add.py" "$TMP/work/vector_add.py"

step "import tessel from the venv" python - "$VENV" "$ROOT" <<'EOF'
import sys
from pathlib import Path
import tessel, tessel._lib
venv, root = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
pkg, lib = Path(tessel.__file__).resolve().parent, Path(tessel._lib.LIB_PATH).resolve()
assert venv in pkg.parents, f"tessel imported from {pkg}, not from {venv}"
assert lib.parent == pkg / "lib", f"libtessel loaded from {lib}, not from {pkg / 'lib'}"
EOF

step "no source-tree paths in the RUNPATHs" bash -c '
  for f in "$1"/bin/tessel "$1"/lib/python*/site-packages/tessel/lib/*.so; do
    if readelf -d "$f" | grep -E "R(UN)?PATH" | grep -qF -e "$2" -e "$3"; then
      echo "$f: $(readelf -d "$f" | grep -E "R(UN)?PATH")"; exit 1
    fi
  done' _ "$VENV" "$ROOT" "$TMP/build"

step "build and run a kernel, check against NumPy" python - <<'EOF'
import numpy as np, tessel, tvm_ffi
mod = tessel.build(open("vector_add.py").read(), target="c")
for n in (1000, 7, 100003):
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    c = np.zeros_like(a)
    mod["vector_add"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
    np.testing.assert_array_equal(c, a + b)
EOF

step "tessel build, run the library under plain tvm_ffi" bash -c '
  tessel build vector_add.py -o vector_add.so && python - <<EOF
import os, numpy as np, tvm_ffi
a, b = np.random.rand(999).astype("float32"), np.random.rand(999).astype("float32")
c = np.zeros_like(a)
tvm_ffi.load_module(os.path.abspath("vector_add.so"))["vector_add"](*(tvm_ffi.from_dlpack(x) for x in (a, b, c)))
np.testing.assert_array_equal(c, a + b)
EOF'

step "python -m tessel" bash -c 'python -m tessel >main.out 2>&1; rc=$?; cat main.out
  [[ $rc -eq 0 ]] && grep -q "examples parsed, printed and round-tripped" main.out'

step "tessel --help" bash -c '[[ "$(command -v tessel)" == "$1/bin/tessel" ]] && tessel --help' \
  _ "$VENV"
step "tessel fmt" bash -c 'tessel fmt vector_add.py >fmt1.py && tessel fmt fmt1.py >fmt2.py &&
  [[ -s fmt1.py ]] && cmp fmt1.py fmt2.py && tessel fmt --check fmt1.py'

log "all passed (wheel $(basename "$WHEEL"))"
