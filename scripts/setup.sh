#!/usr/bin/env bash
# Development setup, idempotent and quick when nothing changed:
#   1. system packages (apt-get, only those missing),
#   2. .venv with the Python packages pinned in pyproject.toml (skipped when a stamp shows them),
#   3. CMake configure of build/ (only when not configured for this venv), then an incremental build,
#   4. .venv sees python/ (a .pth file) and .venv/bin/tessel is the CLI in build/bin.
# scripts/run.sh and scripts/test.sh run it first.
set -euo pipefail

TESSEL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$TESSEL_ROOT/.venv"
BUILD="$TESSEL_ROOT/build"

log() { echo "[setup] $*" >&2; }

# ---- 1. system packages ----
# python3-venv: Debian's python3 lacks ensurepip without it. The rest: compilers, build tools, tests.
need_pkgs=()
for pkg in g++ libgtest-dev ccache ninja-build libz3-dev; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    need_pkgs+=("$pkg")
  fi
done
if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
  need_pkgs+=(python3-venv)
fi
if ((${#need_pkgs[@]})); then
  log "installing system packages: ${need_pkgs[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
fi

# ---- 2. virtual environment and pinned Python packages ----
if [[ ! -x "$VENV/bin/python" ]]; then
  log "creating $VENV"
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"

# The pinned set: build requirements, runtime dependencies and the dev extras, all from pyproject.
reqs="$("$PY" - "$TESSEL_ROOT/pyproject.toml" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    meta = tomllib.load(f)
project = meta["project"]
reqs = list(meta["build-system"]["requires"]) + list(project.get("dependencies", []))
for extra in meta.get("tool", {}).get("tessel", {}).get("dev", {}).get("extras", []):
    reqs += project.get("optional-dependencies", {}).get(extra, [])
print("\n".join(sorted(set(reqs))))
EOF
)"
stamp="$VENV/.tessel-requirements"
if [[ ! -f "$stamp" ]] || [[ "$(cat "$stamp")" != "$reqs" ]]; then
  log "installing pinned Python packages into .venv"
  # shellcheck disable=SC2086
  "$PY" -m pip install --quiet --disable-pip-version-check $reqs
  printf '%s' "$reqs" >"$stamp"
fi

# ---- 3. configure (once per venv) and build (incremental) ----
cached_py=""
if [[ -f "$BUILD/CMakeCache.txt" ]]; then
  cached_py="$(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")"
fi
if [[ ! -f "$BUILD/build.ninja" ]] || [[ "$cached_py" != "$PY" ]]; then
  log "configuring $BUILD"
  # A cache made for another interpreter also caches that interpreter's tvm-ffi paths: start over.
  if [[ -n "$cached_py" && "$cached_py" != "$PY" ]]; then rm -f "$BUILD/CMakeCache.txt"; fi
  "$VENV/bin/cmake" -S "$TESSEL_ROOT" -B "$BUILD" -G Ninja \
    -DCMAKE_MAKE_PROGRAM="$VENV/bin/ninja" -DPython_EXECUTABLE="$PY" >/dev/null
fi
log "building $BUILD"
# The build folder stays out of ccache's hash, so scripts/test_wheel.sh's build of the same sources
# in another folder gets these objects back instead of compiling the library again.
export CCACHE_NOHASHDIR=1
"$VENV/bin/ninja" -C "$BUILD" >&2

# ---- 4. the package and CLI, used in place ----
site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
pth="$site/tessel-dev.pth"
if [[ ! -f "$pth" ]] || [[ "$(cat "$pth")" != "$TESSEL_ROOT/python" ]]; then
  printf '%s' "$TESSEL_ROOT/python" >"$pth"
fi
ln -sfn "$BUILD/bin/tessel" "$VENV/bin/tessel"
