#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs the C++ tests (ctest over GoogleTest), the C++ tests of a
# build without Z3 (build-noz3), and the Python tests (pytest). All always run; the exit status is
# non-zero when any fails.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" || exit $?

echo "==== ctest ===="
"$ROOT/.venv/bin/ctest" --test-dir "$ROOT/build" --output-on-failure -j2
ctest_rc=$?

# The same C++ tests without Z3 (TESSEL_USE_Z3=OFF): the prover must answer unknown and everything
# else must pass. Tests only; ccache makes the second configuration cheap.
NOZ3="$ROOT/build-noz3"
echo "==== ctest (TESSEL_USE_Z3=OFF) ===="
noz3_rc=0
if [[ ! -f "$NOZ3/build.ninja" ]]; then
  "$ROOT/.venv/bin/cmake" -S "$ROOT" -B "$NOZ3" -G Ninja -DCMAKE_MAKE_PROGRAM="$ROOT/.venv/bin/ninja" \
    -DPython_EXECUTABLE="$ROOT/.venv/bin/python" -DTESSEL_USE_Z3=OFF -DTESSEL_BUILD_BENCH=OFF \
    -DTESSEL_BUILD_FUZZERS=OFF >/dev/null || noz3_rc=$?
fi
if [[ $noz3_rc -eq 0 ]]; then
  "$ROOT/.venv/bin/ninja" -C "$NOZ3" tessel_tests >&2 || noz3_rc=$?
fi
if [[ $noz3_rc -eq 0 ]]; then
  "$ROOT/.venv/bin/ctest" --test-dir "$NOZ3" --output-on-failure -j2 >"$NOZ3/ctest.log" 2>&1
  noz3_rc=$?
  # Only the summary when green; everything when something failed.
  if [[ $noz3_rc -eq 0 ]]; then tail -n 3 "$NOZ3/ctest.log"; else cat "$NOZ3/ctest.log"; fi
fi

echo "==== pytest ===="
"$ROOT/.venv/bin/python" -m pytest "$ROOT/tests/python" -q
pytest_rc=$?

echo "==== summary: ctest exit $ctest_rc, ctest without Z3 exit $noz3_rc, pytest exit $pytest_rc ===="
if [[ $ctest_rc -ne 0 || $noz3_rc -ne 0 || $pytest_rc -ne 0 ]]; then exit 1; fi
