#!/usr/bin/env bash
# autostop and the master's idle clock (/opt/ddl/bin/ddl-idle, installed by the idle_clock role) on 2
# container nodes (systemd as PID 1, each its own file system): the timer records a decision by itself;
# a detached job, a foreground `ddl run` and a GPU at 90 % on the worker keep the cluster busy, and each
# one's end makes it idle again (the clock in `ddl status`, its JSON and `ddl list`); `ddl gc --expired`
# leaves the cluster while it is busy or idle for less than autostop.idle_minutes, and destroys it once
# idle for longer. autostop.action: stop is refused on the local target.
#
# The decisions are made at once by running the clock's tick over `ddl exec` rather than waiting for the
# timer's minute; "idle for over a minute" is planted by moving the record's idle_since back.
#
# Stand-in: /usr/local/bin/nvidia-smi on worker1, as real nvidia-smi cannot run without an NVIDIA GPU and
# driver. It follows the query interface of NVIDIA's System Management Interface documentation
# (nvidia-smi(1), "--query-gpu" and "--format", https://docs.nvidia.com/deploy/nvidia-smi/index.html):
# `nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits` prints one line per GPU with the
# percentage alone; any other arguments are refused with exit 2 (its "RETURN VALUE" section: "a supplied
# argument or flag is invalid").
source "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || fail "podman missing (scripts/install-deps.sh installs it)"

# Configure applies the idle clock and the mesh it asks the other nodes over, as site.yml does; the other
# roles are test_roles_containers'. The load limit is lifted: container nodes see this machine's load
# (other suites, the build), which is not the cluster's.
src=${DDL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
mkdir -p "$WORK/data/playbooks/roles"
cp -r "$src/playbooks/ansible.cfg" "$src/playbooks/callback_plugins" "$WORK/data/playbooks/"
cp -r "$src/playbooks/roles/ssh_mesh" "$src/playbooks/roles/idle_clock" "$WORK/data/playbooks/roles/"
cat >"$WORK/data/playbooks/site.yml" <<'EOF'
- name: Node-to-node SSH
  hosts: all
  gather_facts: true
  gather_subset: [min, network]
  roles:
    - ssh_mesh
- name: Idle clock on the master
  hosts: master
  gather_facts: false
  vars:
    ddl_idle_cpu_load: 1000
  roles:
    - idle_clock
EOF
export DDL_DATA_DIR="$WORK/data" DDL_ANSIBLE_STRATEGY=linear

spec ast 2 "  nodes_as: containers" "services: {nfs: {enabled: false}}" "autostop: {idle_minutes: 1, action: stop}"
rc=0
ddl validate ast.yaml >v.out 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "ast.yaml:8:37: error: autostop.action: stop is not available on target local: " v.out ||
  { cat v.out; fail "autostop.action: stop on the local target: exit $rc"; }
ok "autostop.action: stop is refused on the local target at its position, with the reason"

spec ast 2 "  nodes_as: containers" "services: {nfs: {enabled: false}}" "autostop: {idle_minutes: 1}"
ddl deploy ast.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
on_master() { ddl exec --cluster ast --nodes master -- "$@"; }
for _ in $(seq 60); do on_master test -s /var/lib/ddl/idle/ast.json 2>/dev/null && break; sleep 0.5; done
on_master systemctl is-active ddl-idle.timer >/dev/null || fail "ddl-idle.timer is not active on the master"
on_master test -s /var/lib/ddl/idle/ast.json || fail "the timer made no decision within 30 s of the deploy"
on_master systemctl stop ddl-idle.timer || fail "stopping the timer" # the ticks below are the test's own
ok "configure installs the idle clock: its timer runs and records a decision by itself"

# One decision of the clock, which must have asked both nodes (worker1 over the mesh's ssh).
tick() {
  on_master /opt/ddl/bin/ddl-idle tick >tick.out 2>&1 || { cat tick.out; fail "ddl-idle tick"; }
  grep -q '"unanswered": \[\]' tick.out || { cat tick.out; fail "a node did not answer the idle clock"; }
}
expect_status() { # PATTERN WHAT: the clock's line of `ddl status` (read from the master)
  ddl status ast >st.out 2>&1 || { cat st.out; fail "status"; }
  grep -Eq "$1" st.out || { cat st.out tick.out; fail "$2"; }
}

tick
expect_status "^idle since .* \(0m\); autostop destroys it after 1m idle \(in [01]m\)$" "an idle cluster's clock in status"
id=$(ddl run -d --np 1 -- sleep 6) || fail "run -d"
tick
expect_status "^busy: job $id (running|queued)$" "a detached job does not keep the cluster busy"
ddl gc --expired -y >gc.out 2>&1 || { cat gc.out; fail "gc --expired"; }
grep -q "gc: 0 destroyed" gc.out || { cat gc.out; fail "gc --expired destroyed a busy cluster"; }
wait_for 60 "detached job $id to succeed" job_in_state "$id" succeeded ast
tick
expect_status "^idle since " "the cluster is not idle after its detached job"
ok "a detached job keeps the cluster busy (status names it, gc --expired leaves it) until it ends"

ddl run --cluster ast --np 1 -- sleep 5 >fg.out 2>&1 &
fg=$!
wait_for 30 "the foreground run to be recorded running" eval 'ddl jobs ast | grep -q " running "'
tick
expect_status "^busy: job [0-9]+ running$" "a foreground run does not keep the cluster busy"
wait $fg || { cat fg.out; fail "foreground run"; }
tick
expect_status "^idle since " "the cluster is not idle after its foreground run"
ok "a foreground ddl run keeps the cluster busy until it ends"

# The stand-in GPU on worker1 at 90 %, after an idle spell planted as 2 minutes long.
plant_idle_since() { # SECONDS_AGO
  on_master python3 -c "import json, time
p = '/var/lib/ddl/idle/ast.json'; r = json.load(open(p))
r['idle_since'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() - $1))
json.dump(r, open(p, 'w'))" || fail "planting idle_since"
}
plant_idle_since 120
cat >nvidia-smi <<'EOF'
#!/bin/sh
# Stand-in (tests/e2e/test_autostop.sh): one GPU at 90 %, in nvidia-smi's --query-gpu CSV form.
[ "$*" = "--query-gpu=utilization.gpu --format=csv,noheader,nounits" ] || { echo "Invalid combination of input arguments." >&2; exit 2; }
echo 90
EOF
ddl exec --cluster ast --nodes worker1 -- sh -c "echo $(base64 -w0 nvidia-smi) | base64 -d >/usr/local/bin/nvidia-smi &&
  chmod 755 /usr/local/bin/nvidia-smi" || fail "the stand-in nvidia-smi on worker1"
tick
expect_status "^busy: .*: GPU utilisation 90% \(above 10%\)$" "a GPU at 90 % does not keep the cluster busy"
ddl gc --expired -y >gc.out 2>&1 || { cat gc.out; fail "gc --expired"; }
grep -q "gc: 0 destroyed" gc.out || { cat gc.out; fail "gc --expired destroyed a cluster whose GPU is busy"; }
ddl exec --cluster ast --nodes worker1 -- rm /usr/local/bin/nvidia-smi || fail "removing the stand-in"
tick
expect_status "^idle since .* \(0m\)" "the cluster is not idle once its GPU is"
ddl gc --expired -y >gc.out 2>&1 || { cat gc.out; fail "gc --expired"; }
grep -q "gc: 0 destroyed" gc.out || { cat gc.out; fail "gc --expired destroyed a cluster idle for less than a minute"; }
ok "a GPU at 90 % keeps the cluster busy; gc --expired leaves a cluster idle for less than idle_minutes"

plant_idle_since 120
tick
ddl --output json status ast >st.json 2>st.err || { cat st.err; fail "status --output json"; }
python3 -c 'import json,sys; i = json.load(open(sys.argv[1]))["idle"]
assert i["busy"] == [] and i["idle_since"] and 115 <= i["idle_s"] <= 200, i' st.json || { cat st.json; fail "status JSON idle"; }
ddl list >list.out || fail "list"
grep -Eq "^ast .* [23]m$" list.out || { cat list.out; fail "list shows no idle time"; }
ddl --output json list | python3 -c 'import json,sys; r = [c for c in json.load(sys.stdin) if c["name"] == "ast"][0]
assert r["idle"]["idle_s"] >= 115, r' || fail "list --output json idle"
ddl --output json gc --expired -y >gc.json 2>gc.err || { cat gc.json gc.err; fail "gc --expired -y"; }
python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))
assert [(c["cluster"], c["outcome"]) for c in r["clusters"]] == [("ast", "destroyed")], r
assert "autostop.idle_minutes: 1" in r["clusters"][0]["why"], r' gc.json || { cat gc.json gc.err; fail "gc --expired report"; }
assert_gone ast
ok "status, list and their JSON show the idle clock; gc --expired destroys the cluster idle past idle_minutes"
