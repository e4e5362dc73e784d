#!/usr/bin/env bash
# Follows: "Identity API v3" https://docs.openstack.org/api-ref/identity/v3/ , "Application Credentials"
# (create, list, show, delete; the secret only in the create answer) and "Authenticating with an Application
# Credential"; keystonemiddleware's access-rule check (auth_token validate_allowed_request: a token from a
# credential with access rules is invalid, 401, for a request no rule names); "Compute API"
# https://docs.openstack.org/api-ref/compute/ , "Create Or Update Metadata Item", "Stop Server (os-stop
# Action)", "Delete Server".
# Checks the application credentials of tests/fakes/openstack_api.py with curl, and the master's side,
# src/runtime/tools/ddl_idle_openstack.py, against it: a credential whose access rules name cluster c1's
# servers (as src/targets/openstack/terraform/credential.tf writes them) authenticates, may stop, delete and
# tag c1's servers and nothing else (c2's server, listing, other paths: 401); end() records the line on the
# master and stops / deletes every server; a wrong secret, an expired or a deleted credential is refused.
# Usage: test_openstack_node_credential.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
fakes="$src/tests/fakes"

# shellcheck source=SCRIPTDIR/standin_lib.sh
source "$fakes/standin_lib.sh"

PW="planted-Pa55word-$$"
cat >"$work/cloud.json" <<JSON
{"users": {"alice": "$PW"}, "project": {"id": "p-42", "name": "ml"}, "flavors": [{"name": "m1.small", "vcpus": 1, "ram": 2048}]}
JSON
REG="$work/cloud-resources.json"
# Three servers of the project: c1's master and worker, c2's master (no ddl-fake-nodes nodes behind them).
"$py" - "$fakes" "$REG" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import openstack_registry as r
servers = [r.new_server("p-42", "u-alice", n, "m1.small", "k", {"ddl_cluster": n.split("-")[0]}, ["g"])
           for n in ("c1-worker-0", "c1-master", "c2-master")]
json.dump({"servers": servers}, open(sys.argv[2], "w"))
print(" ".join(s["id"] for s in servers), file=open(sys.argv[2] + ".ids", "w"))
PY
read -r W1 M1 M2 <"$REG.ids"

"$fakes/make_test_ca.sh" "$work/tls"
start_standin "$fakes/openstack_api.py" "$work/cloud.json" --resources "$REG"

failed=0 passed=0
check() { if eval "$2"; then passed=$((passed + 1)); else echo "FAIL: $1"; echo "  $body"; failed=1; fi; }
call() {  # call METHOD PATH [curl args...]: sets $status, $body and $headers
  local method=$1 path=$2
  shift 2
  status=$(curl -sS --cacert "$work/tls/ca.pem" -X "$method" -D "$work/headers" -o "$work/body" -w '%{http_code}' \
    -H "Content-Type: application/json" "$@" "$url$path")
  body=$(cat "$work/body")
  headers=$(tr -d '\r' <"$work/headers" | tr '[:upper:]' '[:lower:]')
}
js() { "$py" -c 'import json, sys; b = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1" <<<"$body"; }
token_of() { sed -n 's/^x-subject-token: //p' <<<"$headers"; }

call POST /identity/v3/auth/tokens --data "{\"auth\": {\"identity\": {\"methods\": [\"password\"], \"password\": {\"user\":
  {\"name\": \"alice\", \"domain\": {\"id\": \"default\"}, \"password\": \"$PW\"}}}, \"scope\": {\"project\": {\"id\": \"p-42\"}}}}"
check "password token" '[ "$status" = 201 ]'
USER_TOKEN=$(token_of)

rules=$("$py" -c 'import json, sys
w, m = sys.argv[1:]
print(json.dumps([{"service": "compute", "method": meth, "path": p % i} for i in (w, m)
                  for meth, p in (("POST", "/**/servers/%s/action"), ("DELETE", "/**/servers/%s"))] +
                 [{"service": "compute", "method": "PUT", "path": "/**/servers/%s/metadata/ddl_autostop" % m}]))' "$W1" "$M1")
create() { call POST /identity/v3/users/u-alice/application_credentials -H "X-Auth-Token: $USER_TOKEN" --data "$1"; }
create "{\"application_credential\": {\"name\": \"c1-node\", \"roles\": [{\"name\": \"member\"}], \"access_rules\": $rules,
  \"expires_at\": \"2099-01-01T00:00:00Z\"}}"
check "create: 201" '[ "$status" = 201 ]'
check "create: the answer shows the secret once, the rules, the roles and expires_at" \
  '[ "$(js "(len(b[\"application_credential\"][\"secret\"]) > 40, len(b[\"application_credential\"][\"access_rules\"]),
          [r[\"name\"] for r in b[\"application_credential\"][\"roles\"]], b[\"application_credential\"][\"expires_at\"],
          b[\"application_credential\"][\"unrestricted\"])")" = "(True, 5, ['"'"'member'"'"'], '"'"'2099-01-01T00:00:00.000000'"'"', False)" ]'
CRED=$(js 'b["application_credential"]["id"]')
SECRET=$(js 'b["application_credential"]["secret"]')
create '{"application_credential": {"name": "c1-node"}}'
check "create: a second credential of the same name is a 409" '[ "$status" = 409 ]'
create '{"application_credential": {"name": "x", "roles": [{"name": "admin"}]}}'
check "create: a role the user does not hold is a 404" '[ "$status" = 404 ]'
call GET /identity/v3/users/u-alice/application_credentials/"$CRED" -H "X-Auth-Token: $USER_TOKEN"
check "show: 200 without the secret" '[ "$status" = 200 ] && ! grep -q "$SECRET" <<<"$body" && ! grep -q secret <<<"$body"'
call GET /identity/v3/users/u-bob/application_credentials -H "X-Auth-Token: $USER_TOKEN"
check "another user's credentials: 403" '[ "$status" = 403 ]'

app_auth() {
  call POST /identity/v3/auth/tokens --data "{\"auth\": {\"identity\": {\"methods\": [\"application_credential\"],
    \"application_credential\": {\"id\": \"$1\", \"secret\": \"$2\"}}}}"
}
app_auth "$CRED" "wrong-$SECRET"
check "a wrong secret: 401" '[ "$status" = 401 ]'
app_auth "$CRED" "$SECRET"
check "the credential's token: 201, restricted, with its rules, its project and roles" \
  '[ "$status" = 201 ] && [ "$(js "(b[\"token\"][\"project\"][\"id\"], b[\"token\"][\"application_credential\"][\"restricted\"],
     len(b[\"token\"][\"application_credential\"][\"access_rules\"]), [r[\"name\"] for r in b[\"token\"][\"roles\"]])")" = "('"'"'p-42'"'"', True, 5, ['"'"'member'"'"'])" ]'
APP_TOKEN=$(token_of)

call POST "/compute/v2.1/servers/$M2/action" -H "X-Auth-Token: $APP_TOKEN" --data '{"os-stop": null}'
check "os-stop of another cluster's server: 401 with Keystone's body and header" \
  '[ "$status" = 401 ] && grep -q "requires authentication" <<<"$body" && grep -q "^www-authenticate: keystone" <<<"$headers"'
call GET "/compute/v2.1/servers/$W1" -H "X-Auth-Token: $APP_TOKEN"
check "GET of its own server (no rule names GET): 401" '[ "$status" = 401 ]'
call PUT "/compute/v2.1/servers/$W1/metadata/ddl_autostop" -H "X-Auth-Token: $APP_TOKEN" --data '{"meta": {"ddl_autostop": "x"}}'
check "metadata on a worker (the rule names the master's only): 401" '[ "$status" = 401 ]'
call DELETE "/network/v2.0/ports/$W1" -H "X-Auth-Token: $APP_TOKEN"
check "another service: 401" '[ "$status" = 401 ]'
call POST /identity/v3/users/u-alice/application_credentials -H "X-Auth-Token: $APP_TOKEN" --data '{"application_credential": {"name": "y"}}'
check "a credential's token cannot make credentials: 403" '[ "$status" = 403 ]'
call PUT "/compute/v2.1/servers/$M1/metadata/ddl_autostop" -H "X-Auth-Token: $USER_TOKEN" --data '{"meta": {"other": "x"}}'
check "metadata item: a body key other than the URI's is a 400" '[ "$status" = 400 ]'

# The master's side: ddl_idle_openstack.end, stop then destroy.
end_with() {  # end_with ACTION SECRET: the exit status of end() and its output in $work/end.out
  PYTHONPATH="$src/src/runtime/tools" "$py" - "$1" "$url" "$CRED" "$2" "$W1,$M1" "$work/tls/ca.pem" >"$work/end.out" 2>&1 <<'PY'
import sys
import ddl_idle_openstack as o
action, url, cred, secret, servers, ca = sys.argv[1:]
env = {"OS_AUTH_URL": url + "/identity/v3", "OS_APPLICATION_CREDENTIAL_ID": cred, "OS_APPLICATION_CREDENTIAL_SECRET": secret,
       "OS_REGION_NAME": "RegionOne", "OS_INTERFACE": "public", "DDL_CLOUD_SERVERS": servers, "DDL_CLOUD_CA": ca}
print(o.end(env, action, "ddl-idle: autostop ends the allocation at 12:00 " + "x" * 300))
PY
}
server_field() { "$py" -c 'import json, sys
s = [s for s in json.load(open(sys.argv[1]))["servers"] if s["id"] == sys.argv[2]]
print(eval(sys.argv[3]) if s else "gone")' "$REG" "$1" "$2"; }
body=""
rc=0; end_with stop "wrong-$SECRET" || rc=$?
body=$(cat "$work/end.out")
check "end() with a wrong secret fails naming Keystone's 401, without the secret" \
  '[ $rc != 0 ] && grep -q "HTTP 401" "$work/end.out" && ! grep -q "$SECRET" "$work/end.out"'
end_with stop "$SECRET" || true
body=$(cat "$work/end.out")
check "end(stop): c1's servers SHUTOFF, c2's ACTIVE" \
  '[ "$(server_field "$W1" "s[0][\"status\"]") $(server_field "$M1" "s[0][\"status\"]") $(server_field "$M2" "s[0][\"status\"]")" = "SHUTOFF SHUTOFF ACTIVE" ]'
check "end(stop): the master's ddl_autostop holds the line, cut to 255" \
  '[ "$(server_field "$M1" "len(s[0][\"metadata\"][\"ddl_autostop\"])")" = 255 ] && grep -q "^Nova os-stop $W1,$M1" "$work/end.out"'
end_with stop "$SECRET" || true
body=$(cat "$work/end.out")
check "end(stop) again: already stopped counts as done" 'grep -q "^Nova os-stop" "$work/end.out"'
end_with destroy "$SECRET" || true
body=$(cat "$work/end.out")
check "end(destroy): c1's servers gone, c2's kept" \
  '[ "$(server_field "$W1" 1) $(server_field "$M1" 1) $(server_field "$M2" "s[0][\"status\"]")" = "gone gone ACTIVE" ]'

call DELETE /identity/v3/users/u-alice/application_credentials/"$CRED" -H "X-Auth-Token: $USER_TOKEN"
check "delete: 204" '[ "$status" = 204 ]'
app_auth "$CRED" "$SECRET"
check "a deleted credential: 401" '[ "$status" = 401 ]'
create '{"application_credential": {"name": "short", "expires_at": "2000-01-01T00:00:00"}}'
OLD=$(js 'b["application_credential"]["id"]'); OLD_SECRET=$(js 'b["application_credential"]["secret"]')
app_auth "$OLD" "$OLD_SECRET"
check "an expired credential: 401" '[ "$status" = 401 ]'
call GET /identity/v3/users/u-alice/application_credentials -H "X-Auth-Token: $USER_TOKEN"
check "list: the one left, no secrets" '[ "$(js "[c[\"name\"] for c in b[\"application_credentials\"]]")" = "['"'"'short'"'"']" ] && ! grep -q secret <<<"$body"'

# --- the Terraform stand-in: openstack_identity_application_credential_v3.node (credential.tf) ----------------
cat >"$work/nodes-stub" <<'SH'
#!/bin/sh
[ "$1" = up ] || exit 0
names=$(echo "$*" | sed -n 's/.*--names \([^ ]*\).*/\1/p')
python3 -c 'import json, sys
print(json.dumps({"nodes": [{"name": n, "public_address": "192.0.2.10" if i == 0 else "", "private_address": "10.77.0.%d" % (i + 2),
                            "port": 22, "user": "root"} for i, n in enumerate(sys.argv[1].split(","))]}))' "$names"
SH
chmod +x "$work/nodes-stub"
tfdir="$work/tf"
mkdir -p "$tfdir"
cp "$src"/src/targets/openstack/terraform/*.tf "$tfdir/"
printf 'clouds:\n  fakecloud:\n    auth:\n      auth_url: %s/identity/v3\n' "$url" >"$work/clouds.yaml"
tfvars() {
  cat >"$tfdir/terraform.tfvars.json" <<JSON
{"cluster_name": "tf1", "cloud": "fakecloud", "ssh_user": "root", "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRmMQ tf1",
 "image_name": "Ubuntu 22.04", "master_flavor": "m1.small", "worker_flavor": "m1.small", "worker_count": $1,
 "boot_volume_gb": 20, "external_network": "public", "network_cidr": "192.168.50.0/24", "allowed_cidrs": ["10.0.0.0/8"],
 "node_credential": true, "expires": "2099-01-01T00:00:00Z"}
JSON
}
tf() {
  (cd "$tfdir" && OS_CLOUD=fakecloud OS_CLIENT_CONFIG_FILE="$work/clouds.yaml" FAKE_OPENSTACK_RESOURCES="$REG" \
    FAKE_OPENSTACK_PROJECT_ID=p-42 DDL_FAKE_NODES="$work/nodes-stub" "$fakes/terraform" "$@") >"$work/tf.out" 2>&1 ||
    { cat "$work/tf.out"; return 1; }
}
deploy() { tfvars "$1" && tf plan -input=false -json -out=tfplan && tf apply -input=false -json tfplan; }
# The credential in the registry, as its rules' server ids and the outputs name them: "ok" or what differs.
credential_matches() {
  tf output -json && "$py" - "$work/tf.out" "$REG" "$1" <<'PY'
import json, re, sys
out, reg, workers = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
creds = [c for c in reg["application_credentials"] if c["name"] == "tf1-node"]
ids = out["server_ids"]["value"]
names = {s["id"]: s["name"] for s in reg["servers"]}
want = [{"service": "compute", "method": m, "path": p % i} for i in ids
        for m, p in (("POST", "/**/servers/%s/action"), ("DELETE", "/**/servers/%s"))]
want.append({"service": "compute", "method": "PUT", "path": "/**/servers/%s/metadata/ddl_autostop" % ids[-1]})
problems = []
if len(creds) != 1: problems.append("%d credentials tf1-node" % len(creds))
elif [{k: r[k] for k in ("service", "method", "path")} for r in creds[0]["access_rules"]] != want: problems.append("rules")
elif out["node_credential"] != {"sensitive": True, "type": out["node_credential"]["type"],
                                "value": {"id": creds[0]["id"], "secret": creds[0]["_secret"]}}: problems.append("output")
elif creds[0]["expires_at"] != "2099-01-01T00:00:00.000000" or creds[0]["unrestricted"]: problems.append("expiry")
if [names.get(i) for i in ids] != ["tf1-worker-%d" % w for w in range(workers)] + ["tf1-master"]: problems.append("server_ids")
print(" ".join(problems) or "ok")
PY
}
body=""
tf init -input=false && deploy 1 || true
body=$(credential_matches 1 2>&1)
check "terraform apply: one credential, its rules naming the servers (workers first, master last), the sensitive output" \
  '[ "$body" = ok ]'
deploy 2 || true
body=$(credential_matches 2 2>&1)
check "a new worker replaces the credential: its rules name the new server, the old credential is gone" '[ "$body" = ok ]'
tf destroy -input=false -auto-approve -json || true
body=$("$py" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["application_credentials"]))' "$REG")
check "terraform destroy deletes the credential" '[ "$body" = 1 ]'  # "short", made above, is left

[ "$failed" = 0 ] || exit 1
echo "ok: $passed checks"
