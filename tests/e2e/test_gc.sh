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
grep -q "gc: 1 destroyed, 0 failed" gc.out || { cat gc.out; fail "gc summary"; }
assert_gone ci-old
[ -e "$STATE/ci-new/state.json" ] || fail "gc destroyed a recent cluster"
[ -e "$STATE/keep-me/state.json" ] || fail "gc destroyed a cluster without the prefix"
set +e; ddl gc --older-than soon >/dev/null 2>&1; rc=$?; set -e
[ $rc = 2 ] || fail "bad --older-than exit $rc"
ok "gc destroys only old clusters with the prefix, with -y (refused without a terminal to ask on)"
