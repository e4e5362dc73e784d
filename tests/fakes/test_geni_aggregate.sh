#!/usr/bin/env bash
# Follows: GENI Aggregate Manager API v3 ("GAPI_AM_API_V3", its "Common Concepts" and "Details" pages,
# https://groups.geni.net/geni/wiki/GAPI_AM_API_V3) and the GENI Common Federation API v2
# (https://groups.geni.net/geni/wiki/CommonFederationAPIv2): the calls, states and error codes checked below.
# geni_aggregate.py answers and refuses as the AM API v3 and the Federation API v2 say (the accepted path
# runs in tests/e2e/test_virtualwall.sh): states through Allocate/Provision/geni_start/Status, the error
# codes of refused calls, Renew bounded by the slice credential, a slice's expiry. Nodes come from a stub
# of ddl-fake-nodes (no root needed here).
set -euo pipefail
src=$1
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
sh "$src/tests/fakes/make_test_ca.sh" ca
login() { # NAME AUTHORITY
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null
  printf 'subjectAltName=URI:urn:publicid:IDN+%s+user+%s\n' "$2" "$1" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca/ca.pem -CAkey ca/ca.key -CAcreateserial -out "$1.crt" -days 1 \
    -extfile "$1.ext" 2>/dev/null
  cat "$1.crt" "$1.key" >"$1.pem"
}
login alice ilabt.imec.be
login mallory ilabt.imec.be
cat >fake-nodes <<'SH'
#!/bin/sh
[ "$1" = up ] || exit 0
printf '{"nodes": [{"public_address": "192.0.2.1", "port": 22, "user": "root"}]}\n'
SH
chmod +x fake-nodes
DDL_FAKE_NODES="$work/fake-nodes" python3 "$src/tests/fakes/geni_aggregate.py" --port-file port --cert ca/server.pem \
  --key ca/server.key --ca ca/ca.pem --state st --projects ddltest --log log >out 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
[ -s port ] || { cat out; exit 1; }
python3 - "https://127.0.0.1:$(cat port)" "$src" <<'PY'
import ssl, sys, time, datetime as dt, xmlrpc.client
base = sys.argv[1]
rspec = """<?xml version="1.0"?><rspec xmlns="http://www.geni.net/resources/rspec/3" type="request">
<node client_id="master" component_manager_id="urn:publicid:IDN+wall2.ilabt.iminds.be+authority+cm" exclusive="true">
<sliver_type name="raw-pc"/></node></rspec>"""

def proxy(who, path):
    ctx = ssl.create_default_context(cafile="ca/ca.pem")
    ctx.load_cert_chain(f"{who}.pem")
    return xmlrpc.client.ServerProxy(base + path, context=ctx, allow_none=True)

def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)

def t(minutes):
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")

alice = "urn:publicid:IDN+ilabt.imec.be+user+alice"
ma, sa, am = proxy("alice", "/ma/2"), proxy("alice", "/sa/2"), proxy("alice", "/am/3.0")
r = ma.get_credentials("urn:publicid:IDN+ilabt.imec.be+user+bob", [], {})
check(r["code"] == 2, "MA: another member's credentials refused (AUTHORIZATION_ERROR)")
user = ma.get_credentials(alice, [], {})["value"]
check(sa.create("SLICE", [], {"fields": {"SLICE_NAME": "s1", "SLICE_PROJECT_URN":
      "urn:publicid:IDN+ilabt.imec.be+project+ddltest"}})["code"] == 2, "SA: create without a user credential")
check(sa.create("SLICE", user, {"fields": {"SLICE_NAME": "s1"}})["code"] == 3, "SA: create without a project")
check(sa.create("SLICE", user, {"fields": {"SLICE_NAME": "s1", "SLICE_PROJECT_URN":
      "urn:publicid:IDN+ilabt.imec.be+project+other"}})["code"] == 2, "SA: a project the member is not in")
check(sa.create("SLICE", user, {"fields": {"SLICE_NAME": "-bad", "SLICE_PROJECT_URN":
      "urn:publicid:IDN+ilabt.imec.be+project+ddltest"}})["code"] == 3, "SA: a slice name GENI refuses")
made = sa.create("SLICE", user, {"fields": {"SLICE_NAME": "s1", "SLICE_EXPIRATION": t(60),
                 "SLICE_PROJECT_URN": "urn:publicid:IDN+ilabt.imec.be+project+ddltest"}})
urn = "urn:publicid:IDN+ilabt.imec.be:ddltest+slice+s1"
check(made["code"] == 0 and made["value"]["SLICE_URN"] == urn, "SA: slice created under the caller's authority")
check(sa.create("SLICE", user, {"fields": {"SLICE_NAME": "s1", "SLICE_PROJECT_URN":
      "urn:publicid:IDN+ilabt.imec.be+project+ddltest"}})["code"] == 5, "SA: a second slice of that name (DUPLICATE_ERROR)")
check(sa.update("SLICE", urn, user, {"fields": {"SLICE_EXPIRATION": t(300)}})["code"] == 2,
      "SA: update with the user credential, not the slice's: Insufficient privilege")
scred = sa.get_credentials(urn, user, {})["value"]
check(sa.update("SLICE", urn, scred, {"fields": {"SLICE_EXPIRATION": t(30)}})["code"] == 3, "SA: expiration never reduced")
other = proxy("mallory", "/ma/2").get_credentials("urn:publicid:IDN+ilabt.imec.be+user+mallory", [], {})["value"]
check(proxy("mallory", "/sa/2").get_credentials(urn, other, {})["code"] == 2, "SA: a non-member gets no slice credential")
cred = sa.get_credentials(urn, user, {})["value"]
check(am.GetVersion({})["value"]["geni_api"] == 3, "AM: GetVersion says API 3")
check(am.Status([urn], [], {})["code"]["geni_code"] == 3, "AM: no slice credential (FORBIDDEN)")
check(proxy("mallory", "/am/3.0").Status([urn], cred, {})["code"]["geni_code"] == 3, "AM: someone else's credential")
check(am.Status([urn], cred, {})["code"]["geni_code"] == 12, "AM: Status of a slice without slivers (SEARCHFAILED)")
check(am.Allocate(urn, cred, "<rspec/>", {})["code"]["geni_code"] == 1, "AM: Allocate of a non-RSpec (BADARGS)")
a = am.Allocate(urn, cred, rspec, {})
check(a["code"]["geni_code"] == 0 and a["value"]["geni_slivers"][0]["geni_allocation_status"] == "geni_allocated",
      "AM: Allocate -> geni_allocated")
check(am.Allocate(urn, cred, rspec, {})["code"]["geni_code"] == 17, "AM: Allocate again (ALREADYEXISTS)")
check(am.PerformOperationalAction([urn], cred, "geni_start", {})["code"]["geni_code"] == 13,
      "AM: geni_start before Provision (UNSUPPORTED)")
check(am.Provision([urn], cred, {})["code"]["geni_code"] == 1, "AM: Provision without geni_rspec_version (BADARGS)")
check(am.Provision([urn], cred, {"geni_rspec_version": {"type": "GENI", "version": "2"}})["code"]["geni_code"] == 4,
      "AM: Provision with another RSpec version (BADVERSION)")
p = am.Provision([urn], cred, {"geni_rspec_version": {"type": "GENI", "version": "3"}, "geni_users": []})
s = p["value"]["geni_slivers"][0]
check((s["geni_allocation_status"], s["geni_operational_status"]) == ("geni_provisioned", "geni_notready"),
      "AM: Provision -> geni_provisioned, geni_notready")
check(am.PerformOperationalAction([urn], cred, "geni_reboot", {})["code"]["geni_code"] == 13, "AM: an unknown action")
am.PerformOperationalAction([urn], cred, "geni_start", {})
ops = [am.Status([urn], cred, {})["value"]["geni_slivers"][0]["geni_operational_status"] for _ in range(2)]
check(ops == ["geni_configuring", "geni_ready"], "AM: geni_start -> geni_configuring -> geni_ready")
check(am.Renew([urn], cred, t(120), {})["code"]["geni_code"] == 19, "AM: Renew past the slice credential (OUTOFRANGE)")
check(am.Renew([urn], cred, t(-5), {})["code"]["geni_code"] == 19, "AM: Renew into the past (OUTOFRANGE)")
check(am.Renew([urn], cred, t(50), {})["code"]["geni_code"] == 0, "AM: Renew within the slice's life")
d = am.Describe([urn], cred, {"geni_rspec_version": {"type": "GENI", "version": "3"}})["value"]
check('client_id="master"' in d["geni_rspec"] and "192.0.2.1" in d["geni_rspec"], "AM: Describe gives the manifest")
check(am.Delete([urn], cred, {})["code"]["geni_code"] == 0, "AM: Delete")
check(am.Delete([urn], cred, {})["code"]["geni_code"] == 12, "AM: Delete again (SEARCHFAILED)")
# A slice that expires: gone from lookup, EXPIRED at the aggregate, no slice credential.
sa.create("SLICE", user, {"fields": {"SLICE_NAME": "brief", "SLICE_EXPIRATION": t(0.05),
          "SLICE_PROJECT_URN": "urn:publicid:IDN+ilabt.imec.be+project+ddltest"}})
burn = "urn:publicid:IDN+ilabt.imec.be:ddltest+slice+brief"
bcred = sa.get_credentials(burn, user, {})["value"]
time.sleep(4)
check(sa.lookup("SLICE", user, {"match": {"SLICE_URN": burn, "SLICE_EXPIRED": False}})["value"] == {},
      "SA: an expired slice is not found")
check(sa.get_credentials(burn, user, {})["code"] == 3, "SA: no credential for an expired slice")
check(am.Status([burn], bcred, {})["code"]["geni_code"] == 3, "AM: an expired slice credential (FORBIDDEN)")
PY
