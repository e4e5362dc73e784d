#!/usr/bin/env bash
# Deploy + destroy wall times of local clusters with 1, 4, 8 and 16 nodes (root needed).
# Prints a table and the target it compares with: 16 nodes in at most 1.5x the time of 1 node.
# Usage: sudo bench/deploy_scaling.sh [build-dir] [node counts...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; shift || true
counts=("$@"); [ ${#counts[@]} -gt 0 ] || counts=(1 4 8 16)
ddl="$PWD/$build/src/ddl"
work=$(mktemp -d /tmp/ddl-bench.XXXXXX); trap 'rm -rf "$work"' EXIT
printf '%6s %10s %12s %12s %10s\n' nodes deploy_s configure_s destroy_s total_s
declare -A total
for n in "${counts[@]}"; do
  name="bench-$n"
  printf 'apiVersion: ddl/v1\nname: %s\ntarget: local\nlocal:\n  nodes: %s\n' "$name" "$n" >"$work/$name.yaml"
  t0=$(date +%s.%N)
  "$ddl" --state-dir "$work/state" deploy "$work/$name.yaml" >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
  t1=$(date +%s.%N)
  conf=$(grep -o 'configure: ok ([0-9.]* s)' "$work/$name.log" | grep -o '[0-9.]*')
  "$ddl" --state-dir "$work/state" destroy "$name" >/dev/null 2>&1
  t2=$(date +%s.%N)
  d=$(echo "$t1 - $t0" | bc); x=$(echo "$t2 - $t1" | bc); t=$(echo "$t2 - $t0" | bc)
  total[$n]=$t
  printf '%6s %10.2f %12.2f %12.2f %10.2f\n' "$n" "$d" "$conf" "$x" "$t"
done
if [ -n "${total[1]:-}" ] && [ -n "${total[16]:-}" ]; then
  ratio=$(echo "scale=2; ${total[16]} / ${total[1]}" | bc)
  echo "16 nodes / 1 node = ${ratio}x (target: <= 1.5x)"
fi
