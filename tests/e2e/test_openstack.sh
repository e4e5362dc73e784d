#!/usr/bin/env bash
# OpenStack target end to end with stand-ins for what cannot run here: the Terraform stand-in creates the
# instances as real local nodes (ddl-fake-nodes --bastion: only the master reachable from this machine),
# pre-flight talks HTTPS to the API stand-in. Everything after provision is real: SSH to the workers
# through the master, configure, probe, hostfile, exec; destroy leaves nothing behind.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/helpers/openstack.sh"
trap 'rc=$?; kill $FAKE_CLOUD_PID 2>/dev/null; (exit $rc); cleanup' EXIT
DDL_FAKE_NODES="$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes"
[ -x "$DDL_FAKE_NODES" ] || fail "$DDL_FAKE_NODES is not built"
export DDL_FAKE_NODES
start_fake_cloud
openstack_spec osfull 2

FAKE_TF_FAIL_APPLY=1 ddl deploy osfull.yaml >fail.log 2>&1 && fail "the injected apply failure passed"
grep -q "openstack_compute_instance_v2.worker\[0\] (create): Error creating OpenStack server" fail.log \
  || { cat fail.log; fail "apply failure names the resource and the provider's message"; }
ok "a failed apply names the resource and the provider's message"

ddl -v deploy osfull.yaml >deploy.log 2>&1 || { cat deploy.log; fail "resumed deploy"; }
grep -q "provision: ok" deploy.log || { cat deploy.log; fail "provision did not run again"; }
ok "deploy resumes after the failed apply and finishes"

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
grep -q "^$(cat master_private) slots=" hosts.txt || { cat hosts.txt; fail "hostfile names the master by its private address"; }
ok "hostfile with the cluster-network addresses"

ddl -v deploy osfull.yaml >again.log 2>&1 || { cat again.log; fail "second deploy"; }
ok "a second deploy converges"

# SSH opened to another CIDR: the plan deletes the old rule, so the re-deploy waits for approval; without a
# terminal and without -y it stops (exit 2) before anything changes, showing the plan's lines.
sed -i 's|allowed_cidrs: \[10.0.0.0/8\]|allowed_cidrs: [10.0.0.0/9]|' osfull.yaml
rc=0; ddl deploy osfull.yaml </dev/null >cidr.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat cidr.log; fail "a re-deploy deleting a rule without -y: exit $rc, expected 2"; }
grep -q 'delete openstack_networking_secgroup_rule_v2.ssh\["10.0.0.0/8"\]' cidr.log && grep -q "run again with -y" cidr.log ||
  { cat cidr.log; fail "the refused re-deploy does not show the plan and the flag"; }
has_rule() { python3 -c 'import json,sys; sys.exit(0 if any(r["addr"] == "openstack_networking_secgroup_rule_v2.ssh[\"%s\"]" % sys.argv[2] for r in json.load(open(sys.argv[1]))["resources"]) else 1)' "$STATE/osfull/terraform/terraform.tfstate" "$1"; }
has_rule 10.0.0.0/8 || fail "the refused re-deploy changed the cluster"
ddl deploy -y osfull.yaml >cidr.log 2>&1 || { cat cidr.log; fail "re-deploy with -y"; }
has_rule 10.0.0.0/9 && ! has_rule 10.0.0.0/8 || fail "the approved re-deploy did not replace the rule"
ok "a re-deploy that deletes a resource shows the plan and needs approval (-y without a terminal); approved, it converges"

ddl destroy -y osfull >destroy.log 2>&1 || { cat destroy.log; fail "destroy"; }
assert_gone osfull
assert_no_secret
ok "destroy leaves no namespace and no state; the password was never written"
