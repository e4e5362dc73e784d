#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang, ASan+UBSan, LeakSanitizer) and runs each for
# SECONDS (default 60) on a scratch copy of its seed corpus in tests/fuzz/corpus/<name>/. The seed is
# FUZZ_SEED (default 1, so a CI run is repeatable; 0 asks libFuzzer for a random one, for long runs).
# Exit 0 only when no target crashed, leaked or tripped a sanitizer; a crashing input is kept in
# build-fuzz/findings/<name>/ with the fuzzer's report. Prints executions per target.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
cmake --preset fuzz >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in tests/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
fi
cmake --build build-fuzz -j "$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")
# FUZZ_JOBS targets run at once (default 1), each single-threaded as libFuzzer runs by default.
fuzz_one() {
  local t=$1 work=build-fuzz/corpus/$1 findings=build-fuzz/findings/$1
  rm -rf "$work" "$findings" && mkdir -p "$work" "$findings"
  cp tests/fuzz/corpus/"$t"/* "$work"/
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build-fuzz/tests/fuzz/fuzz_"$t" -max_total_time="$seconds" -seed="${FUZZ_SEED:-1}" -timeout=30 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" "$work" >"$findings/fuzz.log" 2>&1
}
report() { # TARGET EXIT-STATUS
  local t=$1 log=build-fuzz/findings/$1/fuzz.log
  if [ "$2" = 0 ]; then
    runs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz $t: ${seconds} s, ${runs:-?} inputs, 0 crashes, 0 leaks, 0 sanitizer reports"
  else
    echo "fuzz $t: FAILED - see $log and the inputs in build-fuzz/findings/$t/" >&2
    grep -m5 -E 'ERROR|SUMMARY|runtime error|deadly signal' "$log" >&2 || true
    status=1
  fi
}
status=0
per=${FUZZ_JOBS:-1}
for ((i = 0; i < ${#targets[@]}; i += per)); do
  batch=("${targets[@]:i:per}")
  pids=()
  for t in "${batch[@]}"; do fuzz_one "$t" & pids+=($!); done
  for j in "${!batch[@]}"; do
    rc=0; wait "${pids[$j]}" || rc=$?
    report "${batch[$j]}" "$rc"
  done
done
exit $status
