#!/usr/bin/env bash
# Target virtualwall as SLICES serves it (client: slices): ddl drives the `slices` CLI, here the stand-in
# tests/fakes/slices, whose resources are real local nodes (ddl-fake-nodes) behind the experiment's bastion.
# Refused before anything exists: a duration over SLICES's maximum (validate), the CLI not logged in, a
# flavor the site does not offer. Then a 3-node cluster: deploy (experiment, key, two `bi create`, wait
# until up) -> nodes reached through the bastion -> exact allreduce -> status shows the lease -> renew ->
# destroy (its resources gone). Then a 1-node cluster whose state folder is deleted is found and removed by
# `ddl gc --spec`.
source "$(dirname "$0")/lib.sh"
fakes="$DDL_SOURCE_DIR/tests/fakes"
export DDL_FAKE_NODES="${DDL_FAKE_NODES:-$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes}"
[ -x "$DDL_FAKE_NODES" ] || fail "missing $DDL_FAKE_NODES (build the tests/fakes tools)"
export SLICES_STANDIN_STATE="$WORK/slices" SLICES_STANDIN_LOG="$WORK/slices.log" HOME="$WORK/home"
mkdir -p "$HOME" bin && ln -s "$fakes/slices" bin/slices
export PATH="$WORK/bin:$PATH"
nodes_down() {
  for d in "$SLICES_STANDIN_STATE"/nodes/*/; do
    [ -d "$d" ] && "$DDL_FAKE_NODES" down --id "$(basename "$d")" --state-dir "$SLICES_STANDIN_STATE/nodes" >/dev/null 2>&1
  done
  return 0
}
trap 'rc=$?; set +e; nodes_down; (exit $rc); cleanup' EXIT

slspec() { # NAME WORKERS [extra virtualwall lines...]
  local name=$1 workers=$2; shift 2
  { printf 'apiVersion: ddl/v1\nname: %s\ntarget: virtualwall\nnodes:\n  master: {gpus: 0}\n' "$name"
    printf '  workers: {count: %s, gpus: 0}\nvirtualwall:\n  site: be-gent1-bi-vm1\n  flavor: medium\n' "$workers"
    printf '  image: "Ubuntu 22.04.5"\n  duration: 3h\n  project: ddltest\n'
    for l in "$@"; do printf '%s\n' "$l"; done; } >"$name.yaml"
  CLUSTERS+=("$name")
}
experiments() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["experiments"]))' "$SLICES_STANDIN_STATE/state.json" 2>/dev/null || echo 0; }
resources() { # EXPERIMENT: the names `slices bi list` shows
  slices bi --infra be-gent1-bi-vm1 list --experiment "$1" --format json | python3 -c 'import json,sys; print(" ".join(r["friendly_name"] for r in json.load(sys.stdin)))'
}

# Refused before anything is created, each naming the fix.
slspec sllong 1
sed -i 's/duration: 3h/duration: 100d/' sllong.yaml
rc=0; ddl validate sllong.yaml >v.log 2>&1 || rc=$?
expect_rc "$rc" 2 v.log "virtualwall.duration 100d is longer than SLICES Basic Infrastructure gives a resource (89d at most)" "duration over the maximum"
expect_in v.log "ddl renew --hours" "the fix for a long duration"
slspec sle2e 2
rc=0; ddl deploy sle2e.yaml >n.log 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "deploy without a SLICES login"
expect_in n.log "the SLICES CLI is not logged in .*run \`slices auth login\`" "not-logged-in refusal"
[ "$(experiments)" = 0 ] || fail "something was created without a login"
slices auth login >/dev/null && slices project use ddltest >/dev/null
slspec slflavor 1 "  site: be-gent1-bi-baremetal1"
sed -i '/site: be-gent1-bi-vm1/d' slflavor.yaml
rc=0; ddl deploy slflavor.yaml >f.log 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "deploy with a flavor the site does not offer"
expect_in f.log "SLICES site be-gent1-bi-baremetal1 has no flavor medium: pick one of \`slices bi --infra be-gent1-bi-baremetal1 flavor list\`" "unknown-flavor refusal"
[ "$(experiments)" = 0 ] || fail "something was created for an unknown flavor"
# The stand-in itself refuses what the service refuses.
rc=0; slices bi --infra be-gent1-bi-vm1 create x --experiment none --image "Ubuntu 22.04.5" --flavor medium --duration 90d 2>e.txt || rc=$?
expect_rc "$rc" 1 e.txt "exceeds the maximum of 89d" "the stand-in took a 90-day duration"
rc=0; slices bi --infra be-gent1-bi-vm1 create x --experiment none --image "Ubuntu 22.04.5" --flavor medium --duration 1h 2>e.txt || rc=$?
expect_rc "$rc" 1 e.txt "Experiment 'none' not found" "the stand-in made a resource without an experiment"
ok "refused before anything exists: a 100-day duration (validate), no login, an unknown flavor (pre-flight)"

ddl deploy sle2e.yaml >d.log 2>&1 || { cat d.log; cat slices.log; fail "deploy on SLICES BI"; }
for call in "auth show" "project show" "bi --infra be-gent1-bi-vm1 flavor list" "experiment create ddl-sle2e -d 3h -D ddl cluster sle2e, state folder $STATE/sle2e" \
            "pubkey register $STATE/sle2e/id_ed25519.pub" \
            "bi --infra be-gent1-bi-vm1 create ddl-sle2e-master --experiment ddl-sle2e --image Ubuntu 22.04.5 --flavor medium --duration 3h --count 1 --ssh-key-file $STATE/sle2e/id_ed25519.pub" \
            "bi --infra be-gent1-bi-vm1 create ddl-sle2e-w --experiment ddl-sle2e --image Ubuntu 22.04.5 --flavor medium --duration 3h --count 2 --ssh-key-file $STATE/sle2e/id_ed25519.pub"; do
  grep -qxF "$call" slices.log || { cat slices.log; fail "no call '$call'"; }
done
expect_in d.log "SLICES: master booting" "deploy did not wait for the resources to boot"
ddl status sle2e --output json >st.json
python3 - st.json <<'PY' || fail "nodes are not reached through the bastion"
import json, sys
nodes = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
assert sorted(nodes) == ["master", "worker1", "worker2"], nodes
for n in nodes.values():
    assert n["jump"].startswith("root@") and n["address"].startswith("172."), n
PY
ok "deploy: experiment, key, master and 2 workers asked for, waited for until up; every node behind the bastion"
ddl run --cluster sle2e -- ddl-allreduce-test -b 1M -e 1M -n 2 >ar.out 2>&1 || { cat ar.out; fail "allreduce"; }
expect_in ar.out "all results exact" "allreduce result"
ok "allreduce across the SLICES nodes exact"
st=$(ddl status sle2e)
grep -Eq "^lease ends [0-9T:-]+Z \(in 2h 5[0-9]m\)$" <<<"$st" || { echo "$st"; fail "status does not show the resources' expiry"; }
ddl renew sle2e --hours 30 >r.log 2>&1 || { cat r.log; fail "renew"; }
[ "$(grep -c "^bi --infra be-gent1-bi-vm1 extend ddl-sle2e-.* --experiment ddl-sle2e --duration 30h$" slices.log)" = 3 ] || { cat slices.log; fail "renew did not extend the 3 resources"; }
grep -Eq "^lease ends .* \(in 29h 5[0-9]m\)$" <<<"$(ddl status sle2e)" || fail "status after renew"
ok "status shows the lease; renew extends every resource ($(grep '^lease' <<<"$st"))"
# deploy --replace worker2 (issue 54): its resource (ddl-sle2e-w1) alone destroyed and made again under its
# name; the other nodes keep their files; the new node is reached through the bastion and takes ranks.
ddl exec --cluster sle2e -- touch /etc/ddl/before-replace >/dev/null || fail "marking the nodes"
ddl deploy -y sle2e.yaml --replace worker2 >rp.log 2>&1 || { cat rp.log; cat slices.log; fail "deploy --replace worker2 on SLICES"; }
grep -Eq "^bi --infra be-gent1-bi-vm1 destroy ddl-sle2e-w1 " slices.log || { cat slices.log; fail "--replace did not destroy ddl-sle2e-w1"; }
grep -qxF "bi --infra be-gent1-bi-vm1 create ddl-sle2e-w1 --experiment ddl-sle2e --image Ubuntu 22.04.5 --flavor medium --duration 3h --count 1 --ssh-key-file $STATE/sle2e/id_ed25519.pub" slices.log ||
  { cat slices.log; fail "--replace did not make ddl-sle2e-w1 again alone"; }
[ "$(grep -c "^bi --infra be-gent1-bi-vm1 destroy " slices.log)" = 1 ] || { cat slices.log; fail "--replace destroyed more than one resource"; }
ddl exec --cluster sle2e -- 'test -e /etc/ddl/before-replace && echo kept || echo new' >marks.out || fail "reading the marks"
[ "$(grep -c kept marks.out)" = 2 ] && grep -q '^\[worker2\] new' marks.out || { cat marks.out; fail "only worker2 should be new"; }
ddl run --cluster sle2e -- ddl-allreduce-test -b 1M -e 1M -n 2 >ar2.out 2>&1 || { cat ar2.out; fail "allreduce after --replace"; }
expect_in ar2.out "all results exact" "allreduce after --replace"
ok "deploy --replace worker2 on SLICES: ddl-sle2e-w1 alone destroyed and made again; the others kept; allreduce exact"
ddl destroy -y sle2e >x.log 2>&1 || { cat x.log; fail "destroy"; }
[ -z "$(resources ddl-sle2e)" ] || fail "resources left after destroy: $(resources ddl-sle2e)"
[ ! -e "$STATE/sle2e" ] || fail "state of sle2e left"
ok "destroy removed the cluster's resources"

# A cluster whose state folder is lost: `ddl gc --spec` finds its resources by name and experiment.
slspec slleak 0
ddl deploy slleak.yaml >l.log 2>&1 || { cat l.log; fail "deploy of the cluster to leak"; }
[ "$(resources ddl-slleak)" = ddl-slleak-master ] || fail "the cluster to leak has no resource"
rm -rf "${STATE:?}/slleak"
"$DDL" --state-dir "$WORK/other-state" gc --older-than 0s --prefix slleak --target none --spec slleak.yaml -y >g.log 2>&1 ||
  { cat g.log; fail "gc --spec"; }
expect_in g.log "gc: 1 destroyed, 0 failed" "gc --spec did not destroy the leaked cluster"
[ -z "$(resources ddl-slleak)" ] || fail "gc left $(resources ddl-slleak)"
ok "gc --spec found the cluster whose state folder is gone (the experiment's description names it) and removed it"
