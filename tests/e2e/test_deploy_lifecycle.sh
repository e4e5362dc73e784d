#!/usr/bin/env bash
# deploy 4 nodes -> exec gives 4 distinct hostnames -> hostfile has 4 lines (also on the nodes) ->
# a second deploy changes nothing -> destroy leaves nothing; destroying it again is exit 2 (no such cluster).
source "$(dirname "$0")/lib.sh"
spec life 4 "  bandwidth: 1gbit"
ddl deploy life.yaml >deploy.log 2>&1 || { cat deploy.log; fail "deploy"; }
names=$(ddl exec --cluster life -- hostname | sed 's/^\[[a-z0-9]*\] //' | sort -u | wc -l)
[ "$names" = 4 ] || fail "expected 4 distinct hostnames, got $names"
ok "exec on 4 nodes"
ddl --output json hostfile --cluster life | python3 -c 'import json,sys; h = json.load(sys.stdin)
assert h["cluster"] == "life" and len(h["nodes"]) == 4 and all(n["slots"] == 1 for n in h["nodes"]), h
assert h["text"].count(" slots=1") == 4, h' || fail "hostfile --output json"
ddl hostfile --cluster life --format horovod >hf
[ "$(wc -l <hf)" = 4 ] || fail "hostfile: $(cat hf)"
grep -qvE '^10\.[0-9.]+ slots=1$' hf && fail "hostfile lines: $(cat hf)"
ddl exec --cluster life -- 'grep -c slots= /etc/ddl/hostfile' | grep -q '\] 4$' || fail "hostfile on nodes"
ok "hostfile"
ddl exec --cluster life --nodes worker2 -- 'ip -o link show eth0' >/dev/null
# This cluster's own links: a dump of every link on the machine breaks off when another suite deletes one.
shaped=0
for l in $(ip -o link show | grep -o "ddl[^:@ ]*$(link_tag life)[^:@ ]*" | sort -u); do
  tc qdisc show dev "$l" | grep -q "tbf.*rate 1Gbit" && shaped=$((shaped + 1))
done
[ $shaped -gt 0 ] || { ip -o link show | grep "$(link_tag life)"; fail "links not shaped"; }
ok "links shaped"
ddl exec --cluster life -- cat /etc/ddl/node.env | grep -c "DDL_NODE=" | grep -q 4 || fail "node.env from the common role"
ddl deploy life.yaml --only configure >same.log 2>&1 || { cat same.log; fail "configure again"; }
expect_in same.log "nothing to apply: .* on all 4 node(s); Ansible not run" "unchanged inputs ran Ansible"
grep -q "change(s)" same.log && { cat same.log; fail "a skipped configure reported changes"; }
ok "configure with unchanged inputs does not run Ansible"
ddl deploy life.yaml --only configure --force-configure >conf.log 2>&1 || { cat conf.log; fail "configure again"; }
[ "$(grep -c " 0 change(s)" conf.log)" = 4 ] || { cat conf.log; fail "configure is not idempotent"; }
expect_in conf.log "configure: ok ([0-9.]* s, [0-9.]* CPU-s here)" "no CPU figure for the phase"
ok "configure converged, a forced second run changed nothing"
ddl deploy life.yaml >second.log 2>&1 || { cat second.log; fail "second deploy"; }
[ "$(grep -c 'already done, skipped' second.log)" = 6 ] || { cat second.log; fail "second deploy was not a no-op"; }
ok "second deploy is a no-op"
# Drift: a node whose sshd died is noticed by the next deploy, which repairs it.
pkill -f "sshd -f $STATE/life/nodes/worker2/sshd_config" || fail "no sshd of worker2 to kill"
ddl status life >dead.out 2>dead.err || { cat dead.err; fail "status with a dead node"; }
grep -Eq '^worker2 .* unreachable ' dead.out && grep -Eq '^worker1 .* up ' dead.out &&
  grep -q "1 node(s) do not answer: worker2" dead.err || { cat dead.out dead.err; fail "status does not show the dead node"; }
ddl --output json status life | python3 -c 'import json,sys; s = json.load(sys.stdin)
assert [n["name"] for n in s["nodes"] if not n["reachable"]] == ["worker2"], s["nodes"]' || fail "status --output json: reachable"
rc=0
ddl run --cluster life -- true >deadrun.log 2>&1 || rc=$?
expect_rc "$rc" 2 deadrun.log "node(s) worker2 of cluster life do not answer SSH; no rank was started" "run with a dead node"
expect_in deadrun.log "hint: .ddl deploy .*life.yaml. checks every node and repairs what it can" "run names no repair"
ok "status shows the node that does not answer (text, JSON and a line naming it); run starts no rank and names the repair"
ddl deploy life.yaml >drift.log 2>&1 || { cat drift.log; fail "deploy after worker2's sshd died"; }
grep -q "\[worker2\] does not answer" drift.log && grep -q "running the phases from provision again" drift.log ||
{ cat drift.log; fail "the dead node was not noticed"; }
ddl exec --cluster life -- true >/dev/null || fail "worker2 not repaired"
ok "a node whose sshd died is noticed and repaired by the next deploy"
# One name, one cluster per machine: another state folder's plan and deploy of this name are refused,
# naming the folder that owns it, and leave no record there, so its destroy has nothing to remove.
other() { "$DDL" --state-dir "$WORK/other" "$@"; }
rc=0; other plan life.yaml >o-plan.log 2>&1 || rc=$?
[ $rc != 0 ] && grep -q "cluster life already runs on this machine, deployed from the state folder $STATE" o-plan.log ||
  { cat o-plan.log; fail "plan from another state folder: exit $rc"; }
rc=0; other deploy life.yaml >o-deploy.log 2>&1 || rc=$?
[ $rc != 0 ] && grep -q "already runs on this machine, deployed from the state folder $STATE" o-deploy.log &&
  expect_in o-deploy.log "ddl --state-dir $STATE status life" "deploy from another state folder: exit $rc"
[ ! -e "$WORK/other/life" ] || fail "the refused deploy left a record in the other state folder"
rc=0; other destroy -y life >o-destroy.log 2>&1 || rc=$?
expect_rc "$rc" 2 o-destroy.log "no cluster named life in $WORK/other" "destroy from the other folder"
ddl exec --cluster life -- true >/dev/null || fail "the other folder's deploy or destroy touched the cluster"
ddl status life | grep -q "hostfile=done" || fail "the first folder's state changed"
ok "one name, one cluster: another state folder's plan and deploy are refused naming the owner, leaving no record; its destroy touches nothing"
# A subnet that overlaps a running cluster's or this machine's own network is refused at plan time, named.
life_net=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target_data"]["plan"]["subnet"])' "$STATE/life/state.json")
spec clash 1 "  subnet: ${life_net%/*}/25"
rc=0; ddl plan clash.yaml >clash.log 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "local.subnet ${life_net%/*}/25 overlaps $life_net of the local cluster life (deployed from $STATE)" clash.log ||
  { cat clash.log; fail "plan of a subnet inside a running cluster's: exit $rc"; }
read -r host_if host_addr < <(ip -4 -o addr show scope global | awk '{print $2, $4; exit}')
[ -n "${host_addr:-}" ] || { host_if=lo; host_addr=127.0.0.1/8; }
host_net=$(python3 -c 'import ipaddress,sys; n = ipaddress.ip_interface(sys.argv[1]).network
print(n if 16 <= n.prefixlen <= 27 else next(n.subnets(new_prefix=24)) if n.prefixlen < 16 else n.supernet(new_prefix=27))' "$host_addr")
spec clash 1 "  subnet: $host_net"
rc=0; ddl deploy clash.yaml >clash.log 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "overlaps this machine's network .* ($host_addr on $host_if)" clash.log ||
  { cat clash.log; fail "deploy on this machine's own network ($host_addr on $host_if): exit $rc"; }
! ip netns list | grep -q "^ddl-clash-" || fail "the refused deploy made nodes"
ok "a subnet overlapping a running cluster's or this machine's network is refused at plan and deploy, the clash named"
# exec --timeout stops the command on the node too (exit 124 there), not only ddl's wait for it.
rc=0; ddl exec --cluster life --nodes worker1 --timeout 2 -- 'sleep 37.25; echo late' >to.log 2>&1 || rc=$?
expect_rc "$rc" 1 to.log "worker1 (timed out after 2 s; stopped there)" "exec --timeout"
wait_for 15 "the timed-out command (sleep 37.25) to stop on the node: exec --timeout left it running" \
  eval '! pgrep -af "sleep 37.25"'
ok "exec --timeout stops the command on the node"
# -q leaves only warnings and errors; -v shows each progress line once, with the commands ddl runs.
ddl -q deploy life.yaml >q.log 2>&1 || { cat q.log; fail "deploy -q"; }
[ ! -s q.log ] || { cat q.log; fail "deploy -q printed progress"; }
ddl -v deploy life.yaml >v.log 2>&1 || { cat v.log; fail "deploy -v"; }
[ "$(grep -c "probe: already done, skipped" v.log)" = 1 ] || { cat v.log; fail "deploy -v printed a progress line twice"; }
ok "-q quiets deploy; -v prints each progress line once"
# Ctrl-C (SIGINT) during `ddl run` stops every rank and exits 130, as the exit-code table says.
python3 - "$DDL" "$STATE" >int.log 2>&1 <<'PY' || { cat int.log; fail "Ctrl-C in run"; }
import os, re, select, signal, subprocess, sys, time
# Each rank says it runs, then becomes the sleep: the signal comes once all 4 run (however long their start
# takes on this machine), not after a fixed time.
p = subprocess.Popen([sys.argv[1], "--state-dir", sys.argv[2], "run", "--cluster", "life", "--", "sh", "-c",
                      "echo rank-$DDL_RANK-up; exec sleep 41.5"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
fd, seen, deadline = p.stdout.fileno(), b"", time.time() + 60
up = lambda: len(set(re.findall(rb"rank-([0-9]+)-up", seen)))
while up() < 4 and time.time() < deadline:
    if select.select([fd], [], [], max(0.0, deadline - time.time()))[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        seen += chunk
sys.stdout.write(seen.decode(errors="replace"))
if up() < 4:
    p.kill()
    sys.exit(f"{up()} of 4 ranks started within 60 s")
p.send_signal(signal.SIGINT)
sys.stdout.write(p.stdout.read().decode(errors="replace"))
rc = p.wait(timeout=60)
assert rc == 130, f"exit {rc}"
PY
wait_for 15 "the ranks to stop after Ctrl-C: ranks left running" eval '! pgrep -af "sleep 41.5"'
ok "Ctrl-C in ddl run: every rank stopped, exit 130"
# A corrupt state.json: commands name it and the way back (the copy of the state before the last save).
[ "$(stat -c %a "$STATE/life/state.json.backup")" = 600 ] || fail "state.json.backup missing or not 0600"
echo '{"broken' >"$STATE/life/state.json"
rc=0; ddl destroy -y life >corrupt.log 2>&1 || rc=$?
[ $rc != 0 ] && grep -q "state.json cannot be read (not valid JSON)" corrupt.log &&
  expect_in corrupt.log "cp $STATE/life/state.json.backup $STATE/life/state.json" "destroy with a corrupt state.json: exit $rc"
ddl exec --cluster life -- true >/dev/null 2>&1 && fail "a corrupt state was read"
cp "$STATE/life/state.json.backup" "$STATE/life/state.json"
ddl exec --cluster life -- true >/dev/null || fail "the cluster after putting the backup back"
ok "a corrupt state.json: refused naming the backup and the cp that puts it back; after it the cluster works"
# smoke-test deploys and destroys its own cluster: never one that is already deployed.
rc=0; ddl smoke-test life.yaml >smoke.log 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "cluster life already exists in $STATE" smoke.log && grep -q "smoke-test --cluster life" smoke.log ||
  { cat smoke.log; fail "smoke-test of a deployed cluster: exit $rc"; }
ddl exec --cluster life -- true >/dev/null || fail "smoke-test touched a deployed cluster"
ok "smoke-test FILE refuses a cluster already deployed from FILE (exit 2, offering --cluster and --name-suffix)"
ddl status life | grep -q "hostfile=done" || fail "status"
ddl list >list.out || fail "ddl list"
grep -Eq '^life +local +4 +[0-9]+[smh] +ready +-$' list.out || { cat list.out; fail "ddl list row"; }
ddl --output json list | python3 -c 'import json,sys; [c] = json.load(sys.stdin)
assert (c["name"], c["target"], c["nodes"], c["state"], c["lock"]) == ("life", "local", 4, "ready", None), c
assert 0 <= c["age_s"] < 3600, c' || fail "ddl list --output json"
ok "ddl list: the cluster, its target, 4 nodes, ready, no lock (text and JSON)"
[ "$(stat -c %a "$STATE/life/state.json")" = 600 ] || fail "state.json mode"
[ "$(stat -c %a "$STATE/life/id_ed25519")" = 600 ] || fail "key mode"
ddl plan life.yaml >plan.txt || { cat plan.txt; fail "plan of an unchanged spec"; }
expect_in plan.txt "^Nodes: 0 to create, 0 to update, 0 to replace, 0 to delete (4 unchanged).$" "plan of an unchanged spec"
# The rendered folder of a deployed cluster has the inventory configure uses, and Ansible reads it.
ddl render life.yaml --out rendered >render.log 2>&1 || { cat render.log; fail "render of a deployed cluster"; }
ansible-inventory -i rendered/ansible/inventory.yml --list >inv.json || fail "ansible-inventory cannot read the rendered inventory"
python3 -c 'import json,sys; i = json.load(open("inv.json"))
assert i["master"]["hosts"] == ["master"] and sorted(i["workers"]["hosts"]) == ["worker1", "worker2", "worker3"], i' ||
  fail "the rendered inventory's groups"
ok "plan of an unchanged spec: 4 unchanged; render of a deployed cluster writes an inventory Ansible reads"
# What deploy changes is what plan listed: before each approved re-deploy below, the plan (JSON) and the
# nodes' facts (namespace identity, addresses, sshd process) and the links' rates are recorded; after it,
# every node or link whose facts changed must be in the plan, with an action that allows that change.
facts() {
  for ns in $(ip netns list | awk '/^ddl-life-/ {print $1}'); do
    n=${ns#ddl-life-}
    printf '%s ns=%s addrs=%s sshd=%s\n' "$n" "$(stat -L -c %i "/run/netns/$ns")" \
      "$(ip -n "$ns" -o addr show scope global | awk '{print $4}' | sort | paste -sd,)" \
      "$(pgrep -f "sshd -f $STATE/life/nodes/$n/sshd_config" | paste -sd,)"
  done
  printf 'links %s\n' "$(link_rates | grep -o 'rate [0-9]*[KMG]bit' | sort -u | paste -sd,)"
}
deploy_as_planned() { # LOG: deploy -y, checked against the plan made just before it
  ddl --output json plan life.yaml >planned.json || { cat planned.json; fail "plan before $1"; }
  facts >facts.before
  ddl deploy -y life.yaml >"$1" 2>&1 || { cat "$1"; fail "deploy ($1)"; }
  facts >facts.after
  python3 - planned.json facts.before facts.after <<'PY' || { cat planned.json facts.before facts.after; fail "deploy ($1) changed what plan did not list"; }
import json, sys
plan = json.load(open(sys.argv[1]))
listed = {(c["kind"], c["address"]): c["action"] for c in plan["changes"] if c["action"] != "keep"}
def read(path):
    return dict(line.rstrip("\n").split(" ", 1) for line in open(path) if " " in line)
before, after = read(sys.argv[2]), read(sys.argv[3])
for name in sorted(set(before) | set(after)):
    if before.get(name) == after.get(name):
        continue
    if name == "links":
        assert ("resource", "links") in listed, f"links changed ({before[name]} -> {after[name]}) but the plan lists {listed}"
        continue
    want = {"create"} if name not in before else {"delete"} if name not in after else {"update", "replace"}
    got = listed.get(("node", name))
    assert got in want, f"node {name} changed ({before.get(name)} -> {after.get(name)}) but the plan says {got}"
PY
}
link_rates() { for l in $(ip -o link show | grep -o "ddl[^:@ ]*$(link_tag life)[^:@ ]*" | sort -u); do tc qdisc show dev "$l"; done; }
# One node fewer: `ddl plan` shows the node to delete and changes nothing; the re-deploy would delete
# worker3, so it waits for approval (exit 2 without a terminal and without -y, nothing changed); approved,
# worker3's namespace, link and processes go and the rest stays.
sed -i 's/nodes: 4/nodes: 3/' life.yaml
ddl plan life.yaml >plan.txt || { cat plan.txt; fail "plan of a node fewer"; }
grep -q "^  - delete node worker3 (namespace, 10\.[0-9.]*)$" plan.txt && grep -q "(3 unchanged)" plan.txt ||
{ cat plan.txt; fail "plan of a node fewer"; }
ddl --output json plan life.yaml | python3 -c 'import json,sys; p = json.load(sys.stdin)
assert p["exists"] and p["touches_existing"] and p["summary"]["nodes"]["delete"] == 1 and p["summary"]["nodes"]["keep"] == 3, p
assert [c["address"] for c in p["changes"] if c["action"] == "delete"] == ["worker3"], p' || fail "plan --output json"
ip netns list | grep -q "^ddl-life-worker3 " || fail "ddl plan removed worker3"
ok "plan of a node fewer names it (text and JSON) and changes nothing"
# Usage adds up over resizes (issue 52): node-hours and the age never fall as the cluster shrinks and grows.
usage_now() { # appends "NODES NODE_HOURS AGE_S" of cluster life to usage.txt
  ddl --output json list | python3 -c 'import json,sys
c = [c for c in json.load(sys.stdin) if c["name"] == "life"][0]
print(c["usage"]["nodes"], repr(c["usage"]["node_hours"]), c["age_s"])' >>usage.txt
}
usage_now
rc=0; ddl deploy life.yaml </dev/null >shrink.log 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "delete node worker3 (.*namespace ddl-life-worker3)" shrink.log && grep -q "run again with -y" shrink.log ||
  { cat shrink.log; fail "a re-deploy dropping a node without -y: exit $rc, expected 2 with the plan"; }
ip netns list | grep -q "^ddl-life-worker3 " || fail "the refused re-deploy removed worker3"
ddl status life | grep -q "hostfile=done" || { ddl status life; fail "the refused re-deploy changed the phase records"; }
[ "$(ddl hostfile --cluster life | grep -c slots=)" = 4 ] || fail "hostfile after a refused re-deploy"
ddl run --cluster life -- true >run.log 2>&1 || { cat run.log; fail "run after a refused re-deploy"; }
deploy_as_planned shrink.log
usage_now
! ip netns list | grep -q "^ddl-life-worker3 " || fail "worker3's namespace left after the approved re-deploy"
! pgrep -f "$STATE/life/nodes/worker3/" >/dev/null || fail "worker3's processes left"
[ "$(ddl hostfile --cluster life | grep -c slots=)" = 3 ] || fail "hostfile after the shrink"
ddl exec --cluster life -- true >/dev/null || fail "the remaining nodes do not answer"
ok "a re-deploy with a node fewer shows it and needs approval (refused: nothing changed, run works); approved, the node is gone and the rest answers"
# Grow past the first size: the node ddl removed comes back with a new host key, which ddl forgot with the
# node, and a node the cluster never had is new to the others; every node reaches both by name.
sed -i 's/nodes: 3/nodes: 5/' life.yaml
deploy_as_planned grow.log
usage_now
for w in worker3 worker4; do
  ddl exec --cluster life --nodes master,worker1 -- ssh -o BatchMode=yes $w hostname >grow-ssh.log 2>&1 ||
    { cat grow-ssh.log; fail "ssh $w from master and worker1 after the grow"; }
  [ "$(grep -c "$w\$" grow-ssh.log)" = 2 ] || { cat grow-ssh.log; fail "ssh $w: hostnames"; }
done
[ "$(ddl hostfile --cluster life | grep -c slots=)" = 5 ] || fail "hostfile after the grow"
ddl exec --cluster life --nodes worker1 -- 'grep -c slots= /etc/ddl/hostfile' | grep -q '\] 5$' || fail "hostfile on an old node after the grow"
ok "4 -> 3 -> 5: the re-created node's new host key is accepted, every node reaches the old and the new by name"
sed -i 's/nodes: 5/nodes: 3/' life.yaml
deploy_as_planned shrink2.log
usage_now
python3 - usage.txt <<'PY' || { cat usage.txt; fail "usage fell over 4 -> 3 -> 5 -> 3 nodes (nodes, node-hours, age)"; }
import sys
rows = [l.split() for l in open(sys.argv[1])]
assert [int(r[0]) for r in rows] == [4, 3, 5, 3], rows
for a, b in zip(rows, rows[1:]):
    assert float(b[1]) >= float(a[1]) and int(b[2]) >= int(a[2]), (a, b)
assert float(rows[-1][1]) > float(rows[0][1]), rows
PY
ok "usage over 4 -> 3 -> 5 -> 3 nodes: node-hours and age never fall ($(tr '\n' ';' <usage.txt))"
# A link-rate change is in the plan, asks, and is applied in place; a subnet change replaces every node.
sed -i 's/bandwidth: 1gbit/bandwidth: 100mbit/' life.yaml
ddl plan life.yaml >rate-plan.txt || { cat rate-plan.txt; fail "plan of a link-rate change"; }
expect_in rate-plan.txt "~ update resource links (1gbit -> 100mbit)" "plan: no link-rate change"
rc=0; ddl deploy life.yaml </dev/null >rate.log 2>&1 || rc=$?
expect_rc "$rc" 2 rate.log "update links of every node in place (1gbit -> 100mbit)" "link-rate change without -y"
link_rates >rates.txt; grep -q "rate 100Mbit" rates.txt && fail "the refused link-rate change was applied"
deploy_as_planned rate.log
link_rates >rates.txt
grep -q "rate 100Mbit" rates.txt && ! grep -q "rate 1Gbit" rates.txt || { cat rates.txt; fail "links not reshaped to 100mbit"; }
ok "a link-rate change shows in plan, is refused without approval, and is applied in place with it"
printf '  subnet: 10.254.251.0/24\n' >>life.yaml
ddl plan life.yaml >net-plan.txt || { cat net-plan.txt; fail "plan of a subnet change"; }
[ "$(grep -c "^  -/+ replace node" net-plan.txt)" = 3 ] || { cat net-plan.txt; fail "plan of a subnet change: 3 replacements"; }
deploy_as_planned net.log
ddl exec --cluster life -- 'hostname -I' >net-exec.log || { cat net-exec.log; fail "nodes after the subnet change"; }
[ "$(grep -c ' 10\.254\.251\.' net-exec.log)" = 3 ] || { cat net-exec.log; fail "nodes not on the new subnet"; }
ddl exec --cluster life --nodes master -- ssh -o BatchMode=yes worker2 true || fail "ssh between nodes after the subnet change"
ok "a subnet change is planned as replacing every node, and deploy makes them anew on the new subnet"
# A setting configure applies (here the hostfile format) is in the plan as a config change and asks.
printf 'hostfile:\n  format: mpich\n' >>life.yaml
ddl plan life.yaml >conf-plan.txt || { cat conf-plan.txt; fail "plan of a config change"; }
grep -q "~ update config hostfile.format (openmpi -> mpich)" conf-plan.txt && grep -q "^Configuration: 1 setting(s) to change" conf-plan.txt ||
  { cat conf-plan.txt; fail "plan: no config change"; }
rc=0; ddl deploy life.yaml </dev/null >conf.log 2>&1 || rc=$?
expect_rc "$rc" 2 conf.log "update hostfile.format on every node (openmpi -> mpich)" "config change without -y"
ddl status life | grep -q "hostfile=done" || fail "the refused config change changed the phase records"
deploy_as_planned conf.log
ddl hostfile --cluster life | grep -q "slots=" && fail "hostfile still in Open MPI's format after the change to MPICH's"
ok "a config change shows in plan, needs approval, and deploy changes nothing else"
# A cluster deployed with a spec a later ddl refuses (here a driver branch older than every CUDA it loads) stays
# manageable: commands use the spec as deployed and warn.
python3 - "$STATE/life/state.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
assert "gpu:" not in st["spec_text"], st["spec_text"]
st["spec_text"] += 'gpu:\n  driver_branch: "440"\n'
json.dump(st, open(sys.argv[1], "w"))
PY
ddl status life >old.out 2>old.err || { cat old.err; fail "status of a cluster whose stored spec this ddl refuses"; }
grep -q "warning: cluster life was deployed with a spec this ddl refuses" old.err && grep -q 'driver_branch "440"' old.err ||
  { cat old.err; fail "no warning about the stored spec"; }
[ "$(ddl hostfile --cluster life 2>/dev/null | grep -c .)" = 3 ] || fail "hostfile of a cluster whose stored spec this ddl refuses"
ok "a stored spec this ddl refuses: status and hostfile work on it and warn"
# No terminal and no -y: refused, naming what would go and the flag; the cluster stays.
rc=0; ddl destroy life </dev/null >noy.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat noy.log; fail "destroy without a terminal and without -y: exit $rc, expected 2"; }
grep -q "would destroy cluster life on target local: master (.*), worker1" noy.log && grep -q "add -y (--yes)" noy.log ||
{ cat noy.log; fail "destroy without -y: message"; }
# On a terminal (a pseudo-terminal here) the user types the name: a wrong one destroys nothing.
destroy_on_tty() { ddl_on_tty "to destroy it: " "$1" destroy life; } # ANSWER: prints the exit status
[ "$(destroy_on_tty lif 2>tty1.log)" = 1 ] || { cat tty1.log; fail "a wrong name at the prompt did not stop destroy"; }
expect_in tty1.log "Type the cluster's name (life) to destroy it:" "no prompt on the terminal"
ddl exec --cluster life -- true >/dev/null 2>&1 || fail "the cluster went although the name typed was wrong"
[ "$(destroy_on_tty life 2>tty2.log)" = 0 ] || { cat tty2.log; fail "destroy confirmed on the terminal"; }
assert_gone life
ok "destroy asks on a terminal (the cluster's name typed; a wrong one keeps it), refuses without one unless -y, and leaves nothing"
rc=0; ddl destroy -y lfie >typo.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat typo.log; fail "destroy of a cluster that does not exist: exit $rc, expected 2"; }
grep -q "no cluster named lfie in $STATE" typo.log && grep -q "(there are no clusters there)" typo.log ||
{ cat typo.log; fail "destroy typo message"; }
ok "destroy of a name that is no cluster: exit 2, naming the state folder"
