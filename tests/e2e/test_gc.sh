#!/usr/bin/env bash
# ddl gc destroys clusters left by earlier pipeline runs (name prefix, untouched for long enough)
# and nothing else.
source "$(dirname "$0")/lib.sh"
spec ci-old 1
spec ci-new 1
spec keep-me 1
for c in ci-old ci-new keep-me; do ddl deploy "$c.yaml" --only render >/dev/null 2>&1 || true; done
ddl deploy ci-old.yaml >o.log 2>&1 || { cat o.log; fail "deploy ci-old"; }
touch -d '2 days ago' "$STATE/ci-old/state.json" "$STATE/keep-me/state.json"
ddl gc --older-than 24h --prefix ci- --dry-run | grep -q "would destroy ci-old" || fail "dry run"
[ -e "$STATE/ci-old/state.json" ] || fail "dry run destroyed something"
ddl --output json gc --older-than 24h --prefix ci- --dry-run | python3 -c 'import json,sys; r = json.load(sys.stdin)
assert [(c["cluster"], c["outcome"]) for c in r["clusters"]] == [("ci-old", "would destroy")], r
assert r["clusters"][0]["idle_s"] >= 86400 and (r["destroyed"], r["failed"]) == (0, 0), r' || fail "gc --output json"
rc=0; ddl gc --older-than 24h --prefix ci- </dev/null >noy.out 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "would destroy 1 cluster(s): ci-old; there is no terminal" noy.out && grep -q "add -y" noy.out ||
  { cat noy.out; fail "gc without a terminal and without -y: exit $rc"; }
[ -e "$STATE/ci-old/state.json" ] || fail "gc without -y destroyed something"
ddl gc -y --older-than 24h --prefix ci- >gc.out || { cat gc.out; fail "gc"; }
expect_in gc.out "gc: 1 destroyed, 0 failed" "gc summary"
assert_gone ci-old
[ -e "$STATE/ci-new/state.json" ] || fail "gc destroyed a recent cluster"
[ -e "$STATE/keep-me/state.json" ] || fail "gc destroyed a cluster without the prefix"
set +e; ddl gc --older-than soon >/dev/null 2>&1; rc=$?; set -e
[ $rc = 2 ] || fail "bad --older-than exit $rc"
ok "gc destroys only old clusters with the prefix, with -y (refused without a terminal to ask on)"

# The state folder that deployed a cluster is gone (a CI job's container thrown away): gc from another,
# empty one still finds the cluster on the machine and removes it. A cluster whose state is in a third
# folder that still exists is named and left alone.
gone="$WORK/state-gone" kept="$WORK/state-kept" empty="$WORK/state-empty"
spec gcx-leak 2
spec gcx-kept 2
trap 'rc=$?; "$DDL" --state-dir "$kept" destroy -y gcx-kept >/dev/null 2>&1 || true; mkdir -p "$empty";
      "$DDL" --state-dir "$empty" gc -y --older-than 0s --prefix gcx- >/dev/null 2>&1 || true; (exit $rc); cleanup' EXIT
"$DDL" --state-dir "$gone" deploy gcx-leak.yaml >leak.log 2>&1 || { cat leak.log; fail "deploy gcx-leak"; }
"$DDL" --state-dir "$kept" deploy gcx-kept.yaml >kept.log 2>&1 || { cat kept.log; fail "deploy gcx-kept"; }
rm -rf "$gone"
mkdir -p "$empty"
"$DDL" --state-dir "$empty" gc --dry-run --older-than 0s --prefix gcx- >dry.out 2>dry.err || { cat dry.out dry.err; fail "gc --dry-run from an empty state folder"; }
grep -q "would destroy gcx-leak (found on target local, created 0 h ago: 2 namespace node(s) on this machine; its state folder $gone/gcx-leak is gone)" dry.out ||
  { cat dry.out dry.err; fail "gc from an empty state folder does not find the leaked cluster"; }
expect_in dry.err "not touched: gcx-kept (local: its state is in $kept/gcx-kept)" "gc does not name the cluster managed elsewhere"
! grep -q "gcx-kept" dry.out || { cat dry.out; fail "gc would destroy a cluster whose state folder exists"; }
ip netns list | grep -q "^ddl-gcx-leak-master" || fail "the dry run removed something"
"$DDL" --state-dir "$empty" --output json gc -y --older-than 0s --prefix gcx- >gcx.json 2>gcx.err || { cat gcx.err; fail "gc -y from an empty state folder"; }
python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))
assert [(c["cluster"], c["source"], c["outcome"]) for c in r["clusters"]] == [("gcx-leak", "local", "destroyed")], r' gcx.json ||
  { cat gcx.json gcx.err; fail "gc --output json from an empty state folder"; }
! ip netns list | grep -q "^ddl-gcx-leak-" || fail "namespaces of the leaked cluster left"
ip netns list | grep -q "^ddl-gcx-kept-master" || fail "gc removed the cluster whose state folder exists"
ls /run/ddl/local/users | grep -q "^gcx-leak\." && fail "the machine's record of the leaked cluster left"
"$DDL" --state-dir "$empty" gc -y --older-than 0s --prefix gcx- | grep -q "gc: 0 destroyed, 0 failed" || fail "a second gc found something"
"$DDL" --state-dir "$kept" destroy -y gcx-kept >/dev/null 2>&1 || fail "destroy gcx-kept"
rc=0; "$DDL" --state-dir "$empty" gc --target openstack >bad.out 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "cannot ask openstack for its clusters without a spec" bad.out || { cat bad.out; fail "gc --target openstack: exit $rc"; }
ok "gc from an empty state folder finds a leaked local cluster on the machine and removes it; one managed elsewhere is left"
