#!/usr/bin/env bash
# Deploy, no-change re-configure and destroy of local clusters with 1, 4, 8 and 16 nodes (root needed):
# wall times and the controller's CPU (ddl and the programs it runs: ansible-playbook, ssh) per phase,
# as ddl prints them ("configure: ok (W s, C CPU-s here)"). Compared with the targets ddl sets itself:
# deploy of 16 nodes in at most 3x the time of 1 node; no-change configure CPU per node at most a quarter
# of the figure before the change (pass it as BASE_NOCHANGE_CPU_PER_NODE=seconds to print the ratio).
# Two no-change configures per size: `deploy --only configure` (ddl finds no input changed and does not
# run Ansible) and `deploy --only configure --force-configure` (Ansible runs and changes nothing).
# Each size runs ROUNDS times (default 3; deploy, the two re-configures, destroy) and every column is the
# median of its rounds, since one deploy of a small cluster varies by a quarter here from run to run; the
# rounds' deploy times are printed too.
# Usage: sudo [ROUNDS=3] bench/deploy_scaling.sh [build-dir] [node counts...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}; shift || true
counts=("$@"); [ ${#counts[@]} -gt 0 ] || counts=(1 4 8 16)
ddl="$PWD/$build/src/ddl"
work=$(mktemp -d /tmp/ddl-bench.XXXXXX); trap 'rm -rf "$work"' EXIT
# "configure: ok (12.3 s, 20.4 CPU-s here)" -> "12.3 20.4"
phase() { grep -o "$1: ok ([0-9.]* s, [0-9.]* CPU-s here)" "$2" | tail -1 | grep -o '[0-9.]\+' | tr '\n' ' '; }
printf '%5s %9s %8s %9s %9s %9s %10s %9s %10s %9s %9s\n' nodes deploy_s conf_s conf_cpu cpu/node \
  same_s same_cpu forced_s forced_cpu cpu/node destroy_s
rounds=${ROUNDS:-3}
# median of the arguments
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
declare -A total nochange
for n in "${counts[@]}"; do
  name="bench-$n"
  printf 'apiVersion: ddl/v1\nname: %s\ntarget: local\nlocal:\n  nodes: %s\n' "$name" "$n" >"$work/$name.yaml"
  D=() C=() CC=() R=() RC=() F=() FC=() X=()
  for ((r = 1; r <= rounds; r++)); do
    t0=$(date +%s.%N)
    "$ddl" --state-dir "$work/state" deploy "$work/$name.yaml" >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; exit 1; }
    t1=$(date +%s.%N)
    read -r conf conf_cpu <<<"$(phase configure "$work/$name.log")"
    "$ddl" --state-dir "$work/state" deploy --only configure "$work/$name.yaml" >"$work/$name.re.log" 2>&1 ||
      { cat "$work/$name.re.log"; exit 1; }
    read -r reconf reconf_cpu <<<"$(phase configure "$work/$name.re.log")"
    "$ddl" --state-dir "$work/state" deploy --only configure --force-configure "$work/$name.yaml" \
      >"$work/$name.force.log" 2>&1 || { cat "$work/$name.force.log"; exit 1; }
    read -r forced forced_cpu <<<"$(phase configure "$work/$name.force.log")"
    t2=$(date +%s.%N)
    "$ddl" --state-dir "$work/state" destroy -y "$name" >/dev/null 2>&1
    t3=$(date +%s.%N)
    D+=("$(echo "$t1 - $t0" | bc)") C+=("$conf") CC+=("$conf_cpu") R+=("$reconf") RC+=("$reconf_cpu")
    F+=("$forced") FC+=("$forced_cpu") X+=("$(echo "$t3 - $t2" | bc)")
  done
  d=$(median "${D[@]}"); conf_cpu=$(median "${CC[@]}"); forced_cpu=$(median "${FC[@]}")
  total[$n]=$d
  nochange[$n]=$(echo "scale=3; $forced_cpu / $n" | bc)
  printf '%5s %9.2f %8.2f %9.2f %9.2f %9.2f %10.2f %9.2f %10.2f %9.3f %9.2f   (deploys: %s)\n' "$n" "$d" \
    "$(median "${C[@]}")" "$conf_cpu" "$(echo "scale=3; $conf_cpu / $n" | bc)" "$(median "${R[@]}")" \
    "$(median "${RC[@]}")" "$(median "${F[@]}")" "$forced_cpu" "${nochange[$n]}" "$(median "${X[@]}")" \
    "$(printf '%.2f ' "${D[@]}")"
done
if [ -n "${total[1]:-}" ] && [ -n "${total[16]:-}" ]; then
  echo "deploy: 16 nodes / 1 node = $(echo "scale=2; ${total[16]} / ${total[1]}" | bc)x (target: <= 3x; medians of $rounds round(s))"
fi
if [ -n "${BASE_NOCHANGE_CPU_PER_NODE:-}" ] && [ -n "${nochange[16]:-}" ]; then
  echo "no-change configure (Ansible run) CPU per node at 16 nodes: ${nochange[16]} s against ${BASE_NOCHANGE_CPU_PER_NODE} s" \
    "before = $(echo "scale=4; ${nochange[16]} / $BASE_NOCHANGE_CPU_PER_NODE" | bc) (target: <= 0.25)"
fi
