#!/usr/bin/env bash
# OpenStack target end to end with stand-ins for what cannot run here: the Terraform stand-in creates the
# instances as real local nodes (ddl-fake-nodes --bastion: only the master reachable from this machine),
# pre-flight talks HTTPS to the API stand-in. Everything after provision is real: SSH to the workers
# through the master, configure, probe, hostfile, exec; destroy leaves nothing behind.
# osfull opts in to the node credential (autostop.node_credential): the stand-in listens where the master's
# namespace reaches it, the master gets an application credential scoped to osfull's servers, and its idle
# clock (one tick driven with a short limit) stops the cluster through the cloud's API.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/helpers/openstack.sh"
# gc of the cluster whose state folder the test throws away (below); also run on the way out, so that a
# failing run leaves no nodes behind.
gc_other() { "$DDL" --state-dir "$WORK/other-state" gc --spec osleak.yaml --prefix os --older-than 0s "$@"; }
# Namespace nodes share this machine's /var/lib/ddl: osfull's idle record there is this suite's alone, and a
# record left by an earlier run would be read as this cluster's.
idle_record=/var/lib/ddl/idle/osfull.json
rm -f "$idle_record"
# set +e: under errexit the `(exit $rc)` that hands cleanup the status would end the trap before cleanup.
trap 'rc=$?; set +e; rm -f "$idle_record"; [ -f osleak.yaml ] && [ ! -d "$STATE/osleak" ] && gc_other -y >/dev/null 2>&1
      kill $FAKE_CLOUD_PID 2>/dev/null || true; (exit $rc); cleanup' EXIT
DDL_FAKE_NODES="$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes"
[ -x "$DDL_FAKE_NODES" ] || fail "$DDL_FAKE_NODES is not built"
export DDL_FAKE_NODES
start_fake_cloud reachable
openstack_spec osfull 2
# The clock's own limit is far off (it runs throughout); the end is one tick with a short limit, below.
echo "autostop: {idle_minutes: 600, action: stop, node_credential: true}" >>osfull.yaml

# Before anything exists: the plan lists the nodes and Terraform's resources to create, and writes nothing.
ddl plan osfull.yaml >plan.txt 2>plan.err || { cat plan.txt plan.err; fail "plan of a new cluster"; }
expect_in plan.txt "^  + create node worker2 (flavor g1.small)$" "plan of a new cluster: the node worker2"
expect_in plan.txt '^  + create resource openstack_compute_instance_v2.worker\[1\]$' "plan of a new cluster: worker2's server"
expect_in plan.txt '^  + create resource openstack_compute_keypair_v2.cluster$' "plan of a new cluster: the key pair"
[ ! -e "$STATE/osfull" ] || fail "plan of a new cluster wrote to the state folder"
ok "plan of a new cluster: its nodes and the Terraform resources to create; nothing written"

FAKE_TF_FAIL_APPLY=1 ddl deploy osfull.yaml >fail.log 2>&1 && fail "the injected apply failure passed"
expect_in fail.log "openstack_compute_instance_v2.worker\[0\] (create): Error creating OpenStack server" \
  "apply failure names the resource and the provider's message"
ok "a failed apply names the resource and the provider's message"

ddl -v deploy osfull.yaml >deploy.log 2>&1 || { cat deploy.log; fail "resumed deploy"; }
expect_in deploy.log "provision: ok" "provision did not run again"
ok "deploy resumes after the failed apply and finishes"

# node_credential WORKERS: the cloud holds one application credential, osfull-node, restricted, whose access
# rules name exactly osfull's servers (compute only); ddl's node-credential.json (0600) hands it to the master
# with the server ids, master last; state.json does not hold it. Prints its id.
node_credential() {
  python3 - "$FAKE_OPENSTACK_RESOURCES" "$STATE/osfull" "$1" <<'PY'
import json, os, stat, sys
reg, state, workers = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
creds = reg.get("application_credentials", [])
assert [c["name"] for c in creds] == ["osfull-node"], [c["name"] for c in creds]
c = creds[0]
ids = {s["id"]: s["name"] for s in reg["servers"] if s["metadata"].get("ddl_cluster") == "osfull"}
assert len(ids) == workers + 1 and {r["path"].split("/servers/")[1].split("/")[0] for r in c["access_rules"]} == set(ids), c
assert {r["service"] for r in c["access_rules"]} == {"compute"} and not c["unrestricted"], c
f = os.path.join(state, "node-credential.json")
assert stat.S_IMODE(os.stat(f).st_mode) == 0o600, oct(os.stat(f).st_mode)
env = json.load(open(f))["env"]
assert env["DDL_CLOUD"] == "openstack" and env["OS_APPLICATION_CREDENTIAL_ID"] == c["id"], sorted(env)
assert env["OS_APPLICATION_CREDENTIAL_SECRET"] == c["_secret"], "node-credential.json holds another secret"
servers = env["DDL_CLOUD_SERVERS"].split(",")
assert set(servers) == set(ids) and ids[servers[-1]] == "osfull-master", (servers, ids)
assert c["_secret"] not in open(os.path.join(state, "state.json")).read(), "the secret is in state.json"
print(c["id"])
PY
}
# cred_call METHOD PATH: the HTTP status of a call on the compute API with osfull's node credential (read
# from node-credential.json inside python: never in an argv).
cred_call() {
  python3 - "$STATE/osfull/node-credential.json" "$CLOUD_URL" "$WORK/tls/ca.pem" "$@" <<'PY'
import json, ssl, sys, urllib.error, urllib.request
env, url, ca, method, path = json.load(open(sys.argv[1]))["env"], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
ctx = ssl.create_default_context(cafile=ca)
def call(method, url, body=None, token=None):
    req = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers=dict({"Content-Type": "application/json"}, **({"X-Auth-Token": token} if token else {})))
    try:
        with urllib.request.urlopen(req, context=ctx) as r:
            return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers
status, headers = call("POST", env["OS_AUTH_URL"] + "/auth/tokens", {"auth": {"identity": {"methods": ["application_credential"],
    "application_credential": {"id": env["OS_APPLICATION_CREDENTIAL_ID"], "secret": env["OS_APPLICATION_CREDENTIAL_SECRET"]}}}})
assert status == 201, status
print(call(method, url + path, {"os-stop": None} if method == "POST" else None, headers["X-Subject-Token"])[0])
PY
}
cred=$(node_credential 2) || fail "the node credential after the deploy"
[ "$(cred_call GET /compute/v2.1/servers/detail)" = 401 ] || fail "the node credential may list servers"
ok "node credential: restricted to osfull's servers, in node-credential.json (0600), not in state.json"

ddl status osfull --output json >status.json
python3 - status.json <<'PY' || fail "nodes in state"
import json, sys
nodes = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
assert sorted(nodes) == ["master", "worker1", "worker2"], nodes
assert nodes["master"].get("jump", "") == ""
assert nodes["worker1"]["jump"] == "master" and nodes["worker2"]["jump"] == "master"
assert all(n["user"] == "root" for n in nodes.values())
assert nodes["master"]["private_address"] and nodes["master"]["private_address"] != nodes["master"]["address"]
print(nodes["master"]["private_address"], file=open("master_private", "w"))
PY
[ "$(ddl exec --cluster osfull -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 [worker2] worker2 " ] ||
  fail "exec on every node"
ddl exec --cluster osfull --nodes worker2 -- true || fail "exec on a worker through the master"
ok "exec on every node, the workers through the master"

ddl hostfile --cluster osfull >hosts.txt || fail "hostfile"
[ "$(grep -c 'slots=' hosts.txt)" = 3 ] || { cat hosts.txt; fail "hostfile has 3 hosts"; }
expect_in hosts.txt "^$(cat master_private) slots=" "hostfile names the master by its private address"
ok "hostfile with the cluster-network addresses"

ddl -v deploy osfull.yaml >again.log 2>&1 || { cat again.log; fail "second deploy"; }
ok "a second deploy converges"

# deploy --replace worker1 (issue 54): Terraform's own `-replace=ADDRESS`. The plan shows that replacement
# (and the node credential's, whose access rules name every server's id) and asks (exit 2 without -y,
# nothing changed); approved, worker1 is a new machine (its files gone, a new host key that ddl pins again)
# and the others are kept (their files, their pinned keys; worker2 with 0 Ansible changes, the master gets
# the new credential).
ddl exec --cluster osfull -- touch /etc/ddl/before-replace >/dev/null || fail "marking the nodes"
w1=$(ddl --output json status osfull | python3 -c 'import json,sys; print([n["address"] for n in json.load(sys.stdin)["nodes"] if n["name"] == "worker1"][0])')
kh="$STATE/osfull/known_hosts"
grep -v "^$w1 " "$kh" >kh-others.before
grep "^$w1 " "$kh" >kh-w1.before || { cat "$kh"; fail "no pinned key of worker1 ($w1)"; }
rc=0; ddl deploy osfull.yaml --replace worker1 </dev/null >rep.log 2>&1 || rc=$?
expect_rc "$rc" 2 rep.log "replace openstack_compute_instance_v2.worker\[0\]" "deploy --replace without -y"
ddl exec --cluster osfull -- test -e /etc/ddl/before-replace >/dev/null || fail "the refused --replace changed a node"
ddl deploy -y osfull.yaml --replace worker1 >rep.log 2>&1 || { cat rep.log; fail "deploy --replace worker1"; }
expect_in rep.log "plan: 2 to add, 0 to change, 2 to destroy" "the plan of --replace: worker1's server and the node credential"
expect_in rep.log "\[worker2\] 0 change(s)" "Ansible changed worker2"
ddl exec --cluster osfull -- 'test -e /etc/ddl/before-replace && echo kept || echo new' >marks.out || fail "reading the marks"
[ "$(grep -c kept marks.out)" = 2 ] && grep -q '^\[worker1\] new' marks.out || { cat marks.out; fail "only worker1 should be new"; }
[ "$(grep -v "^$w1 " "$kh")" = "$(cat kh-others.before)" ] || fail "the other nodes' pinned host keys changed"
grep -q "^$w1 " "$kh" && [ "$(grep "^$w1 " "$kh")" != "$(cat kh-w1.before)" ] || { cat "$kh"; fail "worker1's new host key is not pinned"; }
[ "$(ddl hostfile --cluster osfull | grep -c slots=)" = 3 ] || fail "hostfile after the replacement"
ddl run --cluster osfull -- hostname >rep-run.log 2>&1 || { cat rep-run.log; fail "run after the replacement"; }
ddl -v deploy --only provision osfull.yaml >again.log 2>&1 || { cat again.log; fail "provision after the replacement"; }
expect_in again.log "plan: 0 to add, 0 to change, 0 to destroy" "a provision after --replace replaced again"
ok "deploy --replace worker1: the plan shows the replacement and asks; approved, worker1 alone is new (new pinned key), the others kept; the next provision changes nothing"

# SSH opened to another CIDR: the plan deletes the old rule, so the re-deploy waits for approval; without a
# terminal and without -y it stops (exit 2) before anything changes, showing the plan's lines.
sed -i 's|allowed_cidrs: \[10.0.0.0/8\]|allowed_cidrs: [10.0.0.0/9]|' osfull.yaml
rc=0; ddl deploy osfull.yaml </dev/null >cidr.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat cidr.log; fail "a re-deploy deleting a rule without -y: exit $rc, expected 2"; }
expect_in cidr.log 'delete openstack_networking_secgroup_rule_v2.ssh\["10.0.0.0/8"\]' "the refused re-deploy does not show the plan"
expect_in cidr.log "run again with -y" "the refused re-deploy does not name the flag"
has_rule() { python3 -c 'import json,sys; sys.exit(0 if any(r["addr"] == "openstack_networking_secgroup_rule_v2.ssh[\"%s\"]" % sys.argv[2] for r in json.load(open(sys.argv[1]))["resources"]) else 1)' "$STATE/osfull/terraform/terraform.tfstate" "$1"; }
has_rule 10.0.0.0/8 || fail "the refused re-deploy changed the cluster"
ddl deploy -y osfull.yaml >cidr.log 2>&1 || { cat cidr.log; fail "re-deploy with -y"; }
has_rule 10.0.0.0/9 && ! has_rule 10.0.0.0/8 || fail "the approved re-deploy did not replace the rule"
ok "a re-deploy that deletes a resource shows the plan and needs approval (-y without a terminal); approved, it converges"

# Another worker flavor: Terraform resizes the workers in place (update). The plan says so and changes
# nothing; the deploy shows the same lines and asks on a terminal: "no" keeps the cluster as it is.
sed -i 's|workers: {count: 2, flavor: g1.small}|workers: {count: 2, flavor: m1.small}|' osfull.yaml
tfstate="$STATE/osfull/terraform/terraform.tfstate"
before=$(sha256sum <"$tfstate")
ddl plan osfull.yaml >plan.txt 2>plan.err || { cat plan.txt plan.err; fail "plan of a flavor change"; }
expect_in plan.txt '^  ~ update node worker1 (flavor g1.small -> flavor m1.small)$' "plan of a flavor change: the node"
expect_in plan.txt '^  ~ update resource openstack_compute_instance_v2.worker\[0\]$' "plan of a flavor change: the server"
expect_in plan.txt '^Nodes: 0 to create, 2 to update, 0 to replace, 0 to delete (1 unchanged).$' \
  "plan of a flavor change: the nodes' totals"
expect_in plan.txt '^Resources: 0 to add, 2 to change, 0 to destroy.$' "plan of a flavor change: the resources' totals"
[ "$(sha256sum <"$tfstate")" = "$before" ] || fail "ddl plan changed the Terraform state"
[ "$(ddl_on_tty "Type yes to go on: " no deploy osfull.yaml 2>tty.log)" = 1 ] || { cat tty.log; fail "a declined re-deploy"; }
expect_in tty.log "update openstack_compute_instance_v2.worker\[1\]" "the deploy's question does not show the plan"
expect_in tty.log "not approved: nothing was changed" "the declined deploy does not say nothing was changed"
[ "$(sha256sum <"$tfstate")" = "$before" ] || fail "a declined re-deploy changed the Terraform state"
[ "$(ddl_on_tty "Type yes to go on: " yes deploy osfull.yaml 2>tty.log)" = 0 ] || { cat tty.log; fail "an approved re-deploy"; }
ddl plan osfull.yaml | grep -q "^Nodes: 0 to create, 0 to update, 0 to replace, 0 to delete (3 unchanged).$" ||
  fail "the flavor change was not applied"
ok "a flavor change: plan shows the in-place updates; deploy asks on a terminal (no: nothing changes; yes: applied)"

# One worker fewer: only that worker's resources go, the rest of the cluster stays and answers.
sed -i 's|workers: {count: 2, flavor: m1.small}|workers: {count: 1, flavor: m1.small}|' osfull.yaml
ddl plan osfull.yaml >plan.txt 2>plan.err || { cat plan.txt plan.err; fail "plan of a worker fewer"; }
expect_in plan.txt '^  - delete node worker2 (flavor m1.small)$' "plan of a worker fewer: the node"
expect_in plan.txt '^  - delete resource openstack_compute_instance_v2.worker\[1\]$' "plan of a worker fewer: the server"
expect_in plan.txt '^Nodes: 0 to create, 0 to update, 0 to replace, 1 to delete (2 unchanged).$' \
  "plan of a worker fewer: the nodes' totals"
# The node credential's access rules name the servers: it is replaced with a rule set for the servers left.
expect_in plan.txt '^  -/+ replace resource openstack_identity_application_credential_v3.node\[0\]$' \
  "plan of a worker fewer: the node credential"
expect_in plan.txt '^Resources: 1 to add, 0 to change, 3 to destroy.$' "plan of a worker fewer: the resources' totals"
ddl deploy -y osfull.yaml >shrink.log 2>&1 || { cat shrink.log; fail "re-deploy with a worker fewer"; }
[ "$(ddl exec --cluster osfull -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 " ] ||
  fail "exec after the shrink"
[ "$(ddl hostfile --cluster osfull | grep -c slots=)" = 2 ] || fail "hostfile after the shrink"
ok "a worker fewer: plan names its node and resources; approved, it goes and the rest answers"
cred2=$(node_credential 1) || fail "the node credential after the shrink"
[ "$cred2" != "$cred" ] || fail "the shrink did not replace the node credential"
ok "a worker fewer replaces the node credential: its rules no longer name the deleted server"

# ddl stop / ddl start (autostop.action: stop's mechanism): the servers go SHUTOFF through Terraform's
# power_state, their nodes answer nothing, commands that need them are refused with the way out; start boots
# them with their disks as they were, and the cluster runs jobs again.
t_stop=$SECONDS
ddl exec --cluster osfull -- sh -c 'hostname > /opt/ddl/before-stop' || fail "writing a file before the stop"
master_ip=$(ddl status osfull --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["address"])')
timeout 3 bash -c "exec 3<>/dev/tcp/$master_ip/22" || fail "the running master does not take SSH at $master_ip:22"
rc=0; ddl stop osfull </dev/null >stop.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat stop.log; fail "stop without -y and without a terminal: exit $rc, expected 2"; }
ddl stop -y osfull >stop.log 2>&1 || { cat stop.log; fail "stop"; }
expect_in stop.log "^  stops: master (" "stop does not name the nodes that stop"
expect_in stop.log "boot volume(s) of 20 GB" "stop does not say what keeps costing"
ddl status osfull >status.txt 2>&1 || { cat status.txt; fail "status of a stopped cluster"; }
expect_in status.txt "^stopped since " "status does not say the cluster is stopped"
ddl list | grep -q "^osfull .* stopped" || { ddl list; fail "list does not show the cluster stopped"; }
python3 - "$FAKE_OPENSTACK_RESOURCES" osfull <<'PY' || fail "the servers are not SHUTOFF"
import json, sys
servers = [s for s in json.load(open(sys.argv[1]))["servers"] if s["metadata"].get("ddl_cluster") == sys.argv[2]]
assert len(servers) == 2 and all(s["status"] == "SHUTOFF" and s["OS-EXT-STS:vm_state"] == "stopped" for s in servers), servers
PY
if timeout 3 bash -c "exec 3<>/dev/tcp/$master_ip/22" 2>/dev/null; then fail "the stopped master still takes SSH"; fi
rc=0; ddl run --cluster osfull -- hostname >run.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat run.log; fail "run on a stopped cluster: exit $rc, expected 2"; }
expect_in run.log "hint: ddl start osfull" "the refused run does not name ddl start"
ddl plan osfull.yaml >plan-stopped.txt 2>&1 || { cat plan-stopped.txt; fail "plan of a stopped cluster"; }
expect_in plan-stopped.txt '^Nodes: 0 to create, 0 to update' "plan of a stopped cluster"
if grep -q "resource openstack_compute_instance_v2" plan-stopped.txt; then cat plan-stopped.txt; fail "the plan of a stopped cluster would start it"; fi
rc=0; ddl deploy osfull.yaml >deploy-stopped.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat deploy-stopped.log; fail "deploy of a stopped cluster: exit $rc, expected 2"; }
expect_in deploy-stopped.log "hint: ddl start osfull" "the refused deploy does not name ddl start"
ddl stop -y osfull | grep -q "already stopped" || fail "a second stop"
ddl start osfull >start.log 2>&1 || { cat start.log; fail "start"; }
expect_in start.log "cluster osfull started" "start does not finish"
if grep -q "Ansible not run" start.log; then cat start.log; fail "start did not run configure again"; fi
[ "$(ddl exec --cluster osfull -- cat /opt/ddl/before-stop | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 " ] ||
  fail "the files written before the stop are not there after the start"
ddl run --cluster osfull -- hostname >run.log 2>&1 || { cat run.log; fail "run after the start"; }
python3 - "$FAKE_OPENSTACK_RESOURCES" osfull <<'PY' || fail "the servers are not ACTIVE again"
import json, sys
servers = [s for s in json.load(open(sys.argv[1]))["servers"] if s["metadata"].get("ddl_cluster") == sys.argv[2]]
assert all(s["status"] == "ACTIVE" for s in servers), servers
PY
ok "stop: plan, SHUTOFF servers, nodes silent, run refused naming ddl start; start: files kept, run works ($((SECONDS - t_stop)) s)"

# A cluster whose state folder is lost (a CI job's container gone, and with it Terraform's state): the cloud
# still has its servers (metadata ddl_cluster/ddl_state) and its tagged Neutron resources, and ddl gc --spec,
# run from another state folder, finds it there and removes it through the APIs. osfull, whose state folder
# is here, is named and left alone.
openstack_spec osleak 1
echo "lifetime: 1h" >>osleak.yaml
ddl deploy osleak.yaml >leak.log 2>&1 || { cat leak.log; fail "deploy osleak"; }
python3 - "$FAKE_OPENSTACK_RESOURCES" osleak "$STATE/osleak" <<'PY' || fail "the cloud does not carry osleak's markers"
import datetime, json, os, sys
reg, name, state = json.load(open(sys.argv[1])), sys.argv[2], os.path.realpath(sys.argv[3])
servers = [s for s in reg["servers"] if s["metadata"].get("ddl_cluster") == name]
assert len(servers) == 2 and all(os.path.realpath(s["metadata"]["ddl_state"]) == state for s in servers), servers
# lifetime: 1h -> the servers' ddl_expires and the Neutron resources' ddl-expires tag: created_at plus an hour.
created = datetime.datetime.strptime(json.load(open(state + "/state.json"))["created_at"], "%Y-%m-%dT%H:%M:%SZ")
expires = (created + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
assert all(s["metadata"].get("ddl_expires") == expires for s in servers), (expires, servers)
for kind in ("networks", "subnets", "routers", "ports", "security_groups", "floatingips"):
    assert any("ddl-cluster=" + name in r.get("tags", []) and "ddl" in r.get("tags", []) and
               "ddl-expires=" + expires in r.get("tags", []) for r in reg[kind]), kind
assert not any("ddl_expires" in s["metadata"] for s in reg["servers"] if s["metadata"].get("ddl_cluster") == "osfull")
PY
rm -rf "$STATE/osleak"
# gc --expired --spec asks the cloud: osleak's recorded end is an hour away, so it is named and stays.
"$DDL" --state-dir "$WORK/other-state" gc --expired --spec osleak.yaml -y >gcx.log 2>&1 || { cat gcx.log; fail "gc --expired --spec"; }
expect_in gcx.log "^ddl gc: not yet: osleak (openstack: its lifetime ends .* (in 5[0-9]m)" "gc --expired --spec: the time left"
expect_in gcx.log "^gc: 0 destroyed, 0 failed" "gc --expired --spec destroyed a cluster whose end is to come"
ok "lifetime is recorded on the cloud (ddl_expires, ddl-expires=); gc --expired --spec names a cluster whose end is to come and leaves it"
leak_master=$(python3 -c 'import json, sys
print(next(s["id"] for s in json.load(open(sys.argv[1]))["servers"] if s["name"] == "osleak-master"))' "$FAKE_OPENSTACK_RESOURCES")
[ "$(cred_call POST "/compute/v2.1/servers/$leak_master/action")" = 401 ] ||
  fail "osfull's node credential may stop a server of another cluster"
ok "osfull's node credential is refused on another cluster's server (401)"
gc_other --dry-run >gc-dry.log 2>&1 || { cat gc-dry.log; fail "gc --spec --dry-run"; }
expect_in gc-dry.log "^would destroy osleak (found on target openstack, created 0 h ago: 2 server(s) on cloud fakecloud" \
  "gc --spec --dry-run: what it would remove"
expect_in gc-dry.log "^ddl gc: not touched: osfull (openstack: its state is in " "gc --spec --dry-run: what it leaves"
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["servers"]))' "$FAKE_OPENSTACK_RESOURCES")" = 4 ] ||
  fail "gc --dry-run removed something"
gc_other -y >gc.log 2>&1 || { cat gc.log; fail "gc --spec"; }
expect_in gc.log "^gc: 1 destroyed, 0 failed" "gc --spec did not remove osleak"
python3 - "$FAKE_OPENSTACK_RESOURCES" <<'PY' || fail "resources of osleak left on the cloud"
import json, sys
reg = json.load(open(sys.argv[1]))
left = [(k, r.get("name", r.get("id"))) for k, items in reg.items() for r in items
        if "osleak" in json.dumps(r)]
assert not left, left
assert len([s for s in reg["servers"] if s["metadata"].get("ddl_cluster") == "osfull"]) == 2, reg["servers"]
PY
if ip netns list | grep -q "^ddl-osleak-"; then fail "nodes of osleak left"; fi
if pgrep -f "$WORK/nodes/osleak/" >/dev/null; then fail "processes of osleak left"; fi
[ "$(ddl exec --cluster osfull -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 " ] ||
  fail "osfull after the gc of osleak"
ok "gc --spec from another state folder: a cluster whose state folder is gone is found on the cloud and removed through its APIs; the owned one stays"
# Servers that record no state folder (a ddl older than the ddl_state metadata deployed them): whether the
# cluster is still used cannot be told, so gc names it and leaves it alone.
python3 - "$FAKE_OPENSTACK_RESOURCES" "$DDL_SOURCE_DIR/tests/fakes" <<'PY' || fail "dropping osfull's ddl_state"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
from openstack_registry import registry
with registry(sys.argv[1], write=True) as reg:
    for s in reg["servers"]:
        if s["metadata"].get("ddl_cluster") == "osfull":
            s["metadata"].pop("ddl_state", None)
PY
gc_other -y >gc-old.log 2>&1 || { cat gc-old.log; fail "gc with servers that record no state folder"; }
expect_in gc-old.log "not touched: osfull (openstack: it records no state folder" \
  "gc did not leave alone a cluster that records no state folder"
expect_in gc-old.log "^gc: 0 destroyed, 0 failed" "gc with a cluster that records no state folder: its totals"
[ "$(ddl exec --cluster osfull -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 " ] ||
  fail "osfull after a gc that should have left it alone"
ok "gc --spec names and leaves alone a cluster whose servers record no state folder"

# The idle clock ends osfull itself (autostop.action: stop). Namespace nodes share this machine's file system,
# so configure gives them the base roles only (playbooks/site.yml); the idle_clock role is applied here to the
# master alone (its /etc/ddl is its own), with what configure gives Ansible: ddl's inventory, the spec's
# variables and the 0600 secrets file that carries the node credential. Then an idle spell planted as 2
# minutes long and one tick with a 1-minute limit: the master records why on its server and stops every
# server, its own last (its namespace, and this tick's SSH session with it, go down).
t_auto=$SECONDS
mkdir -p idle-play/roles
cp -r "$DDL_SOURCE_DIR/playbooks/ansible.cfg" "$DDL_SOURCE_DIR/playbooks/callback_plugins" idle-play/
cp -r "$DDL_SOURCE_DIR/playbooks/roles/idle_clock" idle-play/roles/
printf -- '- name: Idle clock on the master\n  hosts: master\n  gather_facts: false\n  roles:\n    - idle_clock\n' >idle-play/idle.yml
ANSIBLE_CONFIG=idle-play/ansible.cfg ansible-playbook -i "$STATE/osfull/ansible/inventory.yml" idle-play/idle.yml \
  -e "@$STATE/osfull/rendered/ansible/vars.json" -e "@$STATE/osfull/ansible/secrets.json" >idle-play.log 2>&1 ||
  { cat idle-play.log; fail "the idle_clock role on the master"; }
on_master() { ddl exec --cluster osfull --nodes master -- "$@"; }
on_master stat -c '%a %U' /etc/ddl/cloud.env | grep -q " 600 root$" ||
  { cat idle-play.log; fail "the master's /etc/ddl/cloud.env is not 0600 root"; }
on_master grep -q "^OS_APPLICATION_CREDENTIAL_ID=$cred2$" /etc/ddl/cloud.env || fail "the master's cloud.env has another credential"
on_master grep -q "^DDL_IDLE_END=cloud$" /etc/ddl/idle.env || fail "the master's idle.env does not end the cluster through the cloud"
# The nodes see this machine's load (other suites, the build), which is not the cluster's: the load limit is lifted.
on_master env DDL_IDLE_CPU_LOAD=1000 /opt/ddl/bin/ddl-idle tick >tick.out 2>&1 || { cat tick.out; fail "a first tick"; }
on_master python3 -c "import json, time
p = '/var/lib/ddl/idle/osfull.json'; r = json.load(open(p))
r['idle_since'] = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() - 120))
json.dump(r, open(p, 'w'))" || fail "planting idle_since"
on_master env DDL_IDLE_CPU_LOAD=1000 DDL_IDLE_MINUTES=1 /opt/ddl/bin/ddl-idle tick >tick.out 2>&1 || true
python3 - "$FAKE_OPENSTACK_RESOURCES" <<'PY' || { cat tick.out; fail "the idle clock did not stop osfull"; }
import json, sys
servers = [s for s in json.load(open(sys.argv[1]))["servers"] if s["metadata"].get("ddl_cluster") == "osfull"]
assert len(servers) == 2 and all(s["status"] == "SHUTOFF" for s in servers), [(s["name"], s["status"]) for s in servers]
master = [s for s in servers if s["name"] == "osfull-master"][0]
assert master["metadata"]["ddl_autostop"].startswith("ddl-idle: autostop ends the allocation at "), master["metadata"]
PY
ddl status osfull >status.txt 2>&1 || { cat status.txt; fail "status after the idle clock's end"; }
expect_in status.txt "ended by autostop at .*: ddl-idle: autostop ends the allocation" "status does not say autostop ended osfull"
ddl gc --expired -y >gcx.log 2>&1 || { cat gcx.log; fail "gc --expired after the idle clock's end"; }
ddl status osfull >status.txt 2>&1 || { cat status.txt; fail "status after gc --expired"; }
expect_in status.txt "^stopped since " "gc --expired did not record osfull stopped"
# ddl start boots it again; the master's ddl_autostop record goes first, so that a later stop is not an end.
ddl start osfull >start2.log 2>&1 || { cat start2.log; fail "start after the idle clock's end"; }
python3 - "$FAKE_OPENSTACK_RESOURCES" <<'PY' || fail "the servers after ddl start"
import json, sys
servers = [s for s in json.load(open(sys.argv[1]))["servers"] if s["metadata"].get("ddl_cluster") == "osfull"]
assert all(s["status"] == "ACTIVE" and "ddl_autostop" not in s["metadata"] for s in servers), servers
PY
# The secret is in no file but node-credential.json and Ansible's secrets file (0600), the master's cloud.env
# (0600; the fake node's /etc/ddl is a folder here), Terraform's state and the stand-in's own store.
# Searched by python (the secret read from node-credential.json there): never in a grep's argv, which the
# process watch would see.
secret_files() {  # the files under $WORK that hold the secret on stdin, one a line
  python3 -c 'import os, sys
secret = sys.stdin.read().strip().encode()
for root, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if d != ".secret-watch"]
    for f in files:
        p = os.path.join(root, f)
        try:
            if os.path.isfile(p) and not os.path.islink(p) and secret in open(p, "rb").read():
                print(p)
        except OSError:
            pass' "$WORK"
}
secret=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["env"]["OS_APPLICATION_CREDENTIAL_SECRET"])' \
  "$STATE/osfull/node-credential.json")
allowed='/osfull/(node-credential\.json|ansible/secrets\.json|terraform/terraform\.tfstate(\.backup)?|nodes/master/etc_ddl/cloud\.env)$'
hits=$(secret_files <<<"$secret" | grep -v '/cloud-resources\.json$' || true)
left=$(grep -Ev "$allowed" <<<"$hits" || true)
[ -z "$left" ] || fail "the node credential's secret is in $left"
for f in $(grep -E "$allowed" <<<"$hits"); do
  case $f in */terraform.tfstate*) ;; *) [ "$(stat -c %a "$f")" = 600 ] || fail "$f holds the node credential and is not 0600";; esac
done
ok "the idle clock stops osfull with its node credential; status says ended by autostop; gc --expired records it stopped; start boots it and clears the record ($((SECONDS - t_auto)) s)"

ddl destroy -y osfull >destroy.log 2>&1 || { cat destroy.log; fail "destroy"; }
assert_gone osfull
if pgrep -f "$WORK/nodes/osfull/" >/dev/null; then fail "processes of osfull left"; fi
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); left={k: v for k, v in r.items() if v}; assert not left, left' \
  "$FAKE_OPENSTACK_RESOURCES" || fail "destroy left resources on the cloud"
assert_no_secret
# The process watch of assert_no_secret (every argv and child environment since the cloud started) for the
# node credential's secret, known only after the deploy.
for f in argv environ; do
  if python3 -c 'import sys; sys.exit(0 if sys.stdin.read().strip().encode() in open(sys.argv[1], "rb").read() else 1)' \
    "$WORK/.secret-watch/$f" <<<"$secret"; then fail "the node credential's secret was in a process's $f"; fi
done
ok "destroy leaves no namespace, no state and no credential (revoked); neither the password nor the node credential's secret was written or passed"
