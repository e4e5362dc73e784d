#!/usr/bin/env bash
# A real, private Slurm (22.05 from Debian) on the nodes of a local-target cluster:
#   slurm_cluster.sh up DIR STATE_DIR CLUSTER [PARTITION]   munged + slurmctld on this machine (on the
#       cluster's bridge address), one slurmd per node inside that node's network, mount and UTS
#       namespaces (entered through its sshd, so the node's /etc/hosts resolves the other nodes);
#       writes DIR/slurm.conf and DIR/env (`source` it: SLURM_CONF for sbatch/squeue/srun).
#   slurm_cluster.sh down DIR                                stops everything it started (idempotent).
# Everything lives in DIR: munge key and socket, state, spool, logs, pid files. The machine's own
# /etc/slurm and /etc/munge are not used. Slurm's ports are 16817/16818 so a real install is not hit.
set -euo pipefail

die() { echo "slurm_cluster.sh: $*" >&2; exit 1; }

stop_pidfile() {
  local f=$1 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

down() {
  local dir=$1
  [ -d "$dir" ] || return 0
  # Jobs first, while the controller can still reach the slurmds.
  if [ -s "$dir/run/slurmctld.pid" ] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null; then
    SLURM_CONF="$dir/slurm.conf" scancel --full --user root 2>/dev/null || true
    for _ in $(seq 30); do
      [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue -h -o %i -t PD,R,CG 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for f in "$dir"/run/slurmd-*.pid; do [ -e "$f" ] && stop_pidfile "$f"; done
  # Job steps run detached from their slurmd, inside the node's network namespace: only those pids.
  if [ -s "$dir/nodes" ]; then
    while read -r _ _ netns; do
      for pid in $(ip netns pids "$netns" 2>/dev/null); do
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] && kill -9 "$pid" 2>/dev/null || true
      done
    done <"$dir/nodes"
  fi
  stop_pidfile "$dir/run/slurmctld.pid"
  stop_pidfile "$dir/run/munged.pid"
}

up() {
  local dir=$1 state=$2 cluster=$3 partition=${4:-debug}
  : "${DDL:?DDL must point at the ddl binary}"
  for tool in munged mungekey slurmctld slurmd sbatch scontrol nsenter; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || die "$tool is missing: run scripts/install-deps.sh"
  done
  mkdir -p "$dir"/{run,log,state,spool,munge,munge-socket}
  chmod 0700 "$dir/munge"
  local status
  status=$("$DDL" --state-dir "$state" status "$cluster" --output json) || die "no local cluster $cluster in $state"
  python3 - "$status" "$dir" "$state/$cluster" "$partition" "$(hostname -s)" <<'PY'
import json, sys
status, d, cdir, partition, host = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
bridge = status["target_data"]["plan"]["bridge_address"]
nodes = status["nodes"]
conf = f"""# Written by tests/e2e/helpers/slurm_cluster.sh for local cluster {status['cluster']}
ClusterName=ddle2e
SlurmctldHost={host}({bridge})
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge-socket/munge.socket
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/linear
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=10
KillWait=2
MinJobAge=300
"""
for n in nodes:
    conf += f"NodeName={n['name']} NodeAddr={n['address']} CPUs=2 RealMemory=1000 State=UNKNOWN\n"
conf += f"PartitionName={partition} Nodes={','.join(n['name'] for n in nodes)} Default=YES MaxTime=INFINITE State=UP\n"
open(f"{d}/slurm.conf", "w").write(conf)
with open(f"{d}/nodes", "w") as f:
    for n in nodes:
        f.write(f"{n['name']} {cdir}/nodes/{n['name']}/sshd.pid {n['netns']}\n")
PY
  printf 'export SLURM_CONF=%q\n' "$dir/slurm.conf" >"$dir/env"
  export SLURM_CONF="$dir/slurm.conf"

  mungekey --create --keyfile="$dir/munge/munge.key" --force >/dev/null
  chmod 0600 "$dir/munge/munge.key"
  # --force: munged wants every folder above its socket searchable by all users; a test's temp folder
  # is 0700, and only root talks to this munged.
  munged --force --socket="$dir/munge-socket/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
    || die "munged did not start: $(tail -3 "$dir/log/munged.log" 2>/dev/null)"

  slurmctld -f "$dir/slurm.conf" || die "slurmctld did not start: $(tail -5 "$dir/log/slurmctld.log")"
  while read -r name pidfile _; do
    local pid
    pid=$(cat "$pidfile") || die "no sshd pid for node $name"
    # The node's own namespaces (not `ip netns exec`, which remounts /sys): its /etc/hosts, hostname, net.
    nsenter --target "$pid" --net --mount --uts -- env SLURM_CONF="$dir/slurm.conf" slurmd -N "$name" \
      || die "slurmd $name did not start: $(tail -5 "$dir/log/slurmd-$name.log" 2>/dev/null)"
  done <"$dir/nodes"
  local want
  want=$(wc -l <"$dir/nodes")
  for _ in $(seq 100); do
    if [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq "$want" ]; then return 0; fi
    sleep 0.1
  done
  sinfo -N >&2 || true
  tail -5 "$dir/log/slurmctld.log" >&2 || true
  die "the $want nodes did not become idle within 10 s"
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  *) die "usage: slurm_cluster.sh up DIR STATE_DIR CLUSTER [PARTITION] | down DIR" ;;
esac
