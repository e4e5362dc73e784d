# Shared by bench/*.sh (sourced): N local nodes as network namespaces bbn1..bbnN (10.239.0.11..)
# on bridge bbbr0, each veth shaped with tbf on both ends. Also used by src/runtime/tools/netns_bench.sh.
# Needs root. The nodes share this machine's file system and cores.
bb_br=bbbr0
bb_subnet=10.239.0.0/24

bb_addr() { echo "10.239.0.$((10 + $1))"; } # node index (1-based) -> address

bb_nodes_down() { # N
    for i in $(seq 1 "$1"); do
        ip netns pids bbn$i 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del bbn$i 2>/dev/null || true
    done
    ip link del $bb_br 2>/dev/null || true
}

bb_nodes_up() { # N RATE
    bb_nodes_down "$1"
    ip link add $bb_br type bridge && ip addr add 10.239.0.1/24 dev $bb_br && ip link set $bb_br up
    for i in $(seq 1 "$1"); do
        ip netns add bbn$i
        ip link add bbv$i type veth peer name eth0 netns bbn$i
        ip link set bbv$i master $bb_br up
        ip -n bbn$i addr add "$(bb_addr "$i")/24" dev eth0
        ip -n bbn$i link set eth0 up
        ip -n bbn$i link set lo up
        # Iterations are separated by buffer fills longer than an RTO: without this every iteration
        # restarts in slow start and the figures measure TCP ramp-up, not the link.
        ip netns exec bbn$i sysctl -qw net.ipv4.tcp_slow_start_after_idle=0
        tc qdisc add dev bbv$i root tbf rate "$2" burst 1mb latency 50ms
        ip netns exec bbn$i tc qdisc add dev eth0 root tbf rate "$2" burst 1mb latency 50ms
    done
}

# Runs PROG ARGS as ranks 0..N-1 of a libddlcomm job, rank r in node r+1; rank r's output goes to
# OUTDIR/rank.r. Returns non-zero when any rank fails.
bb_ddl_ranks() { # N PORT OUTDIR PROG ARGS...
    _n=$1 _port=$2 _dir=$3
    shift 3
    _pids=""
    for i in $(seq 1 "$_n"); do
        ip netns exec bbn$i env DDL_RANK=$((i - 1)) DDL_SIZE="$_n" DDL_LOCAL_RANK=0 DDL_LOCAL_SIZE=1 \
            DDL_MASTER_ADDR="$(bb_addr 1)" DDL_MASTER_PORT="$_port" DDL_IFACE=eth0 \
            timeout 600 "$@" >"$_dir/rank.$((i - 1))" 2>&1 &
        _pids="$_pids $!"
    done
    _rc=0
    for p in $_pids; do wait "$p" || _rc=1; done
    [ $_rc = 0 ] || cat "$_dir"/rank.* >&2
    return $_rc
}
