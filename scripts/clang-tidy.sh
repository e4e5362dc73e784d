#!/usr/bin/env bash
# clang-tidy with the repository's .clang-tidy over every C++ source under src/, using the compile commands
# of a configured build folder. The default, build-tidy, is the asan preset configured (not built) without
# the unity build, so every file has its own compile command; it is configured here when missing. Any
# finding fails (WarningsAsErrors). JOBS=N runs N clang-tidy processes at once (default: the machine's cores).
# --value-params adds performance-unnecessary-value-param, left out of .clang-tidy for its cost (run it on
# the files you change).
#   scripts/clang-tidy.sh [BUILD_DIR] [--value-params] [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-tidy}
shift || true
extra=()
if [ "${1:-}" = --value-params ]; then extra=(--checks=performance-unnecessary-value-param); shift; fi
if [ "$build" = build-tidy ] && [ ! -f build-tidy/compile_commands.json ]; then
  cmake --preset asan -B build-tidy -DCMAKE_UNITY_BUILD=OFF >/dev/null
fi
[ -f "$build/compile_commands.json" ] || { echo "clang-tidy.sh: $build/compile_commands.json is missing; configure that build first" >&2; exit 2; }
jobs=${JOBS:-$(nproc)}
if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(git ls-files 'src/*.cpp'); fi
log=$(mktemp)
db=$(mktemp -d)
trap 'rm -rf "$log" "$db"' EXIT
# The compile commands without GCC's precompiled header (clang cannot read a .gch; every file includes
# what it needs itself).
sed -E 's# -include [^ ]*cmake_pch\.hxx##g; s# -Winvalid-pch##g' "$build/compile_commands.json" >"$db/compile_commands.json"
# GCC-only warning flags in the compile commands are not clang's business.
rc=0
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -n 3 clang-tidy -p "$db" --quiet "${extra[@]}" \
  --extra-arg=-Wno-unknown-warning-option >"$log" 2>&1 || rc=$?
grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^Error while processing' "$log" || true
if [ $rc -ne 0 ]; then
  echo "clang-tidy: findings above (checks in .clang-tidy)" >&2
  exit 1
fi
echo "clang-tidy: ${#files[@]} files clean"
