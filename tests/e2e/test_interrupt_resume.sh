#!/usr/bin/env bash
# A deploy interrupted by Ctrl-C (SIGINT: exit 130, as the exit-code table says; SIGTERM takes the same
# path), then one killed by SIGKILL, leave a consistent state; the next deploy completes and destroy
# cleans up.
source "$(dirname "$0")/lib.sh"
spec intr 3
for sig in INT KILL; do
  "$DDL" --state-dir "$STATE" deploy intr.yaml >"d-$sig.log" 2>&1 &
  pid=$!
  # Stop it in the middle of provisioning: as soon as the first namespace exists.
  WAIT_EVERY=0.01 wait_for 60 "the deploy to record its state and make its first namespace" \
    eval '[ -e "$STATE/intr/state.json" ] && ip netns list | grep -q "^ddl-intr-"'
  kill -s "$sig" "$pid" || true
  rc=0; wait "$pid" || rc=$?
  [ "$rc" != 0 ] || fail "deploy finished despite SIG$sig"
  if [ "$sig" = INT ]; then
    expect_rc "$rc" 130 "d-$sig.log" "interrupted.*\`ddl deploy\` resumes from here" "Ctrl-C in deploy"
  fi
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$STATE/intr/state.json" || fail "state corrupt after SIG$sig"
  ok "state consistent after SIG$sig"
  if [ "$sig" = INT ]; then
    "$DDL" --state-dir "$STATE" smoke-test --cluster intr >"s-$sig.log" 2>&1 && fail "smoke-test --cluster ran on a half-deployed cluster"
    expect_in "s-$sig.log" "cluster intr is not fully deployed (phase .* has not finished): run \`ddl deploy\` first" \
      "smoke-test --cluster on a half-deployed cluster: no reason"
    ok "smoke-test --cluster refuses a half-deployed cluster, naming the fix"
  fi
  ddl deploy intr.yaml >"r-$sig.log" 2>&1 || { cat "r-$sig.log"; fail "resume after SIG$sig"; }
  ddl exec --cluster intr -- true >/dev/null || fail "nodes after resume"
  ok "resumed after SIG$sig"
  ddl destroy -y intr >/dev/null 2>&1 || fail "destroy"
  assert_gone intr
done
ok "destroy after interrupted deploys"

# A deploy killed inside `ip netns add` leaves /run/netns/NAME with no namespace mounted on it (every
# `ip -n NAME` then fails with "Invalid argument"); the next deploy makes it again.
mkdir -p /run/netns && touch /run/netns/ddl-intr-worker1
ip -n ddl-intr-worker1 link show lo >/dev/null 2>&1 && fail "the planted namespace name is usable"
ddl deploy intr.yaml >r-half.log 2>&1 || { cat r-half.log; fail "deploy over a half-made namespace"; }
ddl exec --cluster intr -- true >/dev/null || fail "nodes after a half-made namespace"
ddl destroy -y intr >/dev/null 2>&1 || fail "destroy"
assert_gone intr
ok "a namespace name left without its namespace is made again"
