#!/bin/sh
# Benchmark on shaped links: N network namespaces on a bridge, each veth shaped with tbf to RATE
# (default 1gbit), then iperf3 between two nodes and ddl-allreduce-test across all N. Needs root.
# Usage: netns_bench.sh BUILD_DIR [N] [RATE] [extra ddl-allreduce-test args]
set -eu
build=$(cd "${1:-build}" && pwd)
n=${2:-4}
rate=${3:-1gbit}
[ $# -ge 3 ] && shift 3 || shift $#
br=ddlbr0
cleanup() {
    for i in $(seq 1 "$n"); do ip netns pids ddlb$i 2>/dev/null | xargs -r kill -9; ip netns del ddlb$i 2>/dev/null || true; done
    ip link del $br 2>/dev/null || true
}
trap cleanup EXIT
cleanup
ip link add $br type bridge && ip addr add 10.232.0.1/24 dev $br && ip link set $br up
for i in $(seq 1 "$n"); do
    ip netns add ddlb$i
    ip link add vb$i type veth peer name eth0 netns ddlb$i
    ip link set vb$i master $br up
    ip -n ddlb$i addr add 10.232.0.$((10 + i))/24 dev eth0
    ip -n ddlb$i link set eth0 up
    ip -n ddlb$i link set lo up
    # Iterations are separated by buffer fills and checks longer than an RTO: without this, every
    # iteration restarts in slow start and the table measures TCP ramp-up, not the link.
    ip netns exec ddlb$i sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
    tc qdisc add dev vb$i root tbf rate "$rate" burst 1mb latency 50ms
    ip netns exec ddlb$i tc qdisc add dev eth0 root tbf rate "$rate" burst 1mb latency 50ms
done
ip netns exec ddlb2 iperf3 -s -1 -D >/dev/null
sleep 0.3
echo "# iperf3 node1 -> node2 at $rate"
ip netns exec ddlb1 iperf3 -c 10.232.0.12 -t 5 -f m | grep -E "receiver"
port=29700
pids=""
for i in $(seq 1 "$n"); do
    r=$((i - 1))
    ip netns exec ddlb$i env DDL_RANK=$r DDL_SIZE="$n" DDL_LOCAL_RANK=0 DDL_LOCAL_SIZE=1 DDL_MASTER_ADDR=10.232.0.11 \
        DDL_MASTER_PORT=$port DDL_IFACE=eth0 "$build/dist/bin/ddl-allreduce-test" "$@" &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
exit $rc
