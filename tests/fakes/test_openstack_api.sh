#!/usr/bin/env bash
# Checks tests/fakes/openstack_api.py, the Keystone/Nova/Glance/Neutron/Cinder stand-in, with curl: good
# requests answer in the api-ref's shapes, and what the real services refuse is refused with their status,
# body shape and headers (one or more refusals per service).
# Usage: test_openstack_api.sh [SOURCE_DIR]
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
fakes="$src/tests/fakes"

# shellcheck source=SCRIPTDIR/standin_lib.sh
source "$fakes/standin_lib.sh"

PW="planted-Pa55word-$$"
APP="planted-AppSecret-$$"
cat >"$work/cloud.json" <<JSON
{"users": {"alice": "$PW"}, "app_credentials": {"ac-1": "$APP"}, "app_credential_names": {"alice": {"ci": "ac-1"}},
 "project": {"id": "p-42", "name": "ml"},
 "flavors": [{"name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20}, {"name": "m1.large", "vcpus": 4, "ram": 8192, "disk": 40},
             {"name": "g1.xlarge", "vcpus": 8, "ram": 65536, "disk": 0}],
 "osapi_max_limit": 2,
 "images": ["Ubuntu 22.04", "Debian 12", "Rocky 9"], "image_api_limit_max": 1000,
 "networks": [{"name": "public", "router:external": true}, {"name": "lab"}],
 "compute_limits": {"maxTotalInstances": 10, "totalInstancesUsed": 1},
 "floatingip": {"limit": 5, "used": 1, "reserved": 0},
 "volume_limits": {"maxTotalVolumeGigabytes": 1000, "totalGigabytesUsed": 0}}
JSON

"$fakes/make_test_ca.sh" "$work/tls"
start_standin "$fakes/openstack_api.py" "$work/cloud.json"

failed=0 passed=0
# call METHOD PATH [curl args...]: sets $status, $body and $headers (lower-case names).
call() {
  local method=$1 path=$2
  shift 2
  status=$(curl -sS --cacert "$work/tls/ca.pem" -X "$method" -H "Accept: application/json" -D "$work/headers" \
    -o "$work/body" -w '%{http_code}' "$@" "$url$path")
  body=$(cat "$work/body")
  headers=$(tr -d '\r' <"$work/headers" | tr '[:upper:]' '[:lower:]')
}
token_for() { call POST /identity/v3/auth/tokens -H "Content-Type: application/json" --data "$1"; }
get() { call GET "$1" -H "X-Auth-Token: $TOKEN" "${@:2}"; }
# expect WHAT STATUS PYEXPR [HEADER...]: the last reply had STATUS, its body is JSON for which PYEXPR (over
# `b`) is true, and its headers hold every HEADER ("name: value", case-insensitive).
expect() {
  local what=$1 want=$2 cond=$3 h
  shift 3
  if [ "$status" != "$want" ]; then
    echo "FAIL: $what: status $status, expected $want"; echo "  $body"; failed=1; return
  fi
  if ! "$py" -c 'import sys, json
b = json.loads(sys.stdin.read())
sys.exit(0 if eval(sys.argv[1]) else 1)' "$cond" <<<"$body"; then
    echo "FAIL: $what: the body is not JSON or fails: $cond"; echo "  $body"; failed=1; return
  fi
  for h in "$@"; do
    if ! grep -qiF -- "$h" <<<"$headers"; then
      echo "FAIL: $what: no header $h"; printf '  %s\n' "$headers"; failed=1; return
    fi
  done
  passed=$((passed + 1))
  echo "ok   $what ($status)"
}
user='"user": {"name": "alice", "domain": {"name": "Default"}, "password": "'"$PW"'"}'
scoped='{"auth": {"identity": {"methods": ["password"], "password": {'"$user"'}},
          "scope": {"project": {"name": "ml", "domain": {"id": "default"}}}}}'
GENERIC="b['error']['message'] == 'The request you have made requires authentication.'"
KS_401="$GENERIC and b['error']['code'] == 401 and b['error']['title'] == 'Unauthorized'"
WWW="www-authenticate: keystone uri=\"$url/identity\""

# --- Keystone ------------------------------------------------------------------------------------------
token_for "$scoped"
expect "K1 password, project scope: 201, token with project, catalog, roles, audit_ids" 201 \
  "(t := b['token'])['project']['id'] == 'p-42' and {'issued_at','expires_at','audit_ids','roles','catalog','methods','user'} <= set(t)" \
  "x-subject-token:"
TOKEN=$(sed -n 's/^x-subject-token: *//p' <<<"$headers")
token_for '{"auth": {"identity": {"methods": ["password"], "password": {'"$user"'}}}}'
expect "K4 password without scope: 201 unscoped token (no project, no catalog)" 201 \
  "'project' not in b['token'] and 'catalog' not in b['token'] and b['token']['user']['name'] == 'alice'" "x-subject-token:"
token_for '{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "alice", "password": "x"}}}}}'
expect "K5 user by name without its domain: 400" 400 \
  "b['error']['code'] == 400 and b['error']['title'] == 'Bad Request' and b['error']['message'].startswith('Expecting to find domain in user.')"
token_for '{"auth": {"identity": {"methods": ["password"], "password": {'"$user"'}}, "scope": {"project": {"name": "ml"}}}}'
expect "K6 project by name without its domain: 400" 400 "b['error']['message'].startswith('Expecting to find domain in project.')"
token_for '{"auth": {"identity": {"methods": ["password"]}}}'
expect "K8 password method without a password object: 400, not a dropped connection" 400 \
  "b['error']['message'].startswith('Expecting to find password in identity.')"
token_for '{"auth": {"identity": {"methods": ["password"], "password": {}}}}'
expect "K8 password without a user: 400" 400 "b['error']['message'].startswith('Expecting to find user in password.')"
token_for '{"no-auth": {}}'
expect "K9 no auth object: 400 with Keystone's whole message" 400 \
  "b['error']['message'] == 'Expecting to find auth in request body. The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.'"
token_for "${scoped/$PW/wrong}"
expect "K2 wrong password: 401, generic message, WWW-Authenticate" 401 "$KS_401" "$WWW"
token_for "${scoped/\"ml\"/\"other\"}"
expect "K3 a project the user lacks: 401 with the generic message" 401 "$KS_401" "$WWW"
token_for "${scoped/\"id\": \"default\"/\"id\": \"nodomain\"}"
expect "K7 unknown project domain: 401" 401 "$KS_401"
token_for '{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"id": "ac-1", "secret": "'"$APP"'"}}}}'
expect "K10 application credential by id: 201, token says which credential" 201 \
  "b['token']['project']['id'] == 'p-42' and b['token']['application_credential'] == {'id': 'ac-1', 'name': 'ci', 'restricted': True}"
token_for '{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"name": "ci", "secret": "'"$APP"'", "user": {"id": "u-alice"}}}}}'
expect "K10 application credential by name + user id: 201" 201 "b['token']['application_credential']['id'] == 'ac-1'"
token_for '{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"name": "ci", "secret": "'"$APP"'"}}}}'
expect "K11 application credential by name without its user: 400" 400 \
  "b['error']['message'].startswith('Expecting to find user in application_credential.')"
token_for '{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"id": "ac-1", "secret": "wrong"}},
            "scope": {"project": {"id": "p-42"}}}}'
expect "K12 application credential with a scope: 401 before the secret is checked, with identity {}" 401 \
  "b['error']['message'] == 'Error authenticating with application credential: Application credentials cannot request a scope.' and b['error']['identity'] == {}" \
  "$WWW"
call POST /identity/v3/auth/token -H "Content-Type: application/json" --data "$scoped"
expect "K13 another identity path: 404 in Keystone's body" 404 "b['error']['title'] == 'Not Found'"
call POST "/identity/v3/auth/tokens?nocatalog" -H "Content-Type: application/json" --data "$scoped"
expect "K14 ?nocatalog: a scoped token without catalog" 201 "'catalog' not in b['token'] and b['token']['project']['id'] == 'p-42'"

# --- authentication on the other services ---------------------------------------------------------------
call GET /compute/v2.1/flavors/detail -H "X-Auth-Token: not-a-token"
expect "A1 Nova with an unknown token: keystonemiddleware's 401 and WWW-Authenticate" 401 "$KS_401" "$WWW"
call GET /network/v2.0/networks
expect "A1 Neutron without a token: the same 401" 401 "$KS_401" "$WWW"
call GET /image/v2/images
expect "A1 Glance without a token: its own webob 401" 401 "b['code'] == '401 Unauthorized' and b['title'] == 'Unauthorized' and 'message' in b"

# --- Nova -----------------------------------------------------------------------------------------------
get /compute/v2.1/flavors/detail
expect "N1 flavors/detail: a page of osapi_max_limit (2) with every field and a next link" 200 \
  "[f['name'] for f in b['flavors']] == ['m1.small', 'm1.large'] and {'swap','OS-FLV-DISABLED:disabled','os-flavor-access:is_public','rxtx_factor','OS-FLV-EXT-DATA:ephemeral','links'} <= set(b['flavors'][0]) and b['flavors_links'][0]['rel'] == 'next' and b['flavors_links'][0]['href'] == '$url/compute/v2.1/flavors/detail?marker=f1'" \
  "x-openstack-nova-api-version: 2.1" "openstack-api-version: compute 2.1" "vary: openstack-api-version"
get "/compute/v2.1/flavors/detail?marker=f1"
expect "N1 flavors/detail after the marker: the last page, no next link" 200 \
  "[f['name'] for f in b['flavors']] == ['g1.xlarge'] and 'flavors_links' not in b"
get "/compute/v2.1/flavors/detail?limit=many"
expect "N5 flavors with limit=many: 400 badRequest fault" 400 \
  "b == {'badRequest': {'code': 400, 'message': 'limit param must be an integer'}}" "openstack-api-version: compute 2.1"
get "/compute/v2.1/flavors/detail?marker=nope"
expect "N5 flavors with an unknown marker: 400 badRequest" 400 "b['badRequest']['message'] == 'marker [nope] not found'"
get /compute/v2.1/limits
expect "N2 limits" 200 "b['limits']['absolute']['maxTotalInstances'] == 10 and b['limits']['rate'] == []"
get /compute/v2.1/servers/nope
expect "N5 an unknown Nova path: itemNotFound fault" 404 "b == {'itemNotFound': {'code': 404, 'message': 'The resource could not be found.'}}"

# --- Glance ---------------------------------------------------------------------------------------------
get "/image/v2/images?name=Debian%2012"
expect "G1 images by exact name" 200 "[i['name'] for i in b['images']] == ['Debian 12'] and b['first'] == '/v2/images?name=Debian+12' and 'next' not in b"
get "/image/v2/images?name=in:%22Rocky%209%22,Debian%2012"
expect "G1 the in: operator" 200 "sorted(i['name'] for i in b['images']) == ['Debian 12', 'Rocky 9']"
get "/image/v2/images?limit=2"
expect "G2 limit=2: two images and a next link that keeps the query" 200 \
  "len(b['images']) == 2 and b['next'] == '/v2/images?limit=2&marker=i1' and b['first'] == '/v2/images?limit=2'"
get "/image/v2/images?limit=2&marker=i1"
expect "G2 following next: the last image, no next" 200 "[i['name'] for i in b['images']] == ['Rocky 9'] and 'next' not in b"
get "/image/v2/images?limit=-1"
expect "G2 limit=-1: 400 in webob's JSON" 400 \
  "b['message'] == 'limit param must be positive' and b['code'] == '400 Bad Request' and b['title'] == 'Bad Request'"
get "/image/v2/images?limit=ten"
expect "G2 limit=ten: 400" 400 "b['message'] == 'limit param must be an integer'"

# --- Neutron --------------------------------------------------------------------------------------------
get "/network/v2.0/networks?router:external=true"
expect "Q1 external networks" 200 "[n['name'] for n in b['networks']] == ['public']"
get "/network/v2.0/networks?name=lab"
expect "Q1 a network by name always carries router:external" 200 "b['networks'][0]['router:external'] is False"
get "/network/v2.0/networks?name=lab&name=public&router:external=No"
expect "Q1 OR across one field's values, AND across fields, strict booleans (No)" 200 "[n['name'] for n in b['networks']] == ['lab']"
get "/network/v2.0/networks?router:external=maybe"
expect "Q1 router:external=maybe: 400 NeutronError InvalidInput" 400 \
  "b == {'NeutronError': {'type': 'InvalidInput', 'message': \"Invalid input for operation: 'maybe' cannot be converted to boolean.\", 'detail': ''}}"
get /network/v2.0/quotas/p-42/details.json
expect "Q2 quota details: every resource as {limit, used, reserved}" 200 \
  "b['quota']['floatingip'] == {'limit': 5, 'used': 1, 'reserved': 0} and {'network','port','router','security_group'} <= set(b['quota'])"
get /network/v2.0/quotas/p-other/details.json
expect "Q2 another project's quota: 403 NeutronError AdminRequired" 403 \
  "b['NeutronError']['type'] == 'AdminRequired' and b['NeutronError']['message'].startswith('User does not have admin privileges') and b['NeutronError']['detail'] == ''"

# --- Cinder ---------------------------------------------------------------------------------------------
get /volume/v3/p-42/limits
expect "C1 volume limits" 200 "b['limits']['absolute']['maxTotalVolumeGigabytes'] == 1000" \
  "openstack-api-version: volume 3.0"
get /volume/v3/p-other/limits
expect "C2 another project in the URL: 400 Malformed request url" 400 \
  "b == {'badRequest': {'code': 400, 'message': 'Malformed request url'}}" "openstack-api-version: volume 3.0"

# --- injected failures take each service's body ----------------------------------------------------------
"$py" - "$work/cloud.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["fail"] = {"/identity/v3/auth/tokens": 503, "/compute/v2.1/limits": 503, "/network/v2.0/networks": 500,
             "/image/v2/images": 500, "/volume/v3/p-42/limits": 413}
json.dump(c, open(sys.argv[1], "w"))
PY
token_for "$scoped"
expect "X1 Keystone failure: {error: {code, title, message}}" 503 "b['error'] == {'code': 503, 'title': 'Service Unavailable', 'message': 'injected failure'}"
get /compute/v2.1/limits
expect "N5 Nova 503: serviceUnavailable" 503 "b == {'serviceUnavailable': {'code': 503, 'message': 'injected failure'}}"
get /network/v2.0/networks
expect "Q3 Neutron 500: NeutronError" 500 "b['NeutronError']['type'] == 'HTTPInternalServerError' and b['NeutronError']['message'] == 'injected failure'"
get /image/v2/images
expect "Glance 500: webob JSON" 500 "b['code'] == '500 Internal Server Error' and b['message'] == 'injected failure'"
get /volume/v3/p-42/limits
expect "Cinder 413: overLimit" 413 "b == {'overLimit': {'code': 413, 'message': 'injected failure'}}"

# --- the request log names what was sent, never a secret -------------------------------------------------
if grep -qF -e "$PW" -e "$APP" -e "$TOKEN" "$work/cloud.json.requests"; then
  echo "FAIL: the request log holds a secret or a token"; failed=1
else
  passed=$((passed + 1)); echo "ok   the request log holds no secret or token"
fi

[ "$failed" -eq 0 ] && echo "ok: $passed checks of the OpenStack API stand-in"
exit "$failed"
