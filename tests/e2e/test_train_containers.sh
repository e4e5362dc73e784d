#!/usr/bin/env bash
# Training containers (runtime.image) on local namespace nodes with podman: one container per node in
# that node's network namespace, seeing that node's private /opt/ddl; `ddl run --container` runs the
# allreduce test (exact) and the example trainer across 4 node containers; `ddl exec --container`;
# a second configure changes nothing; a changed image replaces the containers; a container killed
# mid-run stops the job naming its rank; destroy removes every container of the cluster.
source "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || fail "podman missing (scripts/install-deps.sh installs it)"
SRC=${DDL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
P=(podman --runtime runc)
IMG=localhost/ddl-train:bookworm-1
IMG2=localhost/ddl-train-tc:changed

# The training image: the local node image plus OpenBLAS (scripts/make-local-training-image.sh). The
# node image itself is made by the first container-node deploy on this machine.
rc=0; "$SRC/scripts/make-local-training-image.sh" "$IMG" >img.log 2>&1 || rc=$?
if [ $rc = 2 ]; then
  spec tc-img 1 "  nodes_as: containers"
  ddl deploy tc-img.yaml >img-deploy.log 2>&1 || { cat img-deploy.log; fail "building the node image"; }
  ddl destroy -y tc-img >/dev/null 2>&1 || fail "destroy tc-img"
  rc=0; "$SRC/scripts/make-local-training-image.sh" "$IMG" >img.log 2>&1 || rc=$?
fi
[ $rc = 0 ] || { cat img.log; fail "making the training image"; }
cleanup_image() { "${P[@]}" rmi --force "$IMG2" >/dev/null 2>&1 || true; }
trap 'cleanup_image; cleanup' EXIT

spec tc-run 4 "runtime:" "  image: $IMG" "  container_engine: podman"
ddl deploy tc-run.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
nodes="master worker1 worker2 worker3"
names=$("${P[@]}" ps --filter label=ddl.training=tc-run --format '{{.Names}}' | sort | tr '\n' ' ')
[ "$names" = "ddl-train-tc-run-master ddl-train-tc-run-worker1 ddl-train-tc-run-worker2 ddl-train-tc-run-worker3 " ] ||
  fail "one running container per node ($names)"
for n in $nodes; do
  pid=$("${P[@]}" inspect --format '{{.State.Pid}}' "ddl-train-tc-run-$n")
  want=$(python3 -c 'import json,sys; print([x["netns"] for x in json.load(open(sys.argv[1]))["nodes"] if x["name"]==sys.argv[2]][0])' "$STATE/tc-run/state.json" "$n")
  [ "$(ip netns identify "$pid")" = "$want" ] || fail "container of $n is not in $want ($(ip netns identify "$pid"))"
done
ok "deploy: one training container per node, each in its node's network namespace"

# Each node's private /opt/ddl (a tmpfs in the node's mount namespace) is what its container sees.
for n in $nodes; do ddl exec --cluster tc-run --nodes "$n" -- sh -c "echo $n >/opt/ddl/tc-marker" >/dev/null; done
got=$(ddl exec --container --cluster tc-run -- cat /opt/ddl/tc-marker | sort | tr '\n' ' ')
[ "$got" = "[master] master [worker1] worker1 [worker2] worker2 [worker3] worker3 " ] || fail "/opt/ddl in containers: $got"
# Host network: the container has its node's address and no other cluster address.
for n in master worker2; do
  addr=$(python3 -c 'import json,sys; print([x["address"] for x in json.load(open(sys.argv[1]))["nodes"] if x["name"]==sys.argv[2]][0])' "$STATE/tc-run/state.json" "$n")
  seen=$(ddl exec --container --cluster tc-run --nodes "$n" -- hostname -I | sed 's/^\[[^]]*\] //')
  [ "$(echo $seen)" = "$addr" ] || fail "addresses in $n's container: '$seen', node has $addr"
done
ddl exec --container --cluster tc-run --nodes worker1 -- sh -c 'test -w /opt/ddl' >/dev/null 2>&1 && fail "/opt/ddl writable in the container"
[ "$(ddl exec --container --cluster tc-run --nodes worker1 -- sh -c 'ulimit -s' | tail -1)" = "[worker1] 65536" ] || fail "stack ulimit"
ok "exec --container: each container sees its node's /opt/ddl (read-only) and address; stack 64 MiB"

ddl run --container --cluster tc-run -- ddl-allreduce-test -b 4 -e 1M -f 4 -n 2 -w 1 >ar.out 2>&1 || { cat ar.out; fail "allreduce"; }
expect_in ar.out "^\[0\] # all results exact" "allreduce result"
ddl run --container --cluster tc-run -- sh -c 'echo "$DDL_RANK/$WORLD_SIZE $MASTER_ADDR:$MASTER_PORT $(cat /proc/1/cmdline | tr "\0" " ")"' >env.out 2>&1 || { cat env.out; fail "env"; }
master=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"][0]["address"])' "$STATE/tc-run/state.json")
for r in 0 1 2 3; do grep -q "^\[$r\] $r/4 $master:29500 .*sleep infinity" env.out || { cat env.out; fail "rank $r env/container"; }; done
ddl run --container --cluster tc-run -- mlp_trainer --steps 15 --checksum >tr.out 2>&1 || { cat tr.out; fail "trainer"; }
check_trainer tr.out 4
ok "run --container: allreduce exact on 4 containers, rank env with the master's address, trainer loss $first -> $last"

ddl deploy tc-run.yaml --only configure >c.log 2>&1 || { cat c.log; fail "configure again"; }
[ "$(grep -c " 0 change(s)" c.log)" = 4 ] || { cat c.log; fail "configure is not idempotent"; }
ok "configure again: 0 changes on every node"

set +e
ddl run --container --cluster tc-run -- sh -c 'if [ "$DDL_RANK" = 1 ]; then exit 3; fi; sleep 60' >fail.out 2>&1; rc=$?
set -e
[ $rc = 1 ] || { cat fail.out; fail "failing rank: exit $rc"; }
expect_in fail.out "rank 1 on .* exited with status 3" "failing rank not named"
# Nothing but the init and `sleep infinity` (also no zombie: --init reaps what exec leaves orphaned), once
# the stopped ranks have gone.
left_in_containers() {
  local left
  left=$(for n in $nodes; do "${P[@]}" top "ddl-train-tc-run-$n" args 2>/dev/null | tail -n +2; done | grep -v 'sleep infinity *$' || true)
  printf '%s\n' "$left"
  [ -z "$left" ]
}
wait_for 15 "the ranks to stop: ranks left in the containers" left_in_containers

"$DDL" --state-dir "$STATE" run --container --cluster tc-run -- ddl-allreduce-test --size 64M -n 200 -w 0 >kill.out 2>&1 &
run_pid=$!
for _ in $(seq 200); do
  "${P[@]}" top ddl-train-tc-run-worker2 comm 2>/dev/null | grep -q ddl-allreduce && break; sleep 0.1
done
"${P[@]}" top ddl-train-tc-run-worker2 comm | grep -q ddl-allreduce || fail "rank 2 never started in its container"
sleep 1
"${P[@]}" kill ddl-train-tc-run-worker2 >/dev/null
t0=$(date +%s); rc=0; wait $run_pid || rc=$?
[ $rc != 0 ] || fail "job survived a killed container"
expect_in kill.out "rank 2 on .*\(exited with status 137\|killed by signal 9\)" "rank of the killed container not named"
echo "  job stopped $(( $(date +%s) - t0 )) s after the kill"
ok "a failing rank and a killed container stop the job, named; no rank left behind"

# Configure brings the killed container back; a changed image replaces every container.
ddl deploy tc-run.yaml --only configure >c2.log 2>&1 || { cat c2.log; fail "configure after the kill"; }
[ "$("${P[@]}" inspect --format '{{.State.Running}}' ddl-train-tc-run-worker2)" = true ] || fail "worker2's container not restarted"
before=$("${P[@]}" inspect --format '{{.Id}}' ddl-train-tc-run-master)
cid=$("${P[@]}" create "$IMG" true); "${P[@]}" commit --quiet "$cid" "$IMG2" >/dev/null; "${P[@]}" rm "$cid" >/dev/null
sed -i "s|image: $IMG|image: $IMG2|" tc-run.yaml
rc=0; ddl deploy tc-run.yaml </dev/null >d2.log 2>&1 || rc=$?
expect_rc "$rc" 2 d2.log "update runtime.image on every node ($IMG -> $IMG2)" "a new image without -y"
ddl deploy -y tc-run.yaml >d2.log 2>&1 || { cat d2.log; fail "deploy with a new image"; }
after=$("${P[@]}" inspect --format '{{.Id}} {{.ImageName}}' ddl-train-tc-run-master)
[ "${after%% *}" != "$before" ] && [ "${after#* }" = "$IMG2" ] || { cat d2.log; fail "container not replaced for the new image ($after)"; }
ddl run --container --cluster tc-run -np 2 -- ddl-allreduce-test -b 4 -e 64K -f 4 -n 1 -w 0 >ar2.out 2>&1 || { cat ar2.out; fail "allreduce after the image change"; }
ok "configure restarts a killed container; a changed image replaces the containers"

ddl destroy -y tc-run >x.log 2>&1 || { cat x.log; fail "destroy"; }
assert_gone tc-run
[ -z "$("${P[@]}" ps -a --format '{{.Names}}' | grep '^ddl-train-tc-run-')" ] || fail "training containers left"
ok "destroy removes the training containers"

# The smoke test's check "allreduce in containers": deploy, every check, destroy (containers included).
spec tc-smoke 2 "runtime:" "  image: $IMG" "  container_engine: podman" "services:" "  nfs: {enabled: false}"
ddl smoke-test tc-smoke.yaml --junit smoke.xml >smoke.out 2>&1 || { cat smoke.out; fail "smoke test with a training image"; }
expect_in smoke.out "ok   checks   allreduce in containers.*2 ranks, 16 MiB exact, busbw" \
  "smoke test: allreduce in containers"
grep -q 'name="allreduce in containers"' smoke.xml || fail "JUnit lacks the container allreduce"
assert_gone tc-smoke
[ -z "$("${P[@]}" ps -a --format '{{.Names}}' | grep '^ddl-train-tc-smoke-')" ] || fail "smoke test left training containers"
ok "smoke test: allreduce in containers passes; the cluster and its containers are gone after"
