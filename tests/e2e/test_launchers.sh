#!/usr/bin/env bash
# The local target's namespace nodes used the way the launchers use a cluster: node-to-node SSH without
# a prompt and with pinned host keys (a changed key refused, the mesh key refused from outside the
# cluster), the hostfiles every node gets fed to the programs that read them (Open MPI's mpirun, MPICH's
# mpiexec, Horovod's documented rule), the bundled runtime started by mpirun and mpiexec as one job, a
# folder shared by all nodes, and the starter spec's own smoke test.
source "$(dirname "$0")/lib.sh"
for tool in mpirun.openmpi mpiexec.mpich; do
  command -v "$tool" >/dev/null || fail "$tool missing: run scripts/install-deps.sh (openmpi-bin, mpich)"
done
spec lnch 4 "  bandwidth: 1gbit"
use_ping_playbook
ddl deploy lnch.yaml >deploy.log 2>&1 || { cat deploy.log; fail "deploy"; }
names="master worker1 worker2 worker3"
strip() { sed 's/^\[[a-z0-9]*\] //'; }

# 1. From every node to every node, by name and by address, strictly checked host keys, no prompt.
addrs=$(ddl status lnch --output json | python3 -c 'import json,sys; print(" ".join(n["address"] for n in json.load(sys.stdin)["nodes"]))')
out=$(ddl exec --cluster lnch -- "for h in $names $addrs; do ssh -o BatchMode=yes \$h hostname; done") ||
  { echo "$out"; fail "node-to-node ssh"; }
for n in $names; do
  got=$(echo "$out" | grep "^\[$n\] " | strip | sort | tr '\n' ' ')
  [ "$got" = "master master worker1 worker1 worker2 worker2 worker3 worker3 " ] || fail "ssh from $n reached: $got"
done
ok "ssh from each of 4 nodes to all 4 by name and by address (8 connections each, strict host keys)"

# A changed host key is refused (the pinned file is the node's own ~/.ssh/known_hosts).
ddl exec --cluster lnch --nodes master -- 'cp ~/.ssh/known_hosts /tmp/kh.ddl && ssh-keygen -q -t ed25519 -N "" -f /tmp/other.ddl &&
  awk -v k="$(cut -d" " -f2 /tmp/other.ddl.pub)" "/^worker1,/ {\$3=k} {print}" /tmp/kh.ddl >~/.ssh/known_hosts' >/dev/null
if ddl exec --cluster lnch --nodes master -- 'ssh -o BatchMode=yes worker1 true' >changed.log 2>&1; then
  fail "a changed host key was accepted"
fi
expect_in changed.log "Host key verification failed\|REMOTE HOST IDENTIFICATION HAS CHANGED" "changed key message"
ddl exec --cluster lnch --nodes master -- 'cp /tmp/kh.ddl ~/.ssh/known_hosts && rm -f /tmp/kh.ddl /tmp/other.ddl*' >/dev/null
ok "a changed host key is refused"

# The mesh key is authorized only from the cluster's addresses: from this machine (the bridge) it fails.
master_addr=${addrs%% *}
if ssh -i "$STATE/lnch/mesh_ed25519" -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=no \
    -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5 "root@$master_addr" true 2>outside.log; then
  fail "the mesh key was accepted from outside the cluster"
fi
ok "the mesh key is refused from outside the cluster"
[ "$(stat -c %a "$STATE/lnch/mesh_ed25519")" = 600 ] || fail "mesh key mode"

# 2. The hostfiles on every node, read by their consumers.
ddl exec --cluster lnch --nodes master -- cat /etc/ddl/hostfile | strip >hostfile
ddl exec --cluster lnch --nodes master -- cat /etc/ddl/hostfile.mpich | strip >hostfile.mpich
# Horovod's rule, as horovodrun --hostfile applies it (horovod/runner/common/util/hosts.py: parse_host_files
# takes each line's first word and the text after its first '=', parse_hosts_and_slots then requires
# ^[\w.-]+:[0-9]+$; https://horovod.readthedocs.io/en/stable/running_include.html): no comment or blank
# line, no second key.
python3 - hostfile <<'PY' || fail "/etc/ddl/hostfile breaks Horovod's rule: $(cat hostfile)"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "", "no final newline"
for line in lines[:-1]:
    line = line.rstrip()
    host, slots = line.split()[0], line.split("=")[1]
    assert re.match(r"^[\w.-]+:[0-9]+$", f"{host}:{slots}"), line
PY
[ "$(wc -l <hostfile)" = 4 ] || fail "hostfile: $(cat hostfile)"
ok "/etc/ddl/hostfile passes Horovod's hostfile rule"
# Open MPI's mpirun and MPICH's mpiexec across the 4 nodes with the files as they are on the nodes.
all4="master worker1 worker2 worker3 "
launch_from_master lnch openmpi /etc/ddl/hostfile 4 "$all4"
ok "mpirun (Open MPI) --hostfile /etc/ddl/hostfile -np 4: one rank on each node"
launch_from_master lnch mpich /etc/ddl/hostfile.mpich 4 "$all4"
ok "mpiexec (MPICH) -f /etc/ddl/hostfile.mpich -n 4: one rank on each node"
# The bundled runtime under both: it reads Open MPI's and Hydra's own variables and the master from each
# node's /etc/ddl/node.env, so each is ONE 4-rank job with exact results (not four jobs of one).
allreduce_from_master lnch openmpi /etc/ddl/hostfile 4
ok "mpirun --hostfile /etc/ddl/hostfile -np 4 ddl-allreduce-test: one job of 4 ranks, exact"
allreduce_from_master lnch mpich /etc/ddl/hostfile.mpich 4
ok "mpiexec -f /etc/ddl/hostfile.mpich -n 4 ddl-allreduce-test: one job of 4 ranks, exact"
# A launch that would make N jobs of one is refused by every rank with the launcher and the fix: Hydra's
# -pmi-port gives no PMI_RANK/PMI_SIZE; a DDL_SIZE=1 in mpiexec's shell is passed to every rank.
refused() {
  local log=$1 expected=$2; shift 2
  if ddl exec --cluster lnch --nodes master -- "$* /opt/ddl/bin/ddl-allreduce-test -b 4 -e 4 -n 1 -w 0" >"$log" 2>&1; then
    cat "$log"; fail "a launch that should be refused ran: $*"
  fi
  grep -qF "$expected" "$log" || { cat "$log"; fail "no refusal naming the launcher: $*"; }
  ! grep -q "ranks, backend" "$log" || { cat "$log"; fail "a rank ran alone: $*"; }
}
refused pmiport.log "started by MPICH's Hydra (mpiexec) (PMI_PORT is set)" mpiexec.mpich -f /etc/ddl/hostfile.mpich -n 4 -pmi-port
refused size1.log "DDL_SIZE=1 (ddl run) but PMI_SIZE=4" DDL_RANK=0 DDL_SIZE=1 mpiexec.mpich -f /etc/ddl/hostfile.mpich -n 4
ok "mpiexec -pmi-port, and mpiexec under DDL_SIZE=1: refused with the launcher and the fix, no rank ran alone"
# A hostfile of other nodes puts rank 0 where node.env's master is not (Open MPI maps its own node first
# when the hostfile has it): rank 0 says so at once (mpirun then stops the others) rather than leaving
# them to call a master nobody listens on.
printf 'worker1 slots=1\nworker2 slots=1\n' >"$WORK/hf.workers"
refused workers.log "rank 0 runs on worker1, but the master is DDL_MASTER_ADDR=$master_addr from /etc/ddl/node.env" \
  mpirun.openmpi --allow-run-as-root --hostfile "$WORK/hf.workers" -np 2 --mca btl tcp,self --mca oob_tcp_if_include eth0 -x DDL_BOOTSTRAP_TIMEOUT_S=20
ok "a hostfile of the workers only: rank 0 refuses node.env's master in one line naming both"

# What `ddl hostfile --format` writes, each fed to its consumer too (namespace nodes see this machine's
# /tmp, so the master reads the files where this test wrote them).
for f in openmpi horovod mpich; do ddl hostfile --cluster lnch --format $f -o "$WORK/hf.$f" || fail "ddl hostfile --format $f"; done
head -1 "$WORK/hf.openmpi" | grep -q '^# ' || fail "the openmpi format lost its header comment"
launch_from_master lnch openmpi "$WORK/hf.openmpi" 4 "$all4"
launch_from_master lnch mpich "$WORK/hf.mpich" 4 "$all4"
cmp -s "$WORK/hf.horovod" hostfile || fail "ddl hostfile --format horovod differs from /etc/ddl/hostfile"
ok "ddl hostfile --format openmpi|mpich fed to mpirun|mpiexec; --format horovod is the file checked above"

# 3. The shared folder (the spec's services.nfs.mount, on by default): written on one node, read on all.
ddl exec --cluster lnch --nodes worker2 -- 'echo shared-by-worker2 >/shared/probe' >/dev/null
[ "$(ddl exec --cluster lnch -- cat /shared/probe | strip | sort -u)" = shared-by-worker2 ] || fail "shared folder"
ok "/shared is one folder on all 4 nodes"
ddl destroy -y lnch >/dev/null 2>&1 || fail "destroy"
assert_gone lnch
ok "destroy leaves nothing"

# 4. The starter spec as `ddl init` writes it: its smoke test passes whole (NFS check included).
"$DDL" init --target local --name lnch-starter -o starter.yaml >/dev/null
CLUSTERS+=(lnch-starter)
unset DDL_DATA_DIR
ddl smoke-test starter.yaml --junit starter.xml >smoke.log 2>&1 || { cat smoke.log; fail "the starter spec's smoke test"; }
expect_in starter.xml 'name="nfs (write on master)"' "no NFS check in the starter's smoke test"
grep -q '<failure' starter.xml && { cat starter.xml; fail "a failed check"; }
assert_gone lnch-starter
ok "ddl init --target local; ddl smoke-test: every check passes, NFS included"
