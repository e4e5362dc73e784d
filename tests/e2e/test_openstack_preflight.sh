#!/usr/bin/env bash
# OpenStack target without real nodes: pre-flight against the HTTPS API stand-in stops a deploy that
# would not fit before Terraform creates anything; a deploy that fits runs the Terraform stand-in up to
# provision, and no file, log or argv ever holds the cloud's password.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/helpers/openstack.sh"
trap 'rc=$?; kill $FAKE_CLOUD_PID 2>/dev/null || true; (exit $rc); cleanup' EXIT
start_fake_cloud
# Instances that only report addresses: this test never logs in to them.
cat >"$WORK/nodes-stub" <<'SH'
#!/bin/sh
echo "$@" >>"$NODES_LOG"
[ "$1" = up ] && echo '{"nodes":[{"name":"master","public_address":"192.0.2.10","private_address":"10.77.0.2","port":22,"user":"root"},{"name":"worker1","private_address":"10.77.0.3","port":22,"user":"root"},{"name":"worker2","private_address":"10.77.0.4","port":22,"user":"root"}]}'
exit 0
SH
chmod +x "$WORK/nodes-stub"
export DDL_FAKE_NODES="$WORK/nodes-stub" NODES_LOG="$WORK/nodes.log"

openstack_spec ospre 2
write_cloud 10 9
if ddl -v deploy ospre.yaml >short.log 2>&1; then fail "deploy passed with too little quota"; fi
expect_in short.log "quota: 3 instances requested, 1 left (limit 10, 9 in use)" "quota message"
expect_in short.log "nothing was created" "says nothing was created"
if grep -Eq '"(init|plan|apply)"' "$FAKE_TF_LOG"; then fail "terraform ran past its version check: $(cat "$FAKE_TF_LOG")"; fi
[ ! -e "$NODES_LOG" ] || fail "instances were created despite the pre-flight failure"
ok "pre-flight failure: clear quota message, nothing created"
# An S3-compatible state store needs Terraform 1.6.3 (endpoints, use_path_style, skip_s3_checksum).
openstack_spec ospre-s3 2
printf '  state_backend: {type: s3, bucket: tfstate, key: ospre-s3.tfstate, endpoint: "https://s3.example.org"}\n' >>ospre-s3.yaml
rc=0; FAKE_TF_VERSION=1.5.7 ddl deploy ospre-s3.yaml >s3.log 2>&1 || rc=$?
[ "$rc" != 0 ] || { cat s3.log; fail "an S3 endpoint with Terraform 1.5.7 was not refused"; }
expect_in s3.log "openstack.state_backend: an S3-compatible endpoint needs Terraform 1.6.3 or newer" \
  "the refusal of an S3 endpoint with Terraform 1.5.7 does not say why"
ddl destroy -y ospre-s3 >/dev/null 2>&1 || true
ok "an S3-compatible state store with Terraform 1.5.7 is refused before anything is made"
# GitLab's state through the environment: without TF_HTTP_ADDRESS and the lock addresses, refused.
openstack_spec ospre-http 2
printf '  state_backend: {type: http}\n' >>ospre-http.yaml
rc=0; env -u TF_HTTP_ADDRESS -u TF_HTTP_LOCK_ADDRESS -u TF_HTTP_UNLOCK_ADDRESS "$DDL" --state-dir "$STATE" deploy ospre-http.yaml >http.log 2>&1 || rc=$?
[ "$rc" != 0 ] || { cat http.log; fail "http backend without an address or TF_HTTP_ADDRESS was not refused"; }
expect_in http.log "type http without an address takes the state's address from the environment, but TF_HTTP_ADDRESS is not set" \
  "the refusal of an http backend without an address does not say why"
ddl render ospre-http.yaml --out "$WORK/r-http" >/dev/null || fail "render with the http backend"
python3 - "$WORK/r-http/openstack/terraform/backend.tf.json" <<'PY' || fail "http backend rendered with an address"
import json, sys
http = json.load(open(sys.argv[1]))["terraform"]["backend"]["http"]
assert "address" not in http and http["lock_method"] == "POST" and http["unlock_method"] == "DELETE", http
PY
ddl destroy -y ospre-http >/dev/null 2>&1 || true
ok "state_backend http without an address: TF_HTTP_* required, the rendered backend leaves the addresses to them"
ddl destroy -y ospre >d0.log 2>&1 || { cat d0.log; fail "destroy after a pre-flight failure"; }
expect_in d0.log "nothing was created" "destroy message"
[ ! -e "$STATE/ospre" ] || fail "state left after destroy"
ok "destroy after a pre-flight failure has nothing to do"

ddl -v deploy ospre.yaml --only render >sr.log 2>&1 || { cat sr.log; fail "render phase"; }
ddl -v deploy ospre.yaml --only provision --skip-preflight >skip.log 2>&1 || { cat skip.log; fail "--skip-preflight"; }
expect_in skip.log "pre-flight checks of the cloud skipped (--skip-preflight)" "skip noted"
if grep -q "quota:" skip.log; then fail "pre-flight ran despite --skip-preflight"; fi
ddl destroy -y ospre >sd.log 2>&1 || { cat sd.log; fail "destroy after --skip-preflight"; }
expect_in "$NODES_LOG" "^down --id ospre" "instances of the skipped-preflight deploy not removed"
rm -f "$NODES_LOG"
ok "--skip-preflight goes straight to Terraform"

sed -i 's/flavor: g1.small}/flavor: g1.smal}/' ospre.yaml
write_cloud 20 0
if ddl deploy ospre.yaml >flavor.log 2>&1; then fail "deploy passed with an unknown flavor"; fi
expect_in flavor.log 'nodes.workers.flavor: flavor "g1.smal" does not exist; did you mean "g1.small"?' "flavor message"
sed -i 's/flavor: g1.smal}/flavor: g1.small}/' ospre.yaml
ok "unknown flavor: did you mean"

ddl render ospre.yaml --out "$WORK/rendered" >render.log 2>&1 || { cat render.log; fail "render"; }
ddl -v deploy ospre.yaml --only render >r.log 2>&1 || { cat r.log; fail "render phase"; }
ddl -v deploy ospre.yaml --only provision >p.log 2>&1 || { cat p.log; fail "provision with the Terraform stand-in"; }
expect_in p.log "\[openstack_compute_instance_v2.worker\[1\]\] created (" "per-resource progress"
ddl status ospre --output json >status.json
python3 - status.json <<'PY' || fail "nodes from terraform output"
import json, sys
nodes = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
assert nodes["master"]["address"] == "192.0.2.10" and nodes["master"].get("jump", "") == "", nodes["master"]
assert nodes["worker2"]["address"] == "10.77.0.4" and nodes["worker2"]["jump"] == "master", nodes["worker2"]
PY
expect_in "$FAKE_TF_LOG" '"OS_CLIENT_CONFIG_FILE"' "terraform got no OS_CLIENT_CONFIG_FILE"
[ "$(stat -c %a "$STATE/ospre/terraform/terraform.tfvars.json")" = 600 ] || fail "tfvars not 0600"
assert_no_secret
ok "provision through the Terraform stand-in; workers behind the master; no secret written"

ddl -v deploy ospre.yaml --only provision >p2.log 2>&1 || { cat p2.log; fail "second provision"; }
expect_in p2.log "plan: 0 to add, 0 to change, 0 to destroy" "re-running provision did not converge"
ok "re-running provision converges (nothing to add)"

FAKE_TF_FAIL_DESTROY=1 ddl -v destroy -y ospre >d.log 2>&1 || { cat d.log; fail "destroy"; }
expect_in d.log "openstack_networking_secgroup_v2.cluster (delete): Error deleting" "destroy failure named"
expect_in d.log "attempt 2 of 3" "destroy retried"
expect_in "$NODES_LOG" "^down --id ospre" "instances not removed"
[ ! -e "$STATE/ospre" ] || fail "state left after destroy"
assert_no_secret
ok "destroy retries past a failure and removes everything"

# The same with an application credential: pre-flight authenticates with it, Terraform gets the clouds.yaml
# path, and the credential's secret is in nothing ddl wrote or ran.
use_app_credential
ddl -v deploy ospre.yaml --only render >acr.log 2>&1 || { cat acr.log; fail "render with an application credential"; }
ddl -v deploy ospre.yaml --only provision >ac.log 2>&1 || { cat ac.log; fail "provision with an application credential"; }
ddl -v destroy -y ospre >acd.log 2>&1 || { cat acd.log; fail "destroy with an application credential"; }
[ ! -e "$STATE/ospre" ] || fail "state left after destroy"
secret_sweep "OpenStack application-credential secret" "$APP_SECRET" '/(clouds\.yaml|cloud\.json)$' "$WORK"
ok "application credential: provision and destroy; its secret written nowhere"
