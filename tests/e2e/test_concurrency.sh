#!/usr/bin/env bash
# The cluster lock under real contention (test_guards.sh covers a lock held by a foreign process):
# a deploy killed while holding the lock leaves a stale lock file that the next command takes over;
# two deploys of one cluster started together: exactly one proceeds, the other refuses naming the
# holder's pid; destroy during a deploy refuses the same way; two different clusters deploy at once; two on
# one subnet started together: one deploys, the other is refused before it makes anything; two names whose
# link tags collide deploy side by side, and destroying one leaves the other reachable.
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

# 4. Two clusters on one subnet, started together (3 rounds): the subnet check and the claim are one step
#    under the machine-wide lock, so one deploys and the other is refused before it makes or pins anything.
spec sna 2 "  subnet: 10.237.5.0/24"; spec snb 2 "  subnet: 10.237.5.0/24"
for round in 1 2 3; do
  "$DDL" --state-dir "$STATE" deploy sna.yaml >sa.log 2>&1 & pa=$!
  "$DDL" --state-dir "$STATE" deploy snb.yaml >sb.log 2>&1 & pb=$!
  ra=0; rb=0; wait $pa || ra=$?; wait $pb || rb=$?
  if [ $ra = 0 ] && [ $rb != 0 ]; then won=sna lost=snb log=sb.log
  elif [ $rb = 0 ] && [ $ra != 0 ]; then won=snb lost=sna log=sa.log
  else cat sa.log sb.log; fail "round $round: exits $ra and $rb, expected one deploy and one refusal"; fi
  expect_in $log "local.subnet 10.237.5.0/24 overlaps 10.237.5.0/24 of the local cluster $won" \
    "round $round: the loser's refusal does not name the winner's subnet"
  ip netns list | grep -q "^ddl-$lost-" && fail "round $round: the refused $lost made namespaces"
  [ -s "$STATE/$lost/known_hosts" ] && fail "round $round: the refused $lost pinned host keys"
  ddl exec --cluster $won -- true >/dev/null 2>&1 || fail "round $round: nodes of $won"
  ddl destroy -y $won >/dev/null 2>&1 || fail "round $round: destroy $won"
  # A refused deploy may leave its state folder (it recorded no plan: its destroy touches no link).
  if [ -e "$STATE/$lost" ]; then ddl destroy -y $lost >/dev/null 2>&1 || fail "round $round: destroy the refused $lost"; fi
  assert_gone $won; assert_gone $lost
  ok "round $round: $won deployed, $lost refused on the shared subnet before making anything"
done

# 5. rt-c6481 and rt-c15740 share their 24-bit link tag (1a8e26, FNV-1a of the name): the second gets
#    another tag, both work side by side, and destroying the second leaves the first reachable.
spec rt-c6481 2; spec rt-c15740 2
ddl deploy rt-c6481.yaml >t1.log 2>&1 || { cat t1.log; fail "rt-c6481"; }
ddl deploy rt-c15740.yaml >t2.log 2>&1 || { cat t2.log; fail "rt-c15740 beside rt-c6481 (one link tag)"; }
bridge() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target_data"]["plan"]["bridge"])' "$STATE/$1/state.json"; }
b1=$(bridge rt-c6481); b2=$(bridge rt-c15740)
[ "$b1" = ddlbr-1a8e26 ] || fail "rt-c6481's bridge is $b1, not the tag of its name"
[ "$b1" != "$b2" ] || fail "both clusters on bridge $b1"
ip link show dev "$b2" >/dev/null 2>&1 || fail "rt-c15740's bridge $b2 missing"
ddl exec --cluster rt-c6481 -- true >/dev/null 2>&1 && ddl exec --cluster rt-c15740 -- true >/dev/null 2>&1 ||
  fail "nodes of the two clusters whose names share a tag"
ddl destroy -y rt-c15740 >/dev/null 2>&1 || fail "destroy rt-c15740"
assert_gone rt-c15740 "${b2#ddlbr-}" # its links carry its salted tag; the name's own is rt-c6481's
ip link show dev "$b1" >/dev/null 2>&1 || fail "destroying rt-c15740 removed rt-c6481's bridge $b1"
ddl exec --cluster rt-c6481 -- true >/dev/null 2>&1 || fail "rt-c6481 unreachable after rt-c15740's destroy"
ddl destroy -y rt-c6481 >/dev/null 2>&1 || fail "destroy rt-c6481"
assert_gone rt-c6481
ok "two names with one link tag: separate bridges, and one's destroy leaves the other reachable"
