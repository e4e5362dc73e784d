#!/bin/sh
# ddl's allreduce next to Gloo and Open MPI on the same 4 local nodes, links shaped to 1 Gbit/s,
# with iperf3 as the physical reference. One run, one table. Needs root (namespaces, tc, apt-get).
#
# Usage: bench/side_by_side.sh [BUILD_DIR]          (default: build; needs BUILD_DIR/dist/bin/ddl-allreduce-test)
# Environment: RATE (tc rate, default 1gbit), OUT_DIR (default build-bench/side_by_side),
#              QUICK=1 (fewer sizes and iterations: a check that everything runs, not a measurement),
#              ROUNDS=k (default 1: repeat iperf3 and the whole alternating sweep k times; the table shows
#              medians), DDL_BASELINE=PATH (another build's ddl-allreduce-test, run as one more peer
#              "ddl baseline" in the alternation: a before/after comparison under the same load),
#              BW_SIZES="8388608 ..." (only these bandwidth sizes), LATENCY=0 (skip the latency sweep),
#              PEERS="ddl gloo mpi mpi-ring" (which peers to run).
#
# Nodes are network namespaces bbn1..bbn4 (10.239.0.11-14; BB_PREFIX/BB_NET rename them) on bridge bbbr0, each veth shaped with tbf
# on both ends (bench/nodes.sh, as src/runtime/tools/netns_bench.sh does). Peers run one process per rank in the
# namespaces; the file system is shared, which Gloo's FileStore rendezvous relies on. mpirun runs in
# the root namespace and starts its daemons in the nodes through an rsh agent that enters the node's
# namespace instead of ssh-ing to it.
#
# Runs alternate peer by peer at every size, so drifts (page cache, another process) hit all peers.
# The script reports whether the targets are met; it never fails because of a figure.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rate=${RATE:-1gbit}
out=${OUT_DIR:-$root/build-bench/side_by_side}
n=4
ddl_test=$build/dist/bin/ddl-allreduce-test
[ "$(id -u)" = 0 ] || { echo "side_by_side.sh: needs root (network namespaces, tc)" >&2; exit 2; }
[ -x "$ddl_test" ] || { echo "side_by_side.sh: $ddl_test missing: build ddl first" >&2; exit 2; }
baseline=${DDL_BASELINE:-}
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "side_by_side.sh: DDL_BASELINE=$baseline is not executable" >&2; exit 2; }
rounds=${ROUNDS:-1}

# --- packages (idempotent: apt only runs when something is missing) --------------------------------
need=""
for p in libgloo-dev openmpi-bin libopenmpi-dev iperf3 cmake g++ python3; do
    dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
    echo "# installing:$need"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi

# --- peer harnesses: a project of their own, so the main build never needs Gloo or MPI -----------
cmake -S "$root/bench" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build-bench" >/dev/null
gloo_bin=$root/build-bench/gloo_allreduce
mpi_bin=$root/build-bench/mpi_allreduce

mkdir -p "$out"
work=""
raw=$out/raw.txt
: >"$raw"

# --- nodes ----------------------------------------------------------------------------------------
. "$root/bench/nodes.sh"
cleanup() {
    bb_nodes_down $n
    [ -z "$work" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
work=$(mktemp -d /tmp/bb_side.XXXXXX)
bb_nodes_up $n "$rate"

# Open MPI's launcher: "AGENT HOST COMMAND..." runs COMMAND in HOST's namespace (no sshd needed).
cat >"$work/rsh" <<'EOF'
#!/bin/sh
host=$1
shift
exec ip netns exec "PREFIXn$((${host##*.} - 10))" /bin/sh -c "$*"
EOF
sed -i "s/PREFIX/$bb_prefix/" "$work/rsh"
chmod +x "$work/rsh"
for i in $(seq 1 $n); do echo "$(bb_addr $i) slots=1"; done >"$work/hostfile"

# --- iperf3: the physical reference ---------------------------------------------------------------
run_iperf() {
    ip netns exec "$(bb_ns 2)" iperf3 -s -1 -D >/dev/null
    sleep 0.3
    goodput=$(ip netns exec "$(bb_ns 1)" iperf3 -c "$(bb_addr 2)" -t 5 -J | python3 -c \
        'import json,sys; print("%.4f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8e9))')
    echo "# iperf3 node1 -> node2 at $rate: $goodput GB/s goodput (load $(cut -d' ' -f1 /proc/loadavg))"
    echo "iperf3 0 $goodput" >>"$raw"
}

# --- one run of one peer: prints "SIZE TIME_US" lines ---------------------------------------------
port=29900
run_ddl() { # BINARY PLAN (one SIZE:ITERS:WARMUP entry)
    size=${2%%:*}
    rest=${2#*:}
    port=$((port + 1))
    bb_ddl_ranks $n $port "$work" "$1" --size "$size" -n "${rest%%:*}" -w "${rest#*:}" --json || return 1
    python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["results"]: print(r["size"], r["time_us"])' "$work/rank.0"
}
run_gloo() { # PLAN (SIZE:ITERS:WARMUP[,...])
    store=$(mktemp -d "$work/store.XXXXXX")
    pids=""
    for i in $(seq 1 $n); do
        ip netns exec "$(bb_ns $i)" timeout 600 "$gloo_bin" $((i - 1)) $n "$store" "$(bb_addr $i)" "$1" \
            >"$work/gloo.$i" 2>&1 &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p" || { cat "$work"/gloo.* >&2; return 1; }; done
    cat "$work/gloo.1"
}
run_mpi() { # PLAN [extra mpirun args...]
    plan=$1
    shift
    # mpirun here sometimes waits forever for one daemon that never reports back (seen ~1 run in 10):
    # bound each attempt by the slowest plausible run (20 MB/s) and try once more.
    limit=$(echo "$plan" | tr ',' '\n' | awk -F: '{ s += $1 * ($2 + $3) } END { print 60 + int(s / 20e6) }')
    for attempt in 1 2; do
        if timeout "$limit" mpirun --allow-run-as-root -np $n --hostfile "$work/hostfile" --map-by node \
            --mca plm_rsh_agent "$work/rsh" --mca plm_rsh_no_tree_spawn 1 --mca plm_rsh_num_concurrent 1 \
            --mca btl tcp,self --mca btl_tcp_if_include $bb_subnet --mca oob_tcp_if_include $bb_subnet \
            "$@" "$mpi_bin" "$plan" >"$work/mpi.out" 2>"$work/mpi.err"; then
            cat "$work/mpi.out"
            return 0
        fi
        echo "# mpirun attempt $attempt failed or timed out after $limit s" >&2
        for i in $(seq 1 $n); do ip netns pids "$(bb_ns $i)" | xargs -r kill -9 2>/dev/null || true; done
    done
    return 1
}
run_peer() { # PEER PLAN
    case $1 in
    ddl) run_ddl "$ddl_test" "$2" ;;
    ddl-base) run_ddl "$baseline" "$2" ;;
    gloo) run_gloo "$2" ;;
    mpi) run_mpi "$2" ;;
    mpi-ring) run_mpi "$2" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4 ;;
    esac
}
record() { # KIND PEER PLAN
    run_peer "$2" "$3" | while read -r size us; do echo "$1-$2 $size $us" >>"$raw"; done
}

peers=${PEERS:-ddl gloo mpi mpi-ring}
[ -z "$baseline" ] || peers="ddl ddl-base ${peers#ddl }"
# Iterations shrink with size so the whole run stays within minutes on 2 cores at 1 Gbit/s.
if [ "${QUICK:-0}" = 1 ]; then
    bw_plan="1048576:2:1 16777216:1:1"
    lat_sizes="4 1024 65536"
    lat_iters=20
else
    bw_plan="1048576:10:1 2097152:10:1 4194304:10:1 8388608:5:1 16777216:5:1 33554432:3:1 67108864:3:1
             134217728:2:1 268435456:2:0"
    lat_sizes="4 16 64 256 1024 4096 16384 65536"
    lat_iters=200
fi
if [ -n "${BW_SIZES:-}" ]; then
    keep=""
    for entry in $bw_plan; do
        case " $BW_SIZES " in *" ${entry%%:*} "*) keep="$keep $entry" ;; esac
    done
    bw_plan=$keep
fi
start=$(date +%s)
for round in $(seq 1 "$rounds"); do
    run_iperf
    for entry in $bw_plan; do
        for peer in $peers; do
            echo "# round $round/$rounds, bw ${entry%%:*} B: $peer ($(($(date +%s) - start)) s, load $(cut -d' ' -f1 /proc/loadavg))"
            record bw $peer "$entry"
        done
    done
done
[ "${LATENCY:-1}" = 0 ] && peers=""
for peer in $peers; do
    echo "# latency: $peer ($(($(date +%s) - start)) s)"
    if [ $peer = ddl ] || [ $peer = ddl-base ]; then
        for s in $lat_sizes; do record lat $peer "$s:$lat_iters:20"; done
    else
        plan=$(for s in $lat_sizes; do printf '%s:%s:20,' "$s" "$lat_iters"; done)
        record lat $peer "${plan%,}"
    fi
done
echo "# done in $(($(date +%s) - start)) s; raw figures in $raw"
python3 "$root/bench/side_by_side_table.py" "$raw" $n | tee "$out/table.md"
