#!/usr/bin/env bash
# The bundled runtime across a deployed 4-node cluster over SSH: the configure phase installs it on
# every node; ddl run gives every rank the environment contract, an exact allreduce, a training run
# whose replicas stay identical; a failing or killed rank stops the job and is named.
source "$(dirname "$0")/lib.sh"
spec rt 4 "  bandwidth: 1gbit" "runtime:" "  interface: eth0"
ddl deploy rt.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
ddl exec --cluster rt -- test -x /opt/ddl/bin/ddl-allreduce-test || fail "runtime not installed on every node"
ok "runtime installed by the configure phase"

ddl run --cluster rt -- sh -c 'echo "$DDL_RANK/$DDL_SIZE $RANK/$WORLD_SIZE $LOCAL_RANK $MASTER_ADDR:$MASTER_PORT $NCCL_SOCKET_IFNAME $(hostname)"' >env.out
sort env.out >env.sorted
master=$(ddl status rt --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["address"])')
expected=$(printf '[0] 0/4 0/4 0 %s:29500 eth0 master\n[1] 1/4 1/4 0 %s:29500 eth0 worker1\n[2] 2/4 2/4 0 %s:29500 eth0 worker2\n[3] 3/4 3/4 0 %s:29500 eth0 worker3' "$master" "$master" "$master" "$master")
[ "$(cat env.sorted)" = "$expected" ] || { cat env.sorted; fail "environment contract"; }
ok "rank environment"

ddl run --cluster rt -- ddl-allreduce-test -b 4 -e 4M -f 8 -n 3 -w 1 >ar.out 2>&1 || { cat ar.out; fail "allreduce"; }
expect_in ar.out "^\[0\] # all results exact" "allreduce result"
ok "allreduce across 4 nodes exact"
ddl bench allreduce --cluster rt --sizes 64KiB:1MiB --iters 2 --format json >bench.json || fail "bench allreduce"
python3 - bench.json <<'PY' || fail "bench allreduce result"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ranks"] == 4 and j["wrong"] == 0 and j["link_gbit"] == 1.0 and j["buffers"] == "host", j
sizes = [r["size"] for r in j["results"]]
assert sizes == [65536, 131072, 262144, 524288, 1048576], sizes
for r in j["results"]:
    assert r["busbw"] > 0 and abs(r["busbw"] - r["algbw"] * 1.5) < 1e-3 and r["limit_busbw"] == 0.125, r
PY
ddl bench allreduce --cluster rt --sizes 1MiB:1MiB --iters 1 --format csv >bench.csv || fail "bench csv"
head -1 bench.csv | grep -q '^size_bytes,time_us,algbw_gbs,busbw_gbs' || { cat bench.csv; fail "bench csv header"; }
ok "ddl bench allreduce: json and csv with the link limit"
ddl bench train --cluster rt --model-profile custom:100000,2000,300 --batch 8,16 --nodes 1,2,4 --steps 2 --warmup 1 \
  --bandwidths 100mbit,1gbit --out bt >bt.out 2>&1 || { cat bt.out; fail "bench train"; }
[ "$(tail -n +2 bt/train.csv | wc -l)" = 12 ] || { cat bt/train.csv; fail "bench train rows"; }
python3 - bt/train.json <<'PY' || fail "bench train results"
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert {r["bandwidth"] for r in rows} == {"100mbit", "1gbit"}, rows
assert all(r["efficiency"] == 1.0 for r in rows if r["nodes"] == 1), rows
assert all(r["ranks"] == r["nodes"] and r["samples_per_s"] > 0 for r in rows), rows
PY
[ -s bt/train.png ] || fail "no chart"
# This cluster's own links: a dump of every link on the machine breaks off when another suite deletes one.
restored=0
for l in $(ip -o link show | grep -o "ddl[^:@ ]*$(link_tag rt)[^:@ ]*" | sort -u); do
  tc qdisc show dev "$l" | grep -q "tbf.*rate 1Gbit" && restored=$((restored + 1))
done
[ $restored -gt 0 ] || { ip -o link show | grep "$(link_tag rt)"; fail "links not restored to the spec's bandwidth"; }
ok "ddl bench train: sweep over nodes, batch and bandwidth; CSV, JSON, PNG; links restored"

ddl run --cluster rt -- mlp_trainer --steps 15 --checksum >tr.out 2>&1 || { cat tr.out; fail "trainer"; }
check_trainer tr.out 4
ok "training: loss $first -> $last, replicas identical every step"

set +e
ddl run --cluster rt -- sh -c 'if [ "$DDL_RANK" = 2 ]; then exit 3; fi; sleep 60' >fail.out 2>&1; rc=$?
set -e
[ $rc = 1 ] || fail "failing rank: exit $rc"
expect_in fail.out "rank 2 on .* exited with status 3" "failing rank not named"
ok "a failing rank stops the job and is named"

"$DDL" --state-dir "$STATE" run --cluster rt -- ddl-allreduce-test --size 256M -n 50 -w 0 >kill.out 2>&1 &
run_pid=$!
victim=""
for _ in $(seq 300); do
  victim=$( (ip netns pids ddl-rt-worker2 | while read -r p; do [ "$(cat /proc/$p/comm 2>/dev/null)" = ddl-allreduce-t ] && echo "$p"; done) 2>/dev/null | head -1 || true)
  [ -n "$victim" ] && break; sleep 0.05
done
[ -n "$victim" ] || fail "rank 2 never started"
sleep 1
kill -KILL "$victim"
set +e
wait "$run_pid"; rc=$?
set -e
[ $rc != 0 ] || fail "job survived a killed rank"
expect_in kill.out "rank 2 on .* killed by signal 9" "killed rank not named"
# The allreduce ranks running on the 4 nodes (which share this machine's pid namespace).
rt_ranks() { (for n in master worker1 worker2 worker3; do ip netns pids ddl-rt-$n; done | while read -r p; do cat /proc/$p/comm 2>/dev/null || true; done) | grep -c ddl-allreduce || true; }
leftover=$(rt_ranks)
[ "$leftover" = 0 ] || fail "$leftover ranks left running"
ok "SIGKILL of rank 2 mid-allreduce stops every rank, named in the error"
# A silent link: worker2's cable pulled mid-allreduce; every rank must give up within the timeout.
"$DDL" --state-dir "$STATE" run --cluster rt -x DDL_TIMEOUT_S=5 -- ddl-allreduce-test --size 256M -n 50 -w 0 >link.out 2>&1 &
run_pid=$!
# Mid-allreduce: a second after all 4 ranks run (not a fixed time from the start, which a slow start outlasts).
wait_for 60 "the allreduce's 4 ranks to start" eval '[ "$(rt_ranks)" -ge 4 ]'
sleep 1
veth=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["target_data"]["plan"]; print([n["veth_host"] for n in p["nodes"] if n["name"]=="worker2"][0])' "$STATE/rt/state.json")
ip link set "$veth" down
set +e
wait "$run_pid"; rc=$?
set -e
ip link set "$veth" up
[ $rc != 0 ] || fail "job survived a dead link"
grep -qiE "timed out|no progress|timeout" link.out || { tail -20 link.out; fail "dead link not reported as a timeout"; }
ok "a dead link ends the job with a timeout error"

# SIGTERM to ddl run reaches every rank.
"$DDL" --state-dir "$STATE" run --cluster rt -- sh -c 'trap "echo got TERM; exit 7" TERM; echo "trap set"; while :; do sleep 0.1; done' >term.out 2>&1 &
run_pid=$!
# The signal comes once every rank has set its trap (a fixed wait lost that race on a slow machine).
wait_for 60 "all 4 ranks to set their TERM trap" eval '[ "$(grep -c "trap set$" term.out)" = 4 ]'
kill -TERM "$run_pid"
set +e
wait "$run_pid"; rc=$?
set -e
[ $rc != 0 ] || fail "ddl run exited 0 after SIGTERM"
[ "$(grep -c 'got TERM' term.out)" = 4 ] || { cat term.out; fail "SIGTERM not forwarded to every rank"; }
ok "SIGTERM forwarded to all 4 ranks"
ddl destroy -y rt >/dev/null 2>&1 || fail destroy
assert_gone rt
