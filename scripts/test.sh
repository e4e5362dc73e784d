#!/usr/bin/env bash
# The README's test command: installs what is missing (Debian packages), then
#  1. builds with warnings as errors and AddressSanitizer+UndefinedBehaviorSanitizer, runs the unit tests;
#  2. checks clang-format on the sources; runs each libFuzzer target for 30 s (tests/fuzz/run.sh);
#  3. builds with warnings as errors and runs every test (unit + e2e on the local target; e2e needs root).
# CTest's summary is the last thing it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc)

echo "== ASan+UBSan build, unit tests"
cmake --preset asan >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L unit --output-on-failure -j "$jobs"

echo "== clang-format"
git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format --dry-run -Werror

echo "== fuzzers, 30 s each (a longer run: tests/fuzz/run.sh 1800)"
tests/fuzz/run.sh 30

echo "== warnings-as-errors build, all tests"
cmake --preset ci >/dev/null
cmake --build build-ci -j "$jobs"
ctest --test-dir build-ci --output-on-failure
