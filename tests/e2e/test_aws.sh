#!/usr/bin/env bash
# AWS target end to end with stand-ins for what cannot run here: pre-flight signs its EC2 and Service
# Quotas calls with curl's SigV4 against tests/fakes/aws_api.py (which verifies every signature); the
# Terraform stand-in, in its AWS mode, checks the credentials it is given against the same stand-in and
# creates the instances as real local nodes (ddl-fake-nodes --bastion: only the master reachable from this
# machine). Everything after provision is real: SSH to the workers through the master, configure, probe,
# hostfile, exec; destroy leaves nothing behind, and the secret key is never in argv, a child's
# environment, or anything ddl writes. The two stand-ins share one simulated region, so a cluster whose state
# folder is lost is found there by `ddl gc --spec` and removed through the EC2 API.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/helpers/aws.sh"
gc_other() { "$DDL" --state-dir "$WORK/other-state" gc --spec awsleak.yaml --prefix aws --older-than 0s "$@"; }
# Namespace nodes share this machine's /var/lib/ddl: awsfull's idle record there is this suite's alone, and a
# record left by an earlier run would be read as this cluster's.
idle_record=/var/lib/ddl/idle/awsfull.json
rm -f "$idle_record"
# The clusters are destroyed while the stand-in still answers (Terraform's provider checks the keys with it).
trap 'rc=$?; set +e; rm -f "$idle_record"; [ -f awsleak.yaml ] && [ ! -d "$STATE/awsleak" ] && gc_other -y >/dev/null 2>&1
      for c in "${CLUSTERS[@]}"; do ddl destroy -y "$c" >/dev/null 2>&1; done
      kill $FAKE_AWS_PID 2>/dev/null || true; (exit $rc); cleanup' EXIT
DDL_FAKE_NODES="$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes"
[ -x "$DDL_FAKE_NODES" ] || fail "$DDL_FAKE_NODES is not built"
export DDL_FAKE_NODES
use_ping_playbook
start_fake_aws

# --- pre-flight refusals: nothing is created -----------------------------------------------------------
aws_spec awsbad 2 p5.48xlarge
set +e
ddl deploy awsbad.yaml >bad.log 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a type the region does not offer passed pre-flight"
expect_in bad.log "nodes.workers.flavor: instance type p5.48xlarge is not offered in us-east-1" \
  "pre-flight names the key and the type"
expect_in bad.log "nothing was created" "pre-flight says nothing was created"
[ ! -e "$STATE/awsbad/terraform/.terraform" ] || fail "terraform ran after a failed pre-flight"
ok "pre-flight refuses an instance type the region does not offer (exit $rc)"

# Temporary credentials of a named profile: the session token goes with every signed request.
write_aws 4
aws_spec awsquota 2 g5.xlarge "profile: temp"
set +e
ddl deploy awsquota.yaml >quota.log 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a quota too small passed pre-flight"
expect_in quota.log "quota: 8 On-Demand G and VT vCPUs (quota L-DB2E81BA) requested, the limit in us-east-1 is 4" \
  "pre-flight names the quota"
expect_in quota.log "AWS credentials from $WORK/home/.aws/credentials \[temp\]" \
  "the spec's profile gives the credentials"
expect_in "$AWS_CFG.requests" '"signed_headers": \["host", "x-amz-date", "x-amz-security-token"\]' "the session token is signed"
ok "pre-flight with a profile's temporary credentials refuses vCPUs beyond the On-Demand G and VT quota (exit $rc)"
ddl destroy -y awsbad >/dev/null 2>&1 || true
ddl destroy -y awsquota >/dev/null 2>&1 || true
write_aws 64

# --- deploy, status, exec, destroy ---------------------------------------------------------------------
aws_spec awsfull 2
# gc --expired stops it below; with the node credential, the master's clock stops it at the end.
echo "autostop: {idle_minutes: 60, action: stop, node_credential: true}" >>awsfull.yaml
FAKE_TF_FAIL_APPLY=1 ddl -v deploy awsfull.yaml >fail.log 2>&1 && fail "the injected apply failure passed"
expect_in fail.log "aws_instance.worker\[0\] (create): creating EC2 Instance" \
  "apply failure names the resource and the provider's message"
ok "a failed apply names the resource and the provider's message"

ddl -v deploy awsfull.yaml >deploy.log 2>&1 || { cat deploy.log; fail "resumed deploy"; }
expect_in deploy.log "provision: ok" "provision did not run again"
expect_in fail.log "AWS credentials from $WORK/home/.aws/credentials \[default\], region us-east-1" \
  "deploy names where the credentials came from"
expect_in fail.log "On-Demand G and VT vCPUs (quota L-DB2E81BA): 8 needed, limit 64" \
  "pre-flight checked the quota"
ok "deploy resumes after the failed apply and finishes; pre-flight checked types, image and quotas"

python3 - "$FAKE_TF_LOG_AWS" <<'PY' || fail "Terraform's AWS environment"
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["argv"][0] == "version":
        continue
    env = set(e["aws_env"])
    assert {"AWS_PROFILE", "AWS_REGION", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE"} <= env, e
    assert "AWS_SECRET_ACCESS_KEY" not in env, e
PY
ok "Terraform gets the profile, files and region in its environment, not the secret"

ddl status awsfull --output json >status.json
python3 - status.json <<'PY' || fail "nodes in state"
import json, sys
nodes = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
assert sorted(nodes) == ["master", "worker1", "worker2"], nodes
assert nodes["master"].get("jump", "") == ""
assert nodes["worker1"]["jump"] == "master" and nodes["worker2"]["jump"] == "master"
assert nodes["master"]["private_address"] and nodes["master"]["private_address"] != nodes["master"]["address"]
PY
[ "$(ddl exec --cluster awsfull -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 [worker2] worker2 " ] ||
  fail "exec on every node"
ddl exec --cluster awsfull --nodes worker2 -- true || fail "exec on a worker through the master"
ok "status shows the workers behind the master; exec on every node"

# deploy --replace worker2 (issue 54): Terraform's `-replace=aws_instance.worker[1]` (its
# aws_ec2_instance_state follows: instance_id forces a new one); worker2 alone is a new instance, the others
# keep their files.
ddl exec --cluster awsfull -- touch /etc/ddl/before-replace >/dev/null || fail "marking the nodes"
ddl deploy -y awsfull.yaml --replace worker2 >rep.log 2>&1 || { cat rep.log; fail "deploy --replace worker2"; }
expect_in rep.log "plan: 2 to add, 0 to change, 2 to destroy" "the plan of --replace: the instance and its state resource"
expect_in rep.log "aws_instance.worker\[1\]" "the replacement does not name worker2's instance"
ddl exec --cluster awsfull -- 'test -e /etc/ddl/before-replace && echo kept || echo new' >marks.out || fail "reading the marks"
[ "$(grep -c kept marks.out)" = 2 ] && grep -q '^\[worker2\] new' marks.out || { cat marks.out; fail "only worker2 should be new"; }
ok "deploy --replace worker2: one replacement in Terraform's plan; worker2 alone is new"

# autostop.action: stop: `ddl gc --expired` stops a cluster idle past idle_minutes (an idle spell of 2 hours
# planted in the master's idle record), through Terraform's aws_ec2_instance_state (StopInstances); the nodes
# are silent and run is refused with the way out; `ddl start` (StartInstances) boots them with their disks
# and runs configure again.
t_stop=$SECONDS
ddl exec --cluster awsfull -- sh -c 'hostname > /opt/ddl/before-stop' || fail "writing a file before the stop"
master_ip=$(ddl status awsfull --output json | python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"][0]["address"])')
timeout 3 bash -c "exec 3<>/dev/tcp/$master_ip/22" || fail "the running master does not take SSH at $master_ip:22"
# No clock runs on these nodes (the ping playbook applies no idle_clock role), so the spell is planted as
# the clock's first record would be: in the folder the clock makes on its first tick (/var/lib/ddl/idle of
# this machine, which namespace nodes share; it is there only where a clock ever ran), written to a temporary
# file and renamed, as the clock writes it. Then read back through the clock's own `ddl-idle show`, which is
# how gc reads it.
ddl exec --cluster awsfull --nodes master -- python3 -c "import json, os, time
now = time.time()
os.makedirs('/var/lib/ddl/idle', exist_ok=True)
with open('$idle_record.tmp', 'w') as f:
    json.dump({'checked_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)), 'busy': [], 'period_s': 60,
               'idle_since': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now - 7200))}, f)
os.replace('$idle_record.tmp', '$idle_record')" >plant.log 2>&1 || { cat plant.log; fail "planting a 2-hour idle spell in $idle_record"; }
ddl exec --cluster awsfull --nodes master -- /opt/ddl/bin/ddl-idle show >show.log 2>&1 && grep -q '"idle_since": "20' show.log ||
  { cat show.log; fail "the master's clock does not show the planted record ($idle_record)"; }
ddl gc --expired -y >gc-stop.log 2>&1 || { cat gc-stop.log; fail "gc --expired with autostop.action: stop"; }
expect_in gc-stop.log "^stopping awsfull (idle since " "gc --expired does not say it stops the idle cluster"
expect_in gc-stop.log "EBS root volume(s) of 100 GB" "the stop does not say what keeps costing"
expect_in gc-stop.log "^gc: 0 destroyed, 0 failed, 1 stopped" "gc --expired's totals"
ddl status awsfull --output json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["power"] == "stopped" else 1)' ||
  fail "status --output json does not say stopped"
ddl list | grep -q "^awsfull .* stopped" || { ddl list; fail "list does not show the cluster stopped"; }
python3 - "$FAKE_AWS_RESOURCES" awsfull <<'PY' || fail "the instances are not stopped"
import json, sys
live = [i for i in json.load(open(sys.argv[1]))["instances"] if {"key": "ddl-cluster", "value": sys.argv[2]} in i["tagSet"]
        and i["instanceState"]["name"] != "terminated"]
assert len(live) == 3 and all(i["instanceState"] == {"code": 80, "name": "stopped"} for i in live), live
PY
ddl gc --expired -y >gc-again.log 2>&1 || { cat gc-again.log; fail "a second gc --expired"; }
expect_in gc-again.log "^gc: 0 destroyed, 0 failed$" "a second gc --expired touched the stopped cluster"
if timeout 3 bash -c "exec 3<>/dev/tcp/$master_ip/22" 2>/dev/null; then fail "the stopped master still takes SSH"; fi
rc=0; ddl run --cluster awsfull -- hostname >run.log 2>&1 || rc=$?
[ $rc = 2 ] || { cat run.log; fail "run on a stopped cluster: exit $rc, expected 2"; }
expect_in run.log "hint: ddl start awsfull" "the refused run does not name ddl start"
ddl start awsfull >start.log 2>&1 || { cat start.log; fail "start"; }
[ "$(ddl exec --cluster awsfull -- cat /opt/ddl/before-stop | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 [worker2] worker2 " ] ||
  fail "the files written before the stop are not there after the start"
ddl run --cluster awsfull -- hostname >run.log 2>&1 || { cat run.log; fail "run after the start"; }
if grep -q "Ansible not run" start.log; then cat start.log; fail "start did not run configure again"; fi
ok "gc --expired stops an idle cluster (autostop.action: stop): EC2 instances stopped (80), nodes silent, run refused naming ddl start; start: files kept, configure again, run works ($((SECONDS - t_stop)) s)"

# A cluster whose state folder is lost (a CI job's container gone, and with it Terraform's state): the region
# still has its instances (tags ddl-cluster, ddl-managed, ddl-state) and its tagged VPC, subnet, gateway,
# route table, security groups and key pair, and ddl gc --spec, run from another state folder, finds it there
# and removes it through the EC2 API. awsfull, whose state folder is here, is named and left alone.
aws_spec awsleak 1
printf 'lifetime: 1h\nautostop: {idle_minutes: 60, node_credential: true}\n' >>awsleak.yaml
ddl deploy awsleak.yaml >leak.log 2>&1 || { cat leak.log; fail "deploy awsleak"; }
python3 - "$FAKE_AWS_RESOURCES" awsleak "$STATE/awsleak" <<'PY' || fail "the region does not carry awsleak's tags"
import datetime, json, os, sys
reg, name, state = json.load(open(sys.argv[1])), sys.argv[2], os.path.realpath(sys.argv[3])
tags = lambda r: {t["key"]: t["value"] for t in r.get("tagSet", [])}
inst = [i for i in reg["instances"] if tags(i).get("ddl-cluster") == name and i["instanceState"]["name"] == "running"]
assert len(inst) == 2 and all(os.path.realpath(tags(i)["ddl-state"]) == state for i in inst), inst
# lifetime: 1h -> ddl-expires on every resource: the state's created_at plus an hour.
created = datetime.datetime.strptime(json.load(open(state + "/state.json"))["created_at"], "%Y-%m-%dT%H:%M:%SZ")
expires = (created + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
assert all(tags(i).get("ddl-expires") == expires for i in inst), (expires, inst)
assert [p["InstanceProfileName"] for p in reg["iam_instance_profiles"]
        if {"Key": "ddl-cluster", "Value": name} in p["Tags"]] == ["awsleak-master"]
for kind in ("vpcs", "subnets", "internet_gateways", "route_tables", "security_groups", "key_pairs"):
    assert any(tags(r).get("ddl-cluster") == name and tags(r).get("ddl-managed") == "true" and
               tags(r).get("ddl-expires") == expires for r in reg[kind]), kind
assert not any("ddl-expires" in tags(i) for i in reg["instances"] if tags(i).get("ddl-cluster") == "awsfull")
PY
expires=$(python3 -c 'import datetime,json,sys; c=datetime.datetime.strptime(json.load(open(sys.argv[1]))["created_at"], "%Y-%m-%dT%H:%M:%SZ"); print((c + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))' "$STATE/awsleak/state.json")
rm -rf "$STATE/awsleak"
gc_other --dry-run >gc-dry.log 2>&1 || { cat gc-dry.log; fail "gc --spec --dry-run"; }
expect_in gc-dry.log "^would destroy awsleak (found on target aws, created 0 h ago: 2 instance(s) in region us-east-1" \
  "gc --spec --dry-run: what it would remove"
expect_in gc-dry.log "^ddl gc: not touched: awsfull (aws: its state is in " "gc --spec --dry-run: what it leaves"
[ "$(python3 -c 'import json,sys; print(sum(i["instanceState"]["name"] == "running" for i in json.load(open(sys.argv[1]))["instances"]))' "$FAKE_AWS_RESOURCES")" = 5 ] ||
  fail "gc --dry-run removed something"
# gc --expired --spec from the region's side: awsleak's lifetime (its ddl-expires tag) has an hour to go, so
# it is named with the time left and stays; without the tag it is left alone; once the tag's time has
# passed it is destroyed (plan first: --dry-run; then -y). awsfull's state is here: named, left alone.
gc_expired() { "$DDL" --state-dir "$WORK/other-state" gc --expired --spec awsleak.yaml "$@"; }
set_expiry() {
  python3 - "$FAKE_AWS_RESOURCES" "$DDL_SOURCE_DIR/tests/fakes" "$1" <<'PY' || fail "planting awsleak's ddl-expires"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
from aws_region import registry
with registry(sys.argv[1], write=True) as reg:
    for i in reg["instances"]:
        tags = {t["key"]: t["value"] for t in i["tagSet"] if t["key"] != "ddl-expires"}
        if tags.get("ddl-cluster") == "awsleak":
            if sys.argv[3]:
                tags["ddl-expires"] = sys.argv[3]
            i["tagSet"] = [{"key": k, "value": v} for k, v in sorted(tags.items())]
PY
}
running() { python3 -c 'import json,sys; print(sum(i["instanceState"]["name"] == "running" for i in json.load(open(sys.argv[1]))["instances"]))' "$FAKE_AWS_RESOURCES"; }
gc_expired -y >gcx.log 2>&1 || { cat gcx.log; fail "gc --expired --spec before the end"; }
expect_in gcx.log "^ddl gc: not yet: awsleak (aws: its lifetime ends $expires (in 5[0-9]m)" "gc --expired --spec: the time left"
expect_in gcx.log "^ddl gc: not touched: awsfull (aws: its state is in " "gc --expired --spec: the owned cluster"
expect_in gcx.log "^gc: 0 destroyed, 0 failed" "gc --expired --spec before the end: its totals"
set_expiry ""
gc_expired -y >gcx.log 2>&1 || { cat gcx.log; fail "gc --expired --spec without the tag"; }
expect_in gcx.log "^ddl gc: not touched: awsleak (aws: it records no end of its lifetime" "gc --expired --spec: no tag"
[ "$(running)" = 5 ] || fail "gc --expired --spec removed something before the end"
ok "gc --expired --spec: a cluster whose recorded end is to come is named with the time left, one without it left alone"
set_expiry "$(date -u -d '-1 min' +%Y-%m-%dT%H:%M:%SZ)"
gc_expired --dry-run >gcx.log 2>&1 || { cat gcx.log; fail "gc --expired --spec --dry-run"; }
expect_in gcx.log "^would destroy awsleak (found on target aws, created 0 h ago: 2 instance(s) in region us-east-1; its lifetime ended .*; its state folder .* is gone)" \
  "gc --expired --spec --dry-run: what it would remove"
[ "$(running)" = 5 ] || fail "gc --expired --dry-run removed something"
gc_expired </dev/null >gcx.log 2>&1 && fail "gc --expired --spec without -y and without a terminal destroyed"
[ "$(running)" = 5 ] || fail "gc --expired without -y removed something"
gc_expired -y >gc.log 2>&1 || { cat gc.log; fail "gc --expired --spec"; }
expect_in gc.log "^gc: 1 destroyed, 0 failed" "gc --expired --spec did not remove awsleak"
python3 - "$FAKE_AWS_RESOURCES" <<'PY' || fail "resources of awsleak left in the region"
import json, sys
reg = json.load(open(sys.argv[1]))
left = [(k, r) for k, items in reg.items() for r in items if "awsleak" in json.dumps(r) and
        not (k == "instances" and r["instanceState"]["name"] == "terminated")]
assert not left, left
assert sum("awsfull" in json.dumps(i) and i["instanceState"]["name"] == "running" for i in reg["instances"]) == 3
PY
if ip netns list | grep -q "^ddl-awsleak-"; then fail "nodes of awsleak left"; fi
if pgrep -f "$WORK/nodes/awsleak/" >/dev/null; then fail "processes of awsleak left"; fi
[ "$(ddl exec --cluster awsfull -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 [worker2] worker2 " ] ||
  fail "awsfull after the gc of awsleak"
ok "gc --expired --spec from another state folder: a cluster whose state folder is gone and whose recorded lifetime has ended is found in the region and removed through the EC2 API, its node-credential role and profile through IAM (plan first, -y); the owned one stays"

# A lifetime added to a deployed cluster: the next deploy writes its end on the instances in place.
echo "lifetime: 2h" >>awsfull.yaml
ddl deploy -y awsfull.yaml >life.log 2>&1 || { cat life.log; fail "re-deploy with a lifetime"; }
python3 - "$FAKE_AWS_RESOURCES" "$STATE/awsfull/state.json" <<'PY' || fail "the instances of awsfull do not carry the new end"
import datetime, json, sys
reg = json.load(open(sys.argv[1]))
created = datetime.datetime.strptime(json.load(open(sys.argv[2]))["created_at"], "%Y-%m-%dT%H:%M:%SZ")
expires = (created + datetime.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
tags = lambda r: {t["key"]: t["value"] for t in r.get("tagSet", [])}
inst = [i for i in reg["instances"] if tags(i).get("ddl-cluster") == "awsfull" and i["instanceState"]["name"] == "running"]
assert len(inst) == 3 and all(tags(i).get("ddl-expires") == expires for i in inst), (expires, inst)
PY
ok "a lifetime added to a deployed cluster is written on its instances in place by the next deploy"

# --- the node credential (autostop.node_credential): the master ends its cluster itself -------------------
# The module gave the master (only) the instance profile awsfull-master, whose role may stop, terminate and
# tag ddl-autostop this cluster's instances and nothing else; the master reads the role's keys from its own
# instance metadata (IMDSv2 at 169.254.169.254 inside its node). ddl handed it only where to call and which
# instances (node-credential.json: what configure writes to /etc/ddl/cloud.env, emulated here: these nodes get
# the ping playbook). The credential is refused on another cluster's instance and for any other tag; then the
# idle clock, idle past idle_minutes, tags the master and stops the instances, and ddl catches up.
t_cred=$SECONDS
python3 - "$FAKE_AWS_RESOURCES" <<'PY' || fail "the node credential's IAM role and instance profile"
import json, sys
reg = json.load(open(sys.argv[1]))
roles = {r["RoleName"]: r for r in reg["iam_roles"]}
profiles = {p["InstanceProfileName"]: p for p in reg["iam_instance_profiles"]}
assert set(roles) == {"awsfull-master"} and set(profiles) == {"awsfull-master"}, (roles, profiles)
assert [r["RoleName"] for r in profiles["awsfull-master"]["Roles"]] == ["awsfull-master"], profiles
assert json.loads(roles["awsfull-master"]["AssumeRolePolicyDocument"])["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}
statements = json.loads(roles["awsfull-master"]["_policies"]["awsfull-autostop"])["Statement"]
assert sorted(a for s in statements for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])) == \
    ["ec2:CreateTags", "ec2:StopInstances", "ec2:TerminateInstances"], statements
assert all(s["Condition"]["StringEquals"] == {"aws:ResourceTag/ddl-cluster": "awsfull"} for s in statements), statements
tags = lambda r: {t["key"]: t["value"] for t in r.get("tagSet", [])}
live = [i for i in reg["instances"] if tags(i).get("ddl-cluster") == "awsfull" and i["instanceState"]["name"] == "running"]
carrying = [i for i in live if i.get("iamInstanceProfile")]
assert len(live) == 3 and [tags(i)["ddl-role"] for i in carrying] == ["master"], live
assert carrying[0]["iamInstanceProfile"]["arn"] == profiles["awsfull-master"]["Arn"]
assert [c["instanceId"] for c in reg["instance_credentials"]] == [carrying[0]["instanceId"]]
PY
cred="$STATE/awsfull/node-credential.json"
[ "$(stat -c %a "$cred" 2>/dev/null)" = 600 ] || fail "node-credential.json is missing or not 0600"
python3 - "$cred" "$FAKE_AWS_RESOURCES" "$WORK/cloud.env" "$WORK/cloud-ca.pem" <<'PY' || fail "node-credential.json"
import json, sys
c, reg = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tags = lambda r: {t["key"]: t["value"] for t in r.get("tagSet", [])}
mine = {tags(i)["ddl-role"] + ("" if tags(i)["ddl-role"] == "master" else tags(i)["Name"][-1]): i["instanceId"]
        for i in reg["instances"] if tags(i).get("ddl-cluster") == "awsfull" and i["instanceState"]["name"] == "running"}
env = c["env"]
assert set(env) == {"DDL_CLOUD", "AWS_REGION", "AWS_ENDPOINT_URL_EC2", "DDL_CLOUD_SERVERS"}, env  # no key of any kind
assert env["DDL_CLOUD"] == "aws" and env["AWS_REGION"] == "us-east-1", env
assert env["DDL_CLOUD_SERVERS"] == ",".join([mine["worker0"], mine["worker1"], mine["master"]]), (env, mine)
assert c["ca_pem"].startswith("-----BEGIN CERTIFICATE-----"), c
open(sys.argv[4], "w").write(c["ca_pem"])
open(sys.argv[3], "w").write("".join("%s=%s\n" % kv for kv in sorted(env.items())) + "DDL_CLOUD_CA=%s\n" % sys.argv[4])
PY
other=i-0a11ce0000000000f # another cluster's instance, planted
plant_other() {
  python3 - "$FAKE_AWS_RESOURCES" "$DDL_SOURCE_DIR/tests/fakes" "$1" "$other" <<'PY' || fail "planting another cluster's instance"
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
from aws_region import registry
with registry(sys.argv[1], write=True) as reg:
    reg["instances"] = [i for i in reg["instances"] if i["instanceId"] != sys.argv[4]]
    if sys.argv[3] == "add":
        reg["instances"].append({"instanceId": sys.argv[4], "instanceState": {"code": 16, "name": "running"},
                                 "tagSet": [{"key": "ddl-cluster", "value": "awsother"}, {"key": "ddl-managed", "value": "true"}]})
PY
}
plant_other add
ddl exec --cluster awsfull --nodes master -- python3 -c "
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, '$DDL_SOURCE_DIR/src/runtime/tools')
import ddl_idle_aws as a
env = dict(l.split('=', 1) for l in open('$WORK/cloud.env').read().splitlines())
try:
    a._imds(a.IMDS, 'GET', '/latest/meta-data/iam/security-credentials/', {})
    print('IMDS WITHOUT TOKEN ANSWERED')
except RuntimeError as e:
    print(e)
creds = a.instance_credentials(env)
print('role', creds[0])
master = env['DDL_CLOUD_SERVERS'].split(',')[-1]
for p in ([('Action', 'StopInstances'), ('InstanceId.1', '$other')],
          [('Action', 'CreateTags'), ('ResourceId.1', master), ('Tag.1.Key', 'ddl-cluster'), ('Tag.1.Value', 'awsother')]):
    try:
        a.ec2_call(env, creds, p)
        print('ALLOWED', p[0][1])
    except RuntimeError as e:
        print(e)
" >cred.log 2>&1 || { cat cred.log; fail "the credential's checks on the master"; }
expect_in cred.log "instance metadata GET /latest/meta-data/iam/security-credentials/: HTTP 401" "IMDSv2 answered without a token"
expect_in cred.log "^\[master\] role awsfull-master$" "the master's metadata does not give the role's credentials"
expect_in cred.log "EC2 StopInstances: UnauthorizedOperation: You are not authorized to perform this operation." \
  "the credential stopped another cluster's instance"
expect_in cred.log "EC2 CreateTags: UnauthorizedOperation" "the credential wrote another tag than ddl-autostop"
if grep -q "ALLOWED\|ANSWERED" cred.log; then cat cred.log; fail "the node credential did more than its policy allows"; fi
ddl exec --cluster awsfull --nodes worker1 -- python3 -c "
import urllib.request
urllib.request.build_opener(urllib.request.ProxyHandler({})).open(urllib.request.Request(
    'http://169.254.169.254/latest/api/token', method='PUT', headers={'X-aws-ec2-metadata-token-ttl-seconds': '60'}), timeout=3)
" >/dev/null 2>&1 && fail "a worker's node answers at the metadata address: only the master carries the profile"
plant_other remove
ok "node credential: the master alone carries the instance profile (role: stop, terminate, tag ddl-autostop of awsfull's instances); IMDSv2 wants its token; another cluster's instance and another tag are refused (UnauthorizedOperation)"

# The clock: idle for two hours (planted), past idle_minutes 1, it tags the master and stops the workers, then
# the master (whose own stop ends the call: ddl exec loses its session).
ddl exec --cluster awsfull --nodes master -- python3 -c "import json, time
now = time.time()
json.dump({'checked_at': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)), 'busy': [], 'period_s': 60,
           'idle_since': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now - 7200))}, open('$WORK/idle-master.json', 'w'))" ||
  fail "planting the master's idle record"
ddl exec --cluster awsfull --nodes master -- env DDL_IDLE_ENV=/dev/null DDL_CLOUD_ENV="$WORK/cloud.env" \
  DDL_IDLE_RECORD="$WORK/idle-master.json" DDL_IDLE_END=cloud DDL_IDLE_ACTION=stop DDL_IDLE_MINUTES=1 \
  DDL_IDLE_CPU_LOAD=1000 python3 "$DDL_SOURCE_DIR/src/runtime/tools/ddl-idle" tick >tick.log 2>&1 || true
for _ in $(seq 40); do
  ddl status awsfull >cred-status.log 2>&1 && grep -q "ended by autostop" cred-status.log && break
  sleep 0.5
done
expect_in cred-status.log "ended by autostop at .*: ddl-idle: autostop ends the allocation at .*past autostop.idle_minutes 1" \
  "status does not say the clock ended the cluster (tick: $(tr '\n' ' ' <tick.log | tail -c 600))"
python3 - "$FAKE_AWS_RESOURCES" <<'PY' || fail "the instances are not stopped, or the master carries no ddl-autostop"
import json, sys
reg = json.load(open(sys.argv[1]))
tags = lambda r: {t["key"]: t["value"] for t in r.get("tagSet", [])}
live = [i for i in reg["instances"] if tags(i).get("ddl-cluster") == "awsfull" and i["instanceState"]["name"] != "terminated"]
assert len(live) == 3 and all(i["instanceState"]["name"] == "stopped" for i in live), live
assert [tags(i).get("ddl-autostop", "")[:40] for i in live if tags(i)["ddl-role"] == "master"] == ["ddl-idle: autostop ends the allocation a"]
assert not reg["instance_credentials"], reg["instance_credentials"]  # ended with the instance
PY
grep -q '"role": "awsfull-master"' "$AWS_CFG.requests" || fail "no request was signed with the role's credentials"
# `ddl start` before any gc (test_openstack checks gc's part): the state takes the clock's stop and boots it.
ddl start awsfull >start-cred.log 2>&1 || { cat start-cred.log; fail "ddl start after the clock stopped the cluster"; }
expect_in start-cred.log "cluster awsfull started" "ddl start did not boot what the clock stopped"
ddl status awsfull --output json >cred-status.json 2>&1 || { cat cred-status.json; fail "status after start"; }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["power"] == "running" and not (j.get("idle") or {}).get("ended") else 1)' \
  cred-status.json || { cat cred-status.json; fail "after ddl start the cluster is not running, or still ended"; }
ok "node credential: the idle clock on the master tags it ddl-autostop and stops every instance with the role's keys; status says ended by autostop; ddl start boots it before any gc ($((SECONDS - t_cred)) s)"

FAKE_TF_FAIL_DESTROY=1 ddl destroy -y awsfull >destroy.log 2>&1 || { cat destroy.log; fail "destroy"; }
assert_gone awsfull
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); left={k: v for k, v in r.items() if v and k != "instances"}
assert not left and all(i["instanceState"]["name"] == "terminated" for i in r["instances"]), left' \
  "$FAKE_AWS_RESOURCES" || fail "destroy left resources in the region"
assert_no_secret
ok "destroy (one DependencyViolation retried) leaves no node, no state and no IAM role or profile; the secret was never written"
