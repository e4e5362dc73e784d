#!/usr/bin/env bash
# `ddl doctor`, `ddl cordon`/`uncordon`, restarts and `ddl deploy --replace` on one 4-node namespace cluster, faults planted rather than rebuilt:
#  - the healthy cluster passes (exit 0);
#  - planted at once: TCP 29500 dropped from worker1 to worker2 (iptables in worker2's namespace), master's
#    name removed from worker1's /etc/hosts, and a stand-in nvidia-smi (tests/fakes/nvidia-smi) on worker2
#    reporting uncorrectable ECC errors and an x4 link: each named with its node(s) and fix, exit 1, and
#    nothing else fails;
#  - with the network faults gone, `doctor --cordon` cordons worker2 only: every node's hostfiles lose it,
#    status shows it, `ddl run` gives it no rank; `uncordon` brings it back;
#  - restarts: examples/pytorch_ddp.py under `ddl run --max-restarts 1 --restart-on node-fault --on-node-fault
#    cordon` with the GPU
#    faults planted on worker2 again; its rank there is killed once: every rank stops, the health checks
#    cordon worker2, the job starts again (DDL_RESTART_COUNT=1) from its last checkpoint in
#    DDL_CHECKPOINT_DIR and ends with the same parameters on every rank as an uninterrupted run from that
#    checkpoint on the same nodes;
#  - `ddl deploy --replace worker2` makes worker2 anew (a new sshd, its private folders empty, the stand-in
#    gone, uncordoned) and leaves the others as they were (same sshd, no Ansible change); an allreduce across
#    all four is exact afterwards and doctor passes;
#  - healing runs: the fault planted on worker2 and its rank killed once: with the default --on-node-fault
#    (replace, on this target) worker2 is made anew and the job resumes on four ranks with an uninterrupted
#    run's parameters; with shrink --min-nodes 3 it goes on with three;
#  - spares: nodes.spares: 1 added, deploy makes worker4 a spare; the same fault: the spare takes worker2's
#    place and the job resumes on four ranks with an uninterrupted run's parameters.
source "$(dirname "$0")/lib.sh"
command -v iptables >/dev/null || fail "iptables missing (scripts/install-deps.sh installs it)"
spec hlth 4 "runtime:" "  interface: eth0"
ddl deploy hlth.yaml >deploy.log 2>&1 || { cat deploy.log; fail "deploy"; }
addr() { python3 -c 'import json,sys; print([n.get("private_address") or n["address"] for n in json.load(sys.stdin)["nodes"] if n["name"]==sys.argv[1]][0])' "$1" <"$STATE/hlth/state.json"; }
netns() { python3 -c 'import json,sys; print([n["netns"] for n in json.load(sys.stdin)["nodes"] if n["name"]==sys.argv[1]][0])' "$1" <"$STATE/hlth/state.json"; }
w1=$(addr worker1) w2=$(addr worker2) m=$(addr master)

# 1. Healthy.
t0=$(date +%s.%N)
ddl doctor hlth --all >healthy.out 2>&1 || { cat healthy.out; fail "doctor on a healthy cluster"; }
t=$(python3 -c "import time; print(f'{time.time()-$t0:.1f}')")
expect_in healthy.out "0 failed" "healthy summary"
grep -Eq "^worker2 +connect +ok +reached from every peer on :29500" healthy.out || { cat healthy.out; fail "no connect row"; }
ok "healthy cluster passes ($(tail -1 healthy.out); ${t} s)"

# 2. Faults.
ip netns exec "$(netns worker2)" iptables -A INPUT -p tcp -s "$w1" --dport 29500 -j DROP
ddl exec --cluster hlth --nodes worker1 -- "grep -v ' master ' /etc/hosts >/tmp/hosts.ddl-doctor.\$\$ && cat /tmp/hosts.ddl-doctor.\$\$ >/etc/hosts && rm /tmp/hosts.ddl-doctor.\$\$" >/dev/null ||
  fail "removing master from worker1's hosts"
# The stand-in in worker2's own mount namespace only: a folder over /usr/local/sbin (first on root's PATH).
mkdir -p standin
cp "$DDL_SOURCE_DIR/tests/fakes/nvidia-smi" standin/nvidia-smi.standin
printf '#!/bin/sh\nNVIDIA_SMI_STANDIN=%s/standin/conf exec %s/standin/nvidia-smi.standin "$@"\n' "$WORK" "$WORK" >standin/nvidia-smi
printf 'PRODUCT="NVIDIA A100-SXM4-40GB"\nDRIVER=535.247.01\nCUDA=12.2\nCC=8.0\nECC_DRAM_UNCORRECTABLE=2\nLINK_WIDTH=4\n' >standin/conf
chmod 755 standin/nvidia-smi standin/nvidia-smi.standin
ddl exec --cluster hlth --nodes worker2 -- mount --bind "$WORK/standin" /usr/local/sbin >/dev/null || fail "planting nvidia-smi"
ddl exec --cluster hlth --nodes worker1 -- 'command -v nvidia-smi || true' | grep -q standin && fail "the stand-in leaked to worker1"
set +e
ddl doctor hlth --output json >faults.json 2>faults.err; rc=$?
ddl doctor hlth >faults.out 2>&1
set -e
[ $rc = 1 ] || { cat faults.json faults.err; fail "doctor with faults: exit $rc, expected 1"; }
python3 - faults.json "$w1" "$w2" "$m" <<'PY' || { cat faults.out; fail "doctor's findings"; }
import json, sys
d = json.load(open(sys.argv[1])); w1, w2, m = sys.argv[2:5]
failed = {(f["node"], f["check"]): f for f in d["findings"] if f["status"] == "failed"}
pair = failed[("worker1 -> worker2", "connect :29500")]
assert pair["found"].startswith("timed out"), pair
assert f"from worker1 ({w1}) to worker2 ({w2})" in pair["fix"], pair
res = failed[("worker1", "resolve")]
assert res["found"] == "master does not resolve" and res["fix"].startswith(f"add `{m} master` to /etc/hosts on worker1"), res
ecc = failed[("worker2", "ecc")]
assert "2 uncorrectable ECC error(s) since boot" in ecc["found"] and "ddl cordon worker2" in ecc["fix"], ecc
pcie = failed[("worker2", "pcie")]
assert pcie["found"].endswith("link x4") and pcie["expected"] == "x16" and "reseat" in pcie["fix"], pcie
assert set(failed) == {("worker1 -> worker2", "connect :29500"), ("worker1", "resolve"), ("worker2", "ecc"),
                       ("worker2", "pcie")}, sorted(failed)
PY
for row in "worker1 -> worker2 +connect :29500 +FAIL" "worker1 +resolve +FAIL +master does not resolve" \
           "worker2 +ecc +FAIL" "worker2 +pcie +FAIL .*link x4"; do
  grep -Eq "^$row" faults.out || { cat faults.out; fail "table row missing: $row"; }
done
sed "s/^/    /" faults.out
ok "planted faults named: $(grep -Ec 'FAIL' faults.out) rows, e.g. '$(grep -E '^worker1 -> worker2' faults.out | tr -s ' ')'"

# 3. --cordon with the network faults gone: worker2 (the GPU faults) only.
ip netns exec "$(netns worker2)" iptables -D INPUT -p tcp -s "$w1" --dport 29500 -j DROP
ddl exec --cluster hlth --nodes worker1 -- "echo '$m master hlth-master' >>/etc/hosts" >/dev/null
set +e; ddl doctor hlth --cordon >cordon.out 2>&1; rc=$?; set -e
[ $rc = 1 ] || { cat cordon.out; fail "doctor --cordon: exit $rc"; }
expect_in cordon.out "^cordoned worker2" "doctor --cordon did not cordon worker2"
ddl exec --cluster hlth -- cat /etc/ddl/hostfile /etc/ddl/hostfile.mpich >hf.out || fail "reading hostfiles"
grep -q "$w2" hf.out && { cat hf.out; fail "worker2 still in a hostfile"; }
[ "$(grep -c "$w1" hf.out)" = 8 ] || { cat hf.out; fail "worker1 not in every hostfile"; }
ddl status hlth | grep -q "^worker2 .*\[cordoned: no ranks\]" || fail "status does not show worker2 cordoned"
ddl run --cluster hlth -- hostname >run.out 2>&1 || { cat run.out; fail "run with worker2 cordoned"; }
grep -q worker2 run.out && { cat run.out; fail "a rank ran on cordoned worker2"; }
[ "$(grep -c '^\[[012]\]' run.out)" = 3 ] || { cat run.out; fail "ranks on master, worker1 and worker3 expected"; }
ok "doctor --cordon: worker2 out of every node's hostfiles, status marks it, ddl run gave it no rank"
set +e
ddl cordon --cluster hlth nosuch >bad.out 2>&1; rc_none=$?
ddl cordon --cluster hlth master worker1 worker3 >all.out 2>&1; rc_all=$?
set -e
expect_rc "$rc_none" 2 bad.out 'no node "nosuch"' "cordon of no node"
expect_rc "$rc_all" 2 all.out "would leave no node that takes ranks" "cordoning every node"
ddl uncordon --cluster hlth worker2 >/dev/null || fail uncordon
ddl exec --cluster hlth -- cat /etc/ddl/hostfile >hf2.out
[ "$(grep -c "$w2" hf2.out)" = 4 ] || { cat hf2.out; fail "worker2 not back in every hostfile"; }
ddl exec --cluster hlth --nodes worker2 -- umount /usr/local/sbin >/dev/null || fail "removing the stand-in"
ddl doctor hlth >after.out 2>&1 || { cat after.out; fail "doctor after the faults were removed"; }
ok "uncordon: worker2 back in the hostfiles; doctor passes again"
# 4. A rank killed once, a node fault planted: restart from the last checkpoint.
ddl exec --cluster hlth --nodes worker2 -- mount --bind "$WORK/standin" /usr/local/sbin >/dev/null || fail "planting nvidia-smi again"
py=/usr/bin/python3
example=$DDL_SOURCE_DIR/examples/pytorch_ddp.py
train=(--steps 40 --checkpoint-every 5 --step-seconds 0.1)
# killed_run LOG RUN-OPTIONS...: the example under `ddl run RUN-OPTIONS` from no checkpoint (the example
# resumes from the newest one in DDL_CHECKPOINT_DIR), its rank on worker2 killed once after the checkpoint at
# step 10; the run (restarted) must end with 0.
killed_run() {
  local log=$1 pr rc=0 victims; shift
  ddl exec --cluster hlth --nodes master -- rm -rf /shared/checkpoints/hlth >/dev/null || fail "clearing the checkpoints"
  "$DDL" --state-dir "$STATE" run --cluster hlth "$@" -x OMP_NUM_THREADS=1 -- "$py" "$example" "${train[@]}" >"$log" 2>&1 & pr=$!
  wait_for 60 "the job's checkpoint at step 10 ($log)" eval "grep -q 'checkpoint at step 10' '$log' || ! kill -0 $pr"
  grep -q "checkpoint at step 10" "$log" || { cat "$log"; fail "the job ($log) ended before its checkpoint at step 10"; }
  victims=$(ip netns pids "$(netns worker2)" | xargs -r ps -o pid=,comm= -p | awk '$2 ~ /^python3/ {print $1}')
  [ -n "$victims" ] || { cat "$log"; fail "no rank found on worker2"; }
  kill -KILL $victims
  wait $pr || rc=$?
  [ $rc = 0 ] || { cat "$log"; fail "the restarted job ($log): exit $rc"; }
}
killed_run restart.out --max-restarts 1 --restart-on node-fault --on-node-fault cordon
expect_in restart.out "restarting (1 of 1): cordoning worker2" "no restart that cordons worker2"
digests() { grep -E '^\[[0-9]\] rank [0-9] parameters ' "$1" | awk '{print $NF}' | sort | uniq -c | awk '{print $1, $2}'; }
# resumed_as_uninterrupted LOG RANKS: LOG's job resumed from a checkpoint (restart 1) and its RANKS ranks
# ended with equal parameters, those of an uninterrupted run from that checkpoint on the same nodes
# (LOG.reference); sets $resumed.
resumed_as_uninterrupted() {
  local log=$1 ranks=$2
  resumed=$(sed -n 's/^\[0\] resumed from step \([0-9]*\) (restart 1)$/\1/p' "$log")
  [ -n "$resumed" ] || { cat "$log"; fail "the restarted job ($log) did not resume from a checkpoint"; }
  [ "$(digests "$log" | wc -l)" = 1 ] && [ "$(digests "$log" | cut -d' ' -f1)" = "$ranks" ] ||
    { cat "$log"; fail "the restarted job's $ranks ranks ($log) ended with different parameters"; }
  ddl exec --cluster hlth --nodes master -- "rm -rf /shared/reference && mkdir -p /shared/reference && cp /shared/checkpoints/hlth/step-$(printf %06d "$resumed").pt /shared/reference/" >/dev/null ||
    fail "copying the checkpoint"
  ddl run --cluster hlth -x OMP_NUM_THREADS=1 -x DDL_CHECKPOINT_DIR=/shared/reference -- "$py" "$example" "${train[@]}" >"$log.reference" 2>&1 ||
    { cat "$log.reference"; fail "the uninterrupted run ($log.reference)"; }
  [ "$(digests "$log.reference")" = "$(digests "$log")" ] ||
    { grep parameters "$log" "$log.reference"; fail "the restarted job's parameters ($log) differ from an uninterrupted run's"; }
}
resumed_as_uninterrupted restart.out 3
ok "rank on worker2 killed at step >= 10: worker2 cordoned, job restarted from step $resumed, parameters $(digests restart.out | cut -d' ' -f2) on all 3 ranks, as an uninterrupted run from that checkpoint"
# 5. worker2 (cordoned, the stand-in still mounted there) replaced alone.
pids() { for n in master worker1 worker2 worker3; do printf '%s=%s ' "$n" "$(cat "$STATE/hlth/nodes/$n/sshd.pid")"; done; }
before=$(pids)
ddl exec --cluster hlth -- touch /etc/ddl/before-replace >/dev/null || fail "marking the nodes"
ddl deploy hlth.yaml --replace worker2 -y >replace.log 2>&1 || { cat replace.log; fail "deploy --replace worker2"; }
after=$(pids)
for n in master worker1 worker3; do
  [ "$(tr ' ' '\n' <<<"$before" | grep "^$n=")" = "$(tr ' ' '\n' <<<"$after" | grep "^$n=")" ] || fail "$n's sshd changed: $before -> $after"
  expect_in replace.log "\[$n\] 0 change(s)" "Ansible changed $n"
done
[ "$(tr ' ' '\n' <<<"$before" | grep '^worker2=')" != "$(tr ' ' '\n' <<<"$after" | grep '^worker2=')" ] || fail "worker2's sshd is the old one"
ddl exec --cluster hlth -- 'test -e /etc/ddl/before-replace && echo kept || echo new' >marks.out || fail "reading the marks"
[ "$(grep -c kept marks.out)" = 3 ] && grep -q '^\[worker2\] new' marks.out || { cat marks.out; fail "only worker2 should be new"; }
ddl status hlth | grep -q cordoned && fail "worker2 still cordoned after its replacement"
ddl run --cluster hlth -- ddl-allreduce-test --size 16M -n 3 -w 1 --json >ar.out 2>&1 || { cat ar.out; fail "allreduce after the replacement"; }
python3 -c 'import json,sys; j=json.loads([l.split("] ",1)[1] for l in open(sys.argv[1]) if l.startswith("[0] {")][0]); assert j["ranks"] == 4 and j["wrong"] == 0, j' ar.out ||
  { cat ar.out; fail "allreduce across four not exact"; }
ddl doctor hlth >replaced.out 2>&1 || { cat replaced.out; fail "doctor after the replacement"; }
ok "deploy --replace worker2: only worker2 new (sshd $(tr ' ' '\n' <<<"$after" | grep '^worker2=')), others kept with 0 Ansible changes, 4-rank allreduce exact, doctor passes"
# 6. A healing run (issue 54): the fault planted on the new worker2 and its rank killed once; on the local
# target --on-node-fault defaults to replace: worker2 is made anew (deploy --replace's path) and the job
# resumes from its checkpoint on all four, ending as an uninterrupted run from that checkpoint.
ddl exec --cluster hlth --nodes worker2 -- mount --bind "$WORK/standin" /usr/local/sbin >/dev/null || fail "planting nvidia-smi on the new worker2"
before=$(pids)
t_heal=$SECONDS
killed_run heal.out --max-restarts 1 --restart-on node-fault
heal_s=$((SECONDS - t_heal))
expect_in heal.out "restarting (1 of 1): replacing worker2 (failing the health checks)" "no restart that replaces worker2"
expect_in heal.out "^ddl run: healing before restart 1: health checks [0-9.]* s, replacing worker2 [0-9.]* s$" "no healing figures"
after=$(pids)
for n in master worker1 worker3; do
  [ "$(tr ' ' '\n' <<<"$before" | grep "^$n=")" = "$(tr ' ' '\n' <<<"$after" | grep "^$n=")" ] || fail "$n's sshd changed by the healing run"
done
[ "$(tr ' ' '\n' <<<"$before" | grep '^worker2=')" != "$(tr ' ' '\n' <<<"$after" | grep '^worker2=')" ] || fail "worker2 was not replaced"
resumed_as_uninterrupted heal.out 4
ok "healing run: worker2 failed a check, replaced ($(grep -o 'health checks .*' heal.out)), job resumed from step $resumed on 4 ranks with an uninterrupted run's parameters; fault to end of run $heal_s s"
# 7. Shrinking: the same fault, --on-node-fault shrink --min-nodes 3: worker2 cordoned, the job goes on with
# 3 ranks from its checkpoint.
ddl exec --cluster hlth --nodes worker2 -- mount --bind "$WORK/standin" /usr/local/sbin >/dev/null || fail "planting nvidia-smi for shrink"
killed_run shrink.out --max-restarts 1 --restart-on node-fault --on-node-fault shrink --min-nodes 3 -np 4
expect_in shrink.out "restarting (1 of 1): cordoning worker2 (failing the health checks), going on with 3 node(s), 3 rank(s) instead of 4" "no shrink"
grep -q "^\[0\] resumed from step [0-9]* (restart 1)$" shrink.out || { cat shrink.out; fail "the shrunk job did not resume"; }
[ "$(digests shrink.out | wc -l)" = 1 ] && [ "$(digests shrink.out | cut -d' ' -f1)" = 3 ] ||
  { cat shrink.out; fail "the shrunk job's 3 ranks ended with different parameters"; }
ddl status hlth | grep -q "^worker2 .*cordoned" || { ddl status hlth; fail "worker2 not cordoned after shrink"; }
ok "shrink: worker2 cordoned, the job went on from its checkpoint with 3 ranks, equal parameters"
# 8. Spares: nodes.spares: 1 added to the spec, and a deploy makes worker4 a spare (running, no ranks). The
# fault planted on worker2 and its rank killed once: by default the ready spare takes worker2's place and the
# job resumes from its checkpoint on 4 ranks as an uninterrupted run would; worker2 is left a spare out of
# service.
ddl exec --cluster hlth --nodes worker2 -- umount /usr/local/sbin >/dev/null || fail "removing the stand-in"
ddl uncordon --cluster hlth worker2 >/dev/null || fail "uncordon worker2"
printf 'nodes:\n  spares: 1\n' >>hlth.yaml
ddl deploy hlth.yaml -y >spare-deploy.log 2>&1 || { cat spare-deploy.log; fail "deploy with nodes.spares: 1"; }
expect_in spare-deploy.log "worker4 is a spare: no ranks until a node fails" "the new node was not made a spare"
ddl status hlth >spare-status.out 2>&1 || { cat spare-status.out; fail "status with a spare"; }
grep -q "^worker4 .*\[spare: no ranks\]$" spare-status.out || { cat spare-status.out; fail "status does not mark worker4 a spare"; }
ddl hostfile --cluster hlth >spare-hf.out || fail "hostfile with a spare"
[ "$(grep -c slots= spare-hf.out)" = 4 ] && ! grep -q "$(addr worker4) " spare-hf.out || { cat spare-hf.out; fail "the spare is in the hostfile"; }
ddl exec --cluster hlth --nodes worker2 -- mount --bind "$WORK/standin" /usr/local/sbin >/dev/null || fail "planting nvidia-smi for the spare"
killed_run spare.out --max-restarts 1 --restart-on node-fault
expect_in spare.out "restarting (1 of 1): spare worker4 takes worker2's place (failing the health checks)" "no spare taken"
expect_in spare.out "^ddl run: healing before restart 1: health checks [0-9.]* s, worker4 in for worker2 [0-9.]* s$" "no healing figures"
resumed_as_uninterrupted spare.out 4
ddl status hlth >spare-status2.out 2>&1 || fail "status after the spare was taken"
grep -q "^worker2 .*\[spare, out of service: \`ddl deploy --replace worker2\` makes it a ready spare\]$" spare-status2.out &&
  ! grep -q "^worker4 .*spare" spare-status2.out || { cat spare-status2.out; fail "worker2 and worker4 did not trade places"; }
ok "spare: worker4 made a spare by deploy, took worker2's place ($(grep -o 'health checks .*' spare.out)); the job resumed from step $resumed on 4 ranks with an uninterrupted run's parameters"
ddl destroy -y hlth >/dev/null 2>&1 || fail destroy
assert_gone hlth
