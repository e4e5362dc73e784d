#!/usr/bin/env bash
# The cluster lock under real contention (test_guards.sh covers a lock held by a foreign process):
# a deploy killed while holding the lock leaves a stale lock file that the next command takes over;
# two deploys of one cluster started together: exactly one proceeds, the other refuses naming the
# holder's pid; destroy during a deploy refuses the same way; two different clusters deploy at once.
source "$(dirname "$0")/lib.sh"
use_ping_playbook # the roles are not what is tested here
spec fltl 2

# 1. Holder dies: SIGKILL at a point inside provisioning (DDL_TEST_KILL_AT), with the lock held.
rc=0; DDL_TEST_KILL_AT=provision:bridge "$DDL" --state-dir "$STATE" deploy fltl.yaml >k.log 2>&1 || rc=$?
[ $rc = 137 ] || { cat k.log; fail "deploy not killed at provision:bridge (exit $rc)"; }
grep -q "^pid [0-9]*: ddl deploy fltl.yaml" "$STATE/fltl/lock" || fail "lock file does not name the dead holder"
ddl deploy fltl.yaml >r.log 2>&1 || { cat r.log; fail "deploy after the holder died"; }
grep -q "another ddl command" r.log && fail "stale lock refused"
grep -q "^pid [0-9]*: ddl deploy fltl.yaml" "$STATE/fltl/lock" || fail "lock file not rewritten by the new holder"
ok "stale lock of a SIGKILLed holder taken over; deploy converged"
ddl destroy -y fltl >/dev/null 2>&1 || fail "destroy"
assert_gone fltl

# 2. Two deploys of one cluster at once, three rounds from nothing.
for round in 1 2 3; do
  "$DDL" --state-dir "$STATE" deploy fltl.yaml >a.log 2>&1 & pa=$!
  "$DDL" --state-dir "$STATE" deploy fltl.yaml >b.log 2>&1 & pb=$!
  ra=0; rb=0; wait $pa || ra=$?; wait $pb || rb=$?
  if [ $ra = 0 ] && [ $rb != 0 ]; then loser=b.log winner=$pa
  elif [ $rb = 0 ] && [ $ra != 0 ]; then loser=a.log winner=$pb
  else cat a.log b.log; fail "round $round: exits $ra and $rb, expected one 0 and one refusal"; fi
  expect_in $loser "cluster fltl: another ddl command is working on this cluster (pid $winner: ddl deploy fltl.yaml)" \
    "round $round: refusal does not name the holder (pid $winner)"
  ddl exec --cluster fltl -- true >/dev/null 2>&1 || fail "round $round: nodes after the winning deploy"
  # Destroy while a deploy holds the lock: refused, naming it; the deploy is unharmed.
  "$DDL" --state-dir "$STATE" deploy fltl.yaml --only configure --force-configure >c.log 2>&1 & pc=$!
  wait_for 30 "round $round: the configure deploy (pid $pc) to hold the lock" grep -q "^pid $pc:" "$STATE/fltl/lock"
  ddl --output json list >l.json || fail "round $round: ddl list during a deploy"
  python3 -c 'import json,sys; c = {r["name"]: r for r in json.load(open(sys.argv[1]))}["fltl"]
assert c["lock"] == "pid %s: ddl deploy fltl.yaml" % sys.argv[2], c' l.json "$pc" ||
    { cat l.json; fail "round $round: ddl list does not show the deploy holding the lock"; }
  if ddl destroy -y fltl >x.log 2>&1; then fail "round $round: destroy ran during a deploy"; fi
  expect_in x.log "another ddl command is working on this cluster (pid $pc: ddl deploy fltl.yaml)" \
    "round $round: destroy refusal does not name the deploy"
  wait $pc || { cat c.log; fail "round $round: deploy disturbed by the refused destroy"; }
  ddl destroy -y fltl >/dev/null 2>&1 || fail "round $round: destroy"
  assert_gone fltl
  ok "round $round: one deploy proceeded, the other refused naming pid $winner; destroy refused during deploy"
done

# 3. Two different clusters at once.
spec fltm 2
"$DDL" --state-dir "$STATE" deploy fltl.yaml >l.log 2>&1 & pl=$!
"$DDL" --state-dir "$STATE" deploy fltm.yaml >m.log 2>&1 & pm=$!
wait $pl || { cat l.log; fail "fltl beside fltm"; }
wait $pm || { cat m.log; fail "fltm beside fltl"; }
ddl exec --cluster fltl -- true >/dev/null 2>&1 && ddl exec --cluster fltm -- true >/dev/null 2>&1 ||
  fail "nodes of the two clusters"
"$DDL" --state-dir "$STATE" destroy -y fltl >/dev/null 2>&1 & pl=$!
"$DDL" --state-dir "$STATE" destroy -y fltm >/dev/null 2>&1 & pm=$!
wait $pl && wait $pm || fail "destroying both at once"
assert_gone fltl; assert_gone fltm
ok "two clusters deployed and destroyed at the same time"
