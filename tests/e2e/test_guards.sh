#!/usr/bin/env bash
# Refusals that must happen before anything is created: not root, a second command on a locked
# cluster, an invalid spec. Two clusters with different names coexist. A state folder moved while its
# nodes run: deploy from the new place refuses, naming both places; destroy there removes the nodes.
source "$(dirname "$0")/lib.sh"
spec guard 2
chmod 755 "$WORK"; mkdir -p "$STATE"; chmod 777 "$STATE"
if setpriv --reuid=65534 --regid=65534 --clear-groups "$DDL" --state-dir "$STATE" deploy guard.yaml >nr.log 2>&1; then
  fail "deploy as non-root succeeded"
fi
expect_in nr.log "target local needs root" "non-root message"
ip netns list | grep -q '^ddl-guard-' && fail "non-root deploy created namespaces"
ok "non-root refused before creating anything"
rm -rf "$STATE/guard"
mkdir -p "$STATE/guard"
exec 9>"$STATE/guard/lock"
flock -n 9
echo "pid 1: test holder" >&9
if ddl deploy guard.yaml >lk.log 2>&1; then fail "deploy ran on a locked cluster"; fi
expect_in lk.log "another ddl command is working on this cluster" "lock message"
exec 9>&-
ok "lock refuses a second command"
printf 'apiVersion: ddl/v1\nname: Bad\ntarget: local\n' >bad.yaml
set +e; ddl deploy bad.yaml >bad.log 2>&1; rc=$?; set -e
[ $rc = 2 ] || fail "invalid spec exit $rc"
expect_in bad.log "bad.yaml:2:7: error: name must be DNS-safe" "diagnostic"
ok "invalid spec refused with exit 2"
spec other 1
ddl deploy guard.yaml >g.log 2>&1 || { cat g.log; fail "deploy guard"; }
ddl deploy other.yaml >o.log 2>&1 || { cat o.log; fail "deploy other"; }
ddl exec --cluster guard -- true >/dev/null && ddl exec --cluster other -- true >/dev/null || fail "coexisting clusters"
ok "two clusters coexist"
ddl destroy -y guard >/dev/null 2>&1 && ddl destroy -y other >/dev/null 2>&1 || fail destroy
assert_gone guard; assert_gone other

# A state folder moved while its nodes run (mv .ddl elsewhere): their sshd read keys under the old place.
spec mvd 2
ddl deploy mvd.yaml >mv1.log 2>&1 || { cat mv1.log; fail "deploy mvd"; }
mv "$STATE" "$WORK/elsewhere"
if "$DDL" --state-dir "$WORK/elsewhere" deploy mvd.yaml >mv2.log 2>&1; then fail "deploy from a moved state folder"; fi
expect_in mv2.log "cluster mvd: its state folder was moved from $STATE to $WORK/elsewhere while its nodes run" \
  "moved-folder refusal does not name both places"
expect_in mv2.log "mv $WORK/elsewhere $STATE" "moved-folder hint does not say how to move it back"
grep -q "gc --older-than" mv2.log && fail "moved-folder hint suggests a machine-wide gc"
"$DDL" --state-dir "$WORK/elsewhere" destroy -y mvd >mv3.log 2>&1 || { cat mv3.log; fail "destroy from the moved folder"; }
expect_in mv3.log "cluster mvd destroyed" "destroy from the moved folder"
if ip netns list | grep -q "^ddl-mvd-"; then fail "namespaces of mvd left after destroy: $(ip netns list | grep ddl-mvd-)"; fi
pgrep -f "$STATE/mvd/nodes/" >/dev/null && fail "an sshd of mvd still runs after destroy: $(pgrep -af "$STATE/mvd/nodes/")"
[ -e "$WORK/elsewhere/mvd" ] && fail "the moved state folder of mvd left"
ls /run/ddl/local/users 2>/dev/null | grep -q "^mvd\." && fail "the registry record of mvd left"
mv "$WORK/elsewhere" "$STATE"
ok "moved state folder: deploy refused naming both places; destroy from there removed the nodes"
