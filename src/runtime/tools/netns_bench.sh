#!/bin/sh
# Benchmark on shaped links: N network namespaces on a bridge (bench/nodes.sh), each veth shaped with tbf
# to RATE (default 1gbit), then iperf3 between two nodes and ddl-allreduce-test across all N. Needs root.
# Usage: netns_bench.sh BUILD_DIR [N] [RATE] [extra ddl-allreduce-test args]
set -eu
build=$(cd "${1:-build}" && pwd)
n=${2:-4}
rate=${3:-1gbit}
[ $# -ge 3 ] && shift 3 || shift $#
. "$(dirname "$0")/../../../bench/nodes.sh"
out=$(mktemp -d)
trap 'bb_nodes_down "$n"; rm -rf "$out"' EXIT
bb_nodes_up "$n" "$rate"
ip netns exec "$(bb_ns 2)" iperf3 -s -1 -D >/dev/null
sleep 0.3
echo "# iperf3 node1 -> node2 at $rate"
ip netns exec "$(bb_ns 1)" iperf3 -c "$(bb_addr 2)" -t 5 -f m | grep -E "receiver"
rc=0
bb_ddl_ranks "$n" 29700 "$out" "$build/dist/bin/ddl-allreduce-test" "$@" || rc=1
cat "$out/rank.0"
exit $rc
