#!/bin/sh
# Before/after on 4 local nodes (bench/nodes.sh) with links shaped to RATE: runs each given libddlcomm
# program in turn, ROUNDS times, alternating, with the same arguments, and prints rank 0's output with
# the load average at the time. Alternating spreads drifts (other jobs on the machine) over all of them.
# Needs root.
#
# Usage: bench/ab.sh ROUNDS PROGRAM... -- ARGS...
#   e.g. bench/ab.sh 4 /tmp/old/ddl-train-bench build/dist/bin/ddl-train-bench -- --fused-vs-single --json
# Environment: RATE (default 1gbit), BB_PREFIX/BB_NET (see bench/nodes.sh; default bb/239).
set -eu
[ "$(id -u)" = 0 ] || { echo "ab.sh: needs root (network namespaces, tc)" >&2; exit 2; }
[ $# -ge 3 ] || { echo "usage: ab.sh ROUNDS PROGRAM... -- ARGS..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/nodes.sh"
n=4
rounds=$1
shift
progs=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    [ -x "$1" ] || { echo "ab.sh: $1 is not executable" >&2; exit 2; }
    progs="$progs $(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    shift
done
[ $# -gt 0 ] && shift
work=$(mktemp -d /tmp/bb_ab.XXXXXX)
trap 'bb_nodes_down $n; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
bb_nodes_up $n "${RATE:-1gbit}"
port=29800
for r in $(seq 1 "$rounds"); do
    for prog in $progs; do # not "p": bb_ddl_ranks uses that name
        port=$((port + 1))
        bb_ddl_ranks $n $port "$work" "$prog" "$@" || echo "# $prog failed"
        echo "# round $r/$rounds $prog (load $(cut -d' ' -f1 /proc/loadavg))"
        grep -v '^#' "$work/rank.0" || true
    done
done
