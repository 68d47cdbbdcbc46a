#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs the C++ tests (ctest over GoogleTest) and the Python tests
# (pytest). Both always run; the exit status is non-zero when either fails.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh" || exit $?

echo "==== ctest ===="
"$ROOT/.venv/bin/ctest" --test-dir "$ROOT/build" --output-on-failure -j2
ctest_rc=$?

echo "==== pytest ===="
"$ROOT/.venv/bin/python" -m pytest "$ROOT/tests/python" -q
pytest_rc=$?

echo "==== summary: ctest exit $ctest_rc, pytest exit $pytest_rc ===="
if [[ $ctest_rc -ne 0 || $pytest_rc -ne 0 ]]; then exit 1; fi
