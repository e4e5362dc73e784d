#!/usr/bin/env bash
# The state folder on a full file system (a 16 MiB tmpfs, filled up): every command that must write reports
# "No space left on device" with the path, state.json keeps its previous content byte for byte, no
# temp file of the failed atomic write is left, and after space is freed deploy converges. The namespace
# nodes' /etc/ddl and /opt/ddl are folders of the state folder too: what ddl writes on the nodes (the
# runtime, node.env, the hostfiles) meets the same full disk, and leaves no temp file either.
source "$(dirname "$0")/lib.sh"
use_ping_playbook # the roles are not what is tested here
STATE="$WORK/small"
mkdir -p "$STATE"
mount -t tmpfs -o size=16m,mode=0700 ddl-flt-tmpfs "$STATE" # the runtime on 2 nodes: 2 x 1.6 MiB, 2 x that while unpacking
# lib.sh's cleanup destroys the clusters; the tmpfs goes after that.
trap 'rc=$?; for c in "${CLUSTERS[@]}"; do "$DDL" --state-dir "$STATE" destroy -y "$c" >/dev/null 2>&1 || true; done
      umount "$STATE" 2>/dev/null || umount -l "$STATE"; rm -rf "$WORK"; exit $rc' EXIT
spec fltd 2
fill() { dd if=/dev/zero of="$STATE/fill" bs=4k >/dev/null 2>&1 || true; }
no_temp_files() {
  local left; left=$(find "$STATE" -name '.*.tmp??????' -o -name '*.tmp' -o -name '*.ddl-tmp' | grep -v "^$STATE/fill$" || true)
  [ -z "$left" ] || fail "half-written files left after $1: $left"
}
tries=0

# 1. Full before provisioning: the plan cannot be recorded, so nothing may be created.
ddl deploy fltd.yaml --only render >r.log 2>&1 || { cat r.log; fail "render"; }
cp "$STATE/fltd/state.json" before.json
fill
set +e; ddl deploy fltd.yaml >d1.log 2>&1; rc=$?; set -e
[ $rc = 1 ] || { cat d1.log; fail "deploy on a full disk: exit $rc, expected 1"; }
expect_in d1.log "No space left on device" "no clear error"
expect_in d1.log "$STATE/fltd" "error does not name the state folder"
cmp -s before.json "$STATE/fltd/state.json" || fail "state.json changed by the failed deploy"
no_temp_files "deploy on a full disk"
ip netns list | grep -q '^ddl-fltd-' && fail "namespaces created although the plan could not be saved"
echo "  message: $(grep -m1 "No space" d1.log)"
tries=$((tries + 1)); ok "full disk before provision: clear error, state.json intact, nothing created"

# 2. Full in the middle of a deploy: fill the disk while provisioning runs.
rm -f "$STATE/fill"
ddl deploy fltd.yaml --only provision >p.log 2>&1 || { cat p.log; fail "provision"; }
cp "$STATE/fltd/state.json" before.json
fill
for phase in wait-ssh configure probe hostfile; do
  set +e; ddl deploy fltd.yaml >d2.log 2>&1; rc=$?; set -e
  [ $rc != 0 ] || fail "deploy succeeded on a full disk (up to $phase)"
  expect_in d2.log "No space left on device\|cannot" "no clear error ($phase)"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$STATE/fltd/state.json" || fail "state.json corrupt"
  no_temp_files "deploy on a full disk ($phase)"
  tries=$((tries + 1))
  # Make room for exactly one more phase to pass, so that the next try fails further on.
  rm -f "$STATE/fill"; ddl deploy fltd.yaml --only "$phase" >/dev/null 2>&1 || true; fill
done
ok "full disk at each later phase: clear errors, state.json whole, no temp files"

# 3. Other writers on the full disk.
set +e; ddl destroy -y fltd >x.log 2>&1; rc=$?; set -e
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$STATE/fltd/state.json" 2>/dev/null ||
  [ ! -e "$STATE/fltd" ] || fail "state.json corrupt after destroy on a full disk"
no_temp_files "destroy on a full disk"
tries=$((tries + 1))
fill # the destroy freed what the cluster used
set +e; ddl init --name fltd -o "$STATE/init.yaml" >i.log 2>&1; rc=$?; set -e
expect_rc "$rc" 1 i.log "No space left on device" "init on a full disk"
[ -e "$STATE/init.yaml" ] && fail "init left a partial file"
no_temp_files "init on a full disk"
tries=$((tries + 1))
ok "destroy and init on a full disk: clear errors, nothing half-written"

# 4. Space back: deploy converges, destroy leaves nothing.
rm -f "$STATE/fill"
ddl deploy fltd.yaml >d3.log 2>&1 || { cat d3.log; fail "deploy after freeing space"; }
ddl exec --cluster fltd -- true >/dev/null 2>&1 || fail "nodes after freeing space"
ddl destroy -y fltd >/dev/null 2>&1 || fail "destroy"
assert_gone fltd
echo "disk full: $tries commands on a full state folder, all failed cleanly; deploy converged after"
