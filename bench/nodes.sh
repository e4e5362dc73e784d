# Shared by bench/*.sh (sourced): N local nodes as network namespaces bbn1..bbnN (10.239.0.11..)
# on bridge bbbr0, each veth shaped with tbf on both ends. Also used by src/runtime/tools/netns_bench.sh.
# Needs root. The nodes share this machine's file system and cores.
# BB_PREFIX (default bb) and BB_NET (default 239) rename the namespaces and links (PREFIXn1..,
# PREFIXbr0) and move the subnet (10.BB_NET.0.0/24): two benchmarks on one machine keep apart.
bb_prefix=${BB_PREFIX:-bb}
bb_net=${BB_NET:-239}
bb_br=${bb_prefix}br0
bb_subnet=10.$bb_net.0.0/24

bb_addr() { echo "10.$bb_net.0.$((10 + $1))"; } # node index (1-based) -> address
bb_ns() { echo "${bb_prefix}n$1"; }              # node index (1-based) -> network namespace

bb_nodes_down() { # N
    for i in $(seq 1 "$1"); do
        ip netns pids "$(bb_ns $i)" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del "$(bb_ns $i)" 2>/dev/null || true
    done
    ip link del $bb_br 2>/dev/null || true
}

bb_nodes_up() { # N RATE
    bb_nodes_down "$1"
    ip link add $bb_br type bridge && ip addr add "10.$bb_net.0.1/24" dev $bb_br && ip link set $bb_br up
    for i in $(seq 1 "$1"); do
        _ns=$(bb_ns "$i")
        ip netns add "$_ns"
        ip link add ${bb_prefix}v$i type veth peer name eth0 netns "$_ns"
        ip link set ${bb_prefix}v$i master $bb_br up
        ip -n "$_ns" addr add "$(bb_addr "$i")/24" dev eth0
        ip -n "$_ns" link set eth0 up
        ip -n "$_ns" link set lo up
        # Iterations are separated by buffer fills longer than an RTO: without this every iteration
        # restarts in slow start and the figures measure TCP ramp-up, not the link.
        ip netns exec "$_ns" sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
        tc qdisc add dev ${bb_prefix}v$i root tbf rate "$2" burst 1mb latency 50ms
        ip netns exec "$_ns" tc qdisc add dev eth0 root tbf rate "$2" burst 1mb latency 50ms
    done
}

# Runs PROG ARGS as ranks 0..N-1 of a libddlcomm job, rank r in node r+1; rank r's output goes to
# OUTDIR/rank.r. Returns non-zero when any rank fails.
bb_ddl_ranks() { # N PORT OUTDIR PROG ARGS...
    _n=$1 _port=$2 _dir=$3
    shift 3
    _pids=""
    for i in $(seq 1 "$_n"); do
        ip netns exec "$(bb_ns "$i")" env DDL_RANK=$((i - 1)) DDL_SIZE="$_n" DDL_LOCAL_RANK=0 DDL_LOCAL_SIZE=1 \
            DDL_MASTER_ADDR="$(bb_addr 1)" DDL_MASTER_PORT="$_port" DDL_IFACE=eth0 \
            timeout 600 "$@" >"$_dir/rank.$((i - 1))" 2>&1 &
        _pids="$_pids $!"
    done
    _rc=0
    for p in $_pids; do wait "$p" || _rc=1; done
    [ $_rc = 0 ] || cat "$_dir"/rank.* >&2
    return $_rc
}
