#!/usr/bin/env bash
# Builds libtessel and the C++ tests with sanitizers and runs the tests under them:
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/
#   tsan  ThreadSanitizer, in build-tsan/
# For each: the GoogleTest binary, then pytest over the Python tests with the sanitizer runtime
# preloaded into the (uninstrumented) Python interpreter and TESSEL_LIBRARY_PATH pointing at the
# sanitized libtessel. docs/sanitizers.md says what was found, what is suppressed and why, and
# how long each step takes.
#
# Usage: scripts/sanitize.sh [--asan|--tsan] [--build-only] [--no-cpp] [--no-python]
#                            [-k EXPR] [--gtest-filter PATTERN] [PYTEST_PATHS...]
#   --asan / --tsan     only that build (default: both, asan first)
#   -k EXPR             pytest -k filter
#   --gtest-filter P    GoogleTest filter for the C++ tests (default: all)
#   PYTEST_PATHS        test files or folders (default: $PYTEST_DEFAULT below)
# Environment: JOBS (default 2); SANITIZE_CFLAGS (default "-O0 -g1": on 2 cores -O1 took about
# twice as long to compile; -O1 runs the tests faster).
# The exit status is non-zero when a build fails, a test fails, or a sanitizer reports.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

JOBS="${JOBS:-2}"
SANITIZE_CFLAGS="${SANITIZE_CFLAGS:--O0 -g1} -DNDEBUG"
# The Python tests that run in a few minutes under the sanitizers on 2 cores; the whole suite
# (tests/python) works too, given the time.
PYTEST_DEFAULT=(tests/python/test_concurrency.py tests/python/test_build.py
                tests/python/test_arith.py tests/python/test_text.py tests/python/test_nodes.py
                tests/python/test_host_checks.py tests/python/test_jit.py)

kinds=()
build_only=0 run_cpp=1 run_python=1 kexpr="" gtest_filter="" paths=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --asan) kinds+=(asan) ;;
    --tsan) kinds+=(tsan) ;;
    --build-only) build_only=1 ;;
    --no-cpp) run_cpp=0 ;;
    --no-python) run_python=0 ;;
    -k) kexpr="$2"; shift ;;
    --gtest-filter) gtest_filter="$2"; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "sanitize.sh: unknown option $1" >&2; exit 2 ;;
    *) paths+=("$1") ;;
  esac
  shift
done
[[ ${#kinds[@]} -eq 0 ]] && kinds=(asan tsan)
[[ ${#paths[@]} -eq 0 ]] && paths=("${PYTEST_DEFAULT[@]}")

# scripts/setup.sh is not run here: it builds build/, which other work may be building too.
PY="$ROOT/.venv/bin/python"
[[ -x "$PY" ]] || { echo "sanitize.sh: no .venv; run scripts/setup.sh first" >&2; exit 1; }
CXX="${CXX:-c++}"

# The runtime a sanitized libtessel needs loaded first when the executable (python) is not
# instrumented: the compiler knows where its copy is.
runtime_of() {
  local lib
  lib="$("$CXX" -print-file-name="$1")"
  [[ "$lib" == /* && -e "$lib" ]] || { echo "sanitize.sh: no $1 for $CXX" >&2; return 1; }
  echo "$lib"
}

# A sanitizer's frames are several times larger than an optimized build's, and the recursion
# limits (docs/reliability.md, "Deep IR") are sized for an 8 MiB stack at -O2: 64 MiB keeps the
# deep-IR tests testing the limits rather than the stack.
ulimit -s 65536 2>/dev/null || echo "sanitize.sh: cannot raise the stack limit; deep-IR tests may overflow" >&2

status=0
note() { echo "==== $* ===="; }
elapsed() { echo "$(( $(date +%s) - $1 )) s"; }

for kind in "${kinds[@]}"; do
  case "$kind" in
    asan)
      dir="$ROOT/build-asan" sanitizers="address,undefined"
      # libstdc++ right after: Python does not link it, and ASan's __cxa_throw interceptor, bound
      # at start-up, then has no real __cxa_throw to call (the first C++ exception killed pytest
      # with exit status 1 and no message).
      preload="$(runtime_of libasan.so):$(runtime_of libstdc++.so)" || exit 1
      # detect_leaks=0: CPython and tvm-ffi keep objects alive until exit on purpose (interned
      # strings, the global function table), which LeakSanitizer reports as thousands of leaks.
      # The C++ tests run with leak detection on.
      # allocator_may_return_null=1: tests ask for 2^62 bytes on purpose to check the
      # out-of-memory error of generated code; ASan aborts on such a request unless told to
      # answer it as malloc does (NULL).
      export ASAN_OPTIONS="halt_on_error=1:detect_odr_violation=0:allocator_may_return_null=1:${ASAN_OPTIONS_EXTRA:-}"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$ROOT/scripts/ubsan.supp"
      export LSAN_OPTIONS="suppressions=$ROOT/scripts/lsan.supp"
      py_env=(ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0")
      ;;
    tsan)
      dir="$ROOT/build-tsan" sanitizers="thread"
      preload="$(runtime_of libtsan.so)" || exit 1
      export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/scripts/tsan.supp:${TSAN_OPTIONS_EXTRA:-}"
      py_env=()
      ;;
    *) echo "sanitize.sh: unknown kind $kind" >&2; exit 2 ;;
  esac

  note "$kind: build ($sanitizers, $SANITIZE_CFLAGS) in ${dir#$ROOT/}"
  t0=$(date +%s)
  if [[ ! -f "$dir/build.ninja" ]]; then
    mkdir -p "$dir"
    "$ROOT/.venv/bin/cmake" -S "$ROOT" -B "$dir" -G Ninja \
      -DCMAKE_MAKE_PROGRAM="$ROOT/.venv/bin/ninja" -DPython_EXECUTABLE="$PY" \
      -DTESSEL_SANITIZE="$sanitizers" -DTESSEL_BUILD_BENCH=OFF -DTESSEL_BUILD_FUZZERS=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$SANITIZE_CFLAGS" \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="$SANITIZE_CFLAGS" >"$dir/configure.log" 2>&1 \
      || { cat "$dir/configure.log"; status=1; continue; }
  fi
  if ! nice -n 10 "$ROOT/.venv/bin/ninja" -C "$dir" -j"$JOBS" tessel tessel_tests; then
    echo "sanitize.sh: the $kind build failed" >&2
    status=1
    continue
  fi
  echo "build: $(elapsed "$t0")"
  [[ $build_only -eq 1 ]] && continue

  if [[ $run_cpp -eq 1 ]]; then
    note "$kind: C++ tests (tessel_tests${gtest_filter:+ --gtest_filter=$gtest_filter})"
    t0=$(date +%s)
    # The Metal emulator switches stacks by hand (tests/metal_emu/README.md), which neither
    # sanitizer can follow, and Parser.LinearTimeOnALargeModule asserts a wall time set for an
    # optimized build: both run in the normal build only.
    filter="${gtest_filter:-*}"
    [[ "$filter" == *-* ]] || filter+="-MetalEmu*:Parser.LinearTimeOnALargeModule"
    (cd "$dir" && "$dir/bin/tessel_tests" --gtest_filter="$filter" --gtest_brief=1) \
      >"$dir/gtest.log" 2>&1
    rc=$?
    tail -n 5 "$dir/gtest.log"
    if [[ $rc -ne 0 ]]; then
      grep -n -m 20 -E "^(==|SUMMARY|WARNING: ThreadSanitizer|.*runtime error)|\[  FAILED  \]" \
        "$dir/gtest.log"
      echo "sanitize.sh: $kind C++ tests failed (exit $rc); the log: ${dir#$ROOT/}/gtest.log"
      status=1
    fi
    echo "C++ tests: $(elapsed "$t0")"
  fi

  if [[ $run_python -eq 1 ]]; then
    note "$kind: pytest ${paths[*]}${kexpr:+ -k $kexpr}"
    t0=$(date +%s)
    # The sanitized libraries are copied out of the tree as the normal tests do, so a rebuild
    # under way does not change them under a running test.
    libdir="$dir/pylib"
    mkdir -p "$libdir" && cp "$dir"/lib/*.so* "$libdir"/
    env "${py_env[@]}" LD_PRELOAD="$preload" TESSEL_LIBRARY_PATH="$libdir/libtessel.so" \
      PYTHONPATH="$ROOT/python" TESSEL_SANITIZER="$kind" \
      "$PY" -m pytest "${paths[@]}" -q -p no:cacheprovider ${kexpr:+-k "$kexpr"} \
      >"$dir/pytest.log" 2>&1
    rc=$?
    tail -n 3 "$dir/pytest.log"
    if [[ $rc -ne 0 ]] || grep -q -E "^SUMMARY: |WARNING: ThreadSanitizer|runtime error:" \
      "$dir/pytest.log"; then
      grep -n -m 20 -E "^SUMMARY: |WARNING: ThreadSanitizer|runtime error:|^FAILED" \
        "$dir/pytest.log"
      echo "sanitize.sh: $kind Python tests failed (exit $rc); the log: ${dir#$ROOT/}/pytest.log"
      status=1
    fi
    echo "pytest: $(elapsed "$t0")"
  fi
done
exit $status
