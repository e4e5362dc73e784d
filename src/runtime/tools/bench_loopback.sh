#!/bin/sh
# Benchmark harness: ddl-allreduce-test on N ranks over loopback (default 4 ranks, 1 MiB..256 MiB).
# Usage: bench_loopback.sh [BUILD_DIR] [RANKS] [extra ddl-allreduce-test args, e.g. --json]
# On 2 cores the CPU, not loopback, is the limit; run it on the local cluster's namespaces (ddl run)
# to compare with iperf3 at 1 Gbit/s.
set -eu
build=${1:-build}
ranks=${2:-4}
[ $# -ge 2 ] && shift 2 || shift $#
port=$(( 20000 + $$ % 20000 ))
exec "$build/dist/bin/ddl-launch-local" -np "$ranks" --port "$port" -- \
    "$build/dist/bin/ddl-allreduce-test" -b 1M -e 256M -f 2 -n 3 -w 1 "$@"
