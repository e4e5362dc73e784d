#!/usr/bin/env bash
# Faults on a node while ddl works with it:
#  - the node's sshd (and every session it serves) dies while ansible-playbook configures the cluster:
#    deploy fails naming the node; once provisioning has brought the node back, deploy converges;
#  - the node's link goes down during a long allreduce: `ddl run` stops with an error naming the rank
#    and host within a bounded time, and no process of the job is left on any node or here.
source "$(dirname "$0")/lib.sh"
spec flts 2 "  bandwidth: 1gbit" "runtime:" "  interface: eth0"
ddl deploy flts.yaml --only render >/dev/null 2>&1 || fail "render"
ddl deploy flts.yaml --only provision >/dev/null 2>&1 || fail "provision"
ddl deploy flts.yaml --only wait-ssh >/dev/null 2>&1 || fail "wait-ssh"

# 1. sshd of worker1 dies during configure.
ns=$(ddl status flts --output json | python3 -c 'import json,sys; print([n["netns"] for n in json.load(sys.stdin)["nodes"] if n["name"]=="worker1"][0])')
"$DDL" --state-dir "$STATE" deploy flts.yaml >c.log 2>&1 & pd=$!
for _ in $(seq 600); do pgrep -f "ansible-playbook -i $STATE/flts/" >/dev/null && break; sleep 0.05; done
pgrep -f "ansible-playbook -i $STATE/flts/" >/dev/null || { cat c.log; fail "ansible-playbook never started"; }
for _ in 1 2 3; do for p in $(ip netns pids "$ns"); do kill -KILL "$p" 2>/dev/null || true; done; sleep 0.1; done
set +e; wait $pd; rc=$?; set -e
[ $rc = 1 ] || { cat c.log; fail "deploy with a dead sshd: exit $rc, expected 1"; }
grep -q "configure" c.log && grep -q "worker1" c.log || { cat c.log; fail "failure does not name worker1"; }
grep -q "master" <(grep -i "unreachable\|failed" c.log) && { cat c.log; fail "master blamed too"; }
echo "  $(grep -m1 "worker1" c.log)"
ok "sshd killed during configure: deploy failed naming worker1"
# Resume: provisioning converges (restarts the missing sshd), then the pending phases run.
ddl deploy flts.yaml --only provision >p.log 2>&1 || { cat p.log; fail "re-provision"; }
ddl deploy flts.yaml >r.log 2>&1 || { cat r.log; fail "deploy after the node came back"; }
ddl exec --cluster flts -- true >/dev/null 2>&1 || fail "nodes after resume"
ok "deploy converged once worker1's sshd was back"

# 2. worker1's link goes down in the middle of a long allreduce.
veth=$(python3 -c 'import json,sys; print([n["veth_host"] for n in json.load(open(sys.argv[1]))["target_data"]["plan"]["nodes"] if n["name"]=="worker1"][0])' "$STATE/flts/state.json")
t0=$(date +%s)
"$DDL" --state-dir "$STATE" run --cluster flts -x DDL_TIMEOUT_S=10 -- ddl-allreduce-test -b 16M -e 16M -n 100000 -w 1 >ar.log 2>&1 & pr=$!
# Nodes share this machine's pid namespace: their processes are visible here (comm is cut to 15 bytes).
node_ns=$(ip netns list | awk '/^ddl-flts-/ {print $1}')
ranks() { for n in $node_ns; do ip netns pids "$n"; done | xargs -r ps -o comm= -p | grep -c '^ddl-allreduce-t' || true; }
for _ in $(seq 300); do [ "$(ranks)" -ge 2 ] && break; sleep 0.2; done
[ "$(ranks)" -ge 2 ] || { cat ar.log; fail "allreduce did not start on both nodes"; }
sleep 3
kill -0 $pr 2>/dev/null || { cat ar.log; fail "allreduce ended before the link went down"; }
ip link set "$veth" down
tdown=$(date +%s)
limit=90
for _ in $(seq $((limit * 10))); do kill -0 $pr 2>/dev/null || break; sleep 0.1; done
if kill -0 $pr 2>/dev/null; then kill -KILL $pr; ip link set "$veth" up; cat ar.log; fail "ddl run still running ${limit} s after the link went down"; fi
set +e; wait $pr; rc=$?; set -e
took=$(($(date +%s) - tdown))
[ $rc != 0 ] || { cat ar.log; fail "ddl run succeeded with a dead link"; }
expect_in ar.log "rank [01] on " "error does not name a rank and host"
echo "  $(grep -m1 "rank [01] on " ar.log)"
ip link set "$veth" up
wait_for 15 "the launcher processes here to end: launcher processes left here" eval '! pgrep -af "ddl.*run --cluster flts"'
for _ in $(seq 50); do [ "$(ranks)" = 0 ] && break; sleep 0.2; done
[ "$(ranks)" = 0 ] || fail "ranks left on the nodes: $(ranks)"
ok "link down during allreduce: ddl run exit $rc after ${took} s naming $(grep -o 'rank [01] on [^ :]*' ar.log | head -1), no processes left"
ddl exec --cluster flts -- true >/dev/null 2>&1 || fail "nodes after the link came back"
ddl destroy -y flts >/dev/null 2>&1 || fail destroy
assert_gone flts
