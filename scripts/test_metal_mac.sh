#!/usr/bin/env bash
# Builds tessel with the Metal runtime on a Mac and runs the Metal tests on its GPU
# (docs/metal.md, "Testing on a Mac"):
#   1. a virtual environment (.venv-mac) with the pinned packages of pyproject.toml, plus PyTorch
#      and MLX for the framework tests (--no-frameworks leaves them out: those tests then skip);
#   2. CMake configure of build-mac/ (libraries only: no GoogleTest or benchmarks needed) and a
#      build; it stops unless CMake reports "Metal runtime ON";
#   3. a preflight that the runtime is installed and sees a GPU, then pytest over the Metal tests
#      with skip reasons shown (-rs).
# Needs Xcode or its command line tools (clang with the macOS SDK), Python >= 3.9 (PYTHON picks the
# interpreter, default python3) and network access for pip.
# Usage: scripts/test_metal_mac.sh [--no-frameworks] [pytest args...]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv-mac"
BUILD="$ROOT/build-mac"
log() { echo "[test_metal_mac] $*" >&2; }

if [[ "$(uname -s)" != "Darwin" ]]; then
  log "this script runs on macOS (Metal); this is $(uname -s). On Linux, scripts/test.sh runs the"
  log "Metal code generation and emulator tests."
  exit 2
fi
frameworks=1
if [[ "${1:-}" == "--no-frameworks" ]]; then
  frameworks=0
  shift
fi
if ! xcrun --sdk macosx --show-sdk-path >/dev/null 2>&1; then
  log "no macOS SDK: install Xcode or run 'xcode-select --install'"
  exit 2
fi

# ---- 1. environment ----
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating $VENV"
  "${PYTHON:-python3}" -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -c "import tomllib" 2>/dev/null || "$PY" -m pip install --quiet tomli
reqs="$("$PY" - "$ROOT/pyproject.toml" <<'EOF'
import sys
try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib
with open(sys.argv[1], "rb") as f:
    meta = tomllib.load(f)
project = meta["project"]
reqs = list(meta["build-system"]["requires"]) + list(project.get("dependencies", []))
reqs += project.get("optional-dependencies", {}).get("test", [])
print("\n".join(sorted(set(reqs))))
EOF
)"
# shellcheck disable=SC2086
"$PY" -m pip install --quiet --disable-pip-version-check $reqs
if [[ $frameworks -eq 1 ]]; then
  log "installing PyTorch and MLX (the framework tests; --no-frameworks skips them)"
  "$PY" -m pip install --quiet --disable-pip-version-check torch mlx
fi

# ---- 2. configure and build with the Metal runtime ----
log "configuring $BUILD"
configure_log="$BUILD/configure.log"
mkdir -p "$BUILD"
"$VENV/bin/cmake" -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_MAKE_PROGRAM="$VENV/bin/ninja" \
  -DPython_EXECUTABLE="$PY" -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_BENCH=OFF \
  -DTESSEL_BUILD_FUZZERS=OFF | tee "$configure_log" >&2
if ! grep -q "tessel: Metal runtime ON" "$configure_log"; then
  log "CMake did not enable the Metal runtime (see $configure_log and cmake/TesselMetal.cmake)"
  exit 1
fi
log "building $BUILD"
"$VENV/bin/ninja" -C "$BUILD" tessel tessel_runtime >&2

# ---- 3. preflight and tests ----
LIB="$BUILD/lib/libtessel.dylib"
[[ -f "$LIB" ]] || LIB="$BUILD/lib/libtessel.so"
export TESSEL_LIBRARY_PATH="$LIB"
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
"$PY" - <<'EOF'
import sys
import tessel.metal as metal
if not metal.runtime_available():
    sys.exit("[test_metal_mac] libtessel_runtime was built but has no Metal runtime installed")
source, name = metal.current_context(0)
print(f"[test_metal_mac] Metal runtime installed; metal:0 launches use {name!r} ({source})",
      file=sys.stderr)
if source != "default":
    sys.exit("[test_metal_mac] no Metal device found (MTLCopyAllDevices is empty)")
EOF
cd "$ROOT"
"$PY" -m pytest -rs tests/python/test_metal_gpu.py tests/python/test_metal_python.py \
  tests/python/test_metal_codegen.py "$@"
