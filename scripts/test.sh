#!/usr/bin/env bash
# The README's test command: installs what is missing (Debian packages), then
# Every build is a unity build (CMAKE_UNITY_BUILD in CMakePresets.json: the libraries' sources compiled a
# batch at a time; unit-test programs file by file); clang-tidy checks every source file on its own.
#  0. builds ddl and starts, in the background, the node image and clang-tidy (.clang-tidy) over src/ at the
#     lowest priority (both waited for later);
#  1. builds with warnings as errors and AddressSanitizer+UndefinedBehaviorSanitizer, runs the unit tests
#     (every test labelled `unit`: C++ units, golden files, playbook and Terraform module checks);
#  2. checks clang-format on the sources; runs each libFuzzer target for 30 s (tests/fuzz/run.sh), two at a
#     time;
#  3. builds with warnings as errors (optimized, no unit-test programs: they ran under the sanitizers) and
#     runs the e2e suites on the local target (root needed), two at a time where they share nothing
#     (tests/e2e/CMakeLists.txt holds the resource locks and why two).
# Ends with a table of the stages and of every e2e suite with their durations (also in
# build-ci/stages.txt), then CTest's summary.
#   DDL_E2E_JOBS=N   e2e suites at once (default 2; 1 runs them one after another)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
e2e_jobs=${DDL_E2E_JOBS:-2}
t_all=$(date +%s)
stage_names=()
stage_secs=()

# stage NAME CMD...: runs CMD, records its wall time; the table is printed whatever happens.
stage() {
  local name=$1 t0 rc=0
  shift
  echo "== $name"
  t0=$(date +%s)
  "$@" || rc=$?
  stage_names+=("$name")
  stage_secs+=($(($(date +%s) - t0)))
  return $rc
}

print_table() {
  local rc=$? i out=""
  # A run that stops early leaves no background clang-tidy behind.
  [ -n "${tidy_pid:-}" ] && kill -- -"$tidy_pid" 2>/dev/null || true
  [ -n "${image_pid:-}" ] && kill -- -"$image_pid" 2>/dev/null || true
  out+=$'\n'"== stages (wall time, seconds)"$'\n'
  for i in "${!stage_names[@]}"; do
    out+=$(printf '%6d  %s' "${stage_secs[$i]}" "${stage_names[$i]}")$'\n'
  done
  out+=$(printf '%6d  %s' $(($(date +%s) - t_all)) "total")$'\n'
  if [ -s build-ci/e2e-junit.xml ]; then
    out+=$'\n'"== e2e suites (wall time, seconds; $e2e_jobs at once)"$'\n'
    out+=$(python3 scripts/junit_times.py build-ci/e2e-junit.xml)$'\n'
  fi
  mkdir -p build-ci && printf '%s' "$out" >build-ci/stages.txt
  printf '%s' "$out"
  exit $rc
}
trap print_table EXIT

stage "dependencies (scripts/install-deps.sh)" ./scripts/install-deps.sh

# The container suites need the node image (a debootstrap of Debian 12, minutes on a new machine, mostly
# waiting on the mirror). The e2e binary is built first and makes the image in the background, beside the
# unit stages, instead of inside the first container suite; e2e waits for it (and a failed build there is
# retried by that suite's own deploy).
ci_configure() { cmake --preset ci >/dev/null; }
ddl_binary() { ci_configure && cmake --build build-ci -j "$jobs" --target ddl; }
stage "ddl binary for the node image (-Werror build)" ddl_binary
mkdir -p build-ci
# background NICE CMD...: CMD in its own session (killed as a group at the end) at NICE. A new session is a
# new scheduler autogroup (sched(7), "The autogroup feature"), and nice only ranks processes within one
# group: the group's own nice value (/proc/self/autogroup) is what keeps CMD behind the stages.
background() {
  local n=$1
  shift
  exec setsid bash -c 'echo "$0" >/proc/self/autogroup 2>/dev/null || true; exec nice -n "$0" "$@"' "$n" "$@"
}
background 5 scripts/node-image.sh "$PWD/build-ci/src/ddl" "$PWD/build-ci/node-image" >build-ci/node-image.log 2>&1 &
image_pid=$!

# clang-tidy parses every source again (~10 s each here): it runs in the background at the lowest
# priority from the first build on, on the cycles the builds, fuzzers and e2e suites leave idle, and is
# waited for at the end. One process per core: at nice 19 they take almost nothing from the stages beside
# them, and what is left after the e2e suites runs on every core.
tidy_log=build-ci/clang-tidy.log
background 19 env JOBS="$jobs" scripts/clang-tidy.sh build-tidy >"$tidy_log" 2>&1 &
tidy_pid=$!

asan_build() {
  cmake --preset asan >/dev/null
  cmake --build build-asan -j "$jobs"
}
asan_units() {
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -L unit --output-on-failure -j "$jobs"
}
stage "ASan+UBSan build (-Werror)" asan_build
stage "unit tests under ASan+UBSan" asan_units

clang_format() { git ls-files '*.cpp' '*.hpp' '*.h' | xargs clang-format --dry-run -Werror; }
stage "clang-format" clang_format

stage "fuzzers, 30 s each (a longer run: tests/fuzz/run.sh 1800)" env FUZZ_JOBS="$jobs" tests/fuzz/run.sh 30

ci_build() {
  ci_configure
  cmake --build build-ci -j "$jobs"
}
stage "-Werror build for the e2e suites" ci_build

image_wait() {
  local rc=0
  wait "$image_pid" || rc=$?
  image_pid=
  [ $rc -eq 0 ] || { cat build-ci/node-image.log; echo "node image: failed ($rc); the first container suite builds it"; }
  return 0
}
stage "node image (built in the background since the first build)" image_wait

e2e() {
  rm -f build-ci/e2e-junit.xml
  ctest --test-dir build-ci -L e2e --output-on-failure -j "$e2e_jobs" --output-junit "$PWD/build-ci/e2e-junit.xml"
}
stage "e2e suites on the local target" e2e

tidy_wait() {
  local rc=0
  wait "$tidy_pid" || rc=$?
  cat "$tidy_log"
  return $rc
}
stage "clang-tidy over src/ (.clang-tidy; waiting for the background run)" tidy_wait
