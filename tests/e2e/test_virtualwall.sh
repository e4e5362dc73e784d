#!/usr/bin/env bash
# Target virtualwall over the GENI APIs, no jFed and no Java: the AM API v3 aggregate and the member/slice
# authorities (ProtoGENI's, as the Virtual Wall serves them, and the Federation API v2's for the legacy user)
# are the stand-in tests/fakes/geni_aggregate.py (HTTPS with client
# certificates of a test CA), whose slivers are real local nodes made by ddl-fake-nodes. A user of the
# current authority (ilabt.imec.be): deploy (SA create, Allocate, Provision, geni_start, Status, Describe)
# -> the testbed's NAT script on every node -> hostfile -> allreduce -> status shows the slice's expiry ->
# renew (SA update + AM Renew; too far is refused with one clear line) -> destroy (Delete). A user of the
# legacy authority (wall2.ilabt.iminds.be): deploy, then destroy after the slivers vanished (idempotent).
# Then the jFed GUI way: a manifest given with --manifest, and destroy saying what to delete.
source "$(dirname "$0")/lib.sh"
fakes="$DDL_SOURCE_DIR/tests/fakes"
export DDL_FAKE_NODES="${DDL_FAKE_NODES:-$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes}"
[ -x "$DDL_FAKE_NODES" ] || fail "missing $DDL_FAKE_NODES (build the tests/fakes tools)"
GENI_STATE="$WORK/geni" FAKE_JFED_STATE="$WORK/jfed"
mkdir -p "$GENI_STATE" "$FAKE_JFED_STATE"
pids=()
nodes_down() {
  for s in "$GENI_STATE" "$FAKE_JFED_STATE"; do
    for d in "$s"/nodes/*/; do [ -d "$d" ] && "$DDL_FAKE_NODES" down --id "$(basename "$d")" --state-dir "$s/nodes" >/dev/null 2>&1; done
  done
  return 0
}
# Whatever happens, no fake node or server outlives the test.
trap 'rc=$?; set +e; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; nodes_down; (exit $rc); cleanup' EXIT

# No Java anywhere on the PATH ddl runs with: every tool of the system's PATH but java.
mkdir -p nojava
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  for f in "$d"/*; do
    n=$(basename "$f")
    [ "$n" = java ] || [ -e "nojava/$n" ] || ln -s "$f" "nojava/$n" 2>/dev/null || true
  done
done
export PATH="$WORK/nojava"
if command -v java >/dev/null; then fail "java is still on PATH"; fi
ok "java is absent from PATH"

# A test CA, the servers' certificate, and two users' login files (certificate + key) with their URN in
# subjectAltName, one per authority.
sh "$fakes/make_test_ca.sh" ca
login() { # NAME AUTHORITY [CA folder]
  local ca=${3:-ca}
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" 2>/dev/null
  printf 'subjectAltName=URI:urn:publicid:IDN+%s+user+%s\nextendedKeyUsage=clientAuth\n' "$2" "$1" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca.key" -CAcreateserial -out "$1.crt" -days 1 \
    -extfile "$1.ext" 2>/dev/null
  cat "$1.crt" "$1.key" >"$1.pem" && chmod 600 "$1.pem" && rm -f "$1.key"
}
login alice ilabt.imec.be
login bob wall2.ilabt.iminds.be
ssh-keygen -q -t ed25519 -N '' -C e2e-user -f user_key

python3 "$fakes/geni_aggregate.py" --port-file geni.port --cert ca/server.pem --key ca/server.key --ca ca/ca.pem \
  --state "$GENI_STATE" --projects ddltest --log geni.log --busy-after-start >geni.out 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s geni.port ] && break; sleep 0.1; done
[ -s geni.port ] || { cat geni.out; fail "the GENI stand-in did not start"; }
base="https://127.0.0.1:$(cat geni.port)"

# The stand-in refuses what the real services refuse: a caller without a client certificate, an AM call
# without a valid slice credential (FORBIDDEN, 3).
if curl -s --cacert ca/ca.pem "$base/am/3.0" -d '<methodCall/>' >/dev/null 2>&1; then fail "TLS without a client certificate"; fi
code=$(python3 - "$base" <<'PY'
import ssl, sys, xmlrpc.client
ctx = ssl.create_default_context(cafile="ca/ca.pem"); ctx.load_cert_chain("alice.pem")
am = xmlrpc.client.ServerProxy(sys.argv[1] + "/am/3.0", context=ctx)
print(am.Status(["urn:publicid:IDN+ilabt.imec.be:ddltest+slice+x"], [], {})["code"]["geni_code"])
PY
)
[ "$code" = 3 ] || fail "Status without a slice credential: geni_code $code, not FORBIDDEN (3)"
ok "the stand-in refuses a caller without a certificate and a call without a slice credential"

# The testbed's NAT script, served to the nodes by a local web server; it leaves a mark per node.
mkdir -p nat && printf '#!/bin/bash\necho enabled >"%s/nat.$(hostname)"\n' "$WORK" >nat/enable-nat.sh
nat_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 0.0.0.0 --directory nat "$nat_port" >http.log 2>&1 &
pids+=($!)
host_ip=$(hostname -I | awk '{print $1}')
wait_for 30 "the NAT script's web server on $host_ip:$nat_port" curl -fs -o /dev/null "http://$host_ip:$nat_port/enable-nat.sh"

vwspec() { # NAME PEM WORKERS; AUTHORITIES=fed: the Federation API's paths, else ProtoGENI's (the Virtual Wall's)
  local sa=$base/protogeni/xmlrpc/geni-sa/2 ma=$base/protogeni/xmlrpc/geni-ma
  [ "${AUTHORITIES:-}" != fed ] || { sa=$base/sa/2; ma=$base/ma/2; }
  cat >"$1.yaml" <<YAML
apiVersion: ddl/v1
name: $1
target: virtualwall
nodes:
  master: {gpus: 0}
  workers: {count: $3, gpus: 0}
access:
  user: root
  private_key: $WORK/user_key
virtualwall:
  testbed: wall2
  project: ddltest
  disk_image: urn:publicid:IDN+wall2.ilabt.iminds.be+image+emulab-ops:UBUNTU22-64-STD
  link_capacity: 1gbit
  login_pem: $WORK/$2.pem
  am_url: $base/am/3.0
  sa_url: $sa
  ma_url: $ma
  ca_file: $WORK/ca/ca.pem
  expiry_hours: 3
  nat_script_url: http://$host_ip:$nat_port/enable-nat.sh
  connect_via: ipv4
YAML
  CLUSTERS+=("$1")
}

# A login the testbed's CA did not sign: the server ends the TLS connection, and ddl names the
# certificate it refused (libcurl alone says "Failure when receiving data from the peer").
sh "$fakes/make_test_ca.sh" ca2 && login mallory ilabt.imec.be ca2
vwspec vwtls mallory 0
rc=0; ddl deploy vwtls.yaml >tls.log 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a login of another CA was accepted"
expect_in tls.log "as it does when it refuses the client certificate $WORK/mallory.pem" "the refused certificate is not named"
ok "a login the servers do not accept: the error names the certificate ($(grep -o 'member authority[^(]*' tls.log | head -1))"

vwspec vwe2e alice 2
echo "lifetime: 2h" >>vwe2e.yaml # ends before expiry_hours (3): the slice expires with the lifetime
ddl deploy vwe2e.yaml >d.log 2>&1 || { cat d.log; cat geni.log; fail "deploy over the GENI APIs"; }
slice="urn:publicid:IDN+ilabt.imec.be:ddltest+slice+vwe2e"
for call in "SA create $slice" "AM Allocate $slice" "AM Provision $slice" "AM PerformOperationalAction $slice" \
            "AM Status $slice" "AM Describe $slice"; do
  grep -qx "$call" geni.log || { cat geni.log; fail "no '$call'"; }
done
expect_in d.log "geni_ready" "deploy did not wait for geni_ready"
grep -qx "AM Status busy (503)" geni.log || { cat geni.log; fail "the planted busy Status call did not happen"; }
expect_in d.log "aggregate: Status failed (.*503.*); trying again" "a Status poll the aggregate could not answer was not retried"
if grep -q "alice.pem\|PRIVATE KEY" d.log "$STATE/vwe2e"/*.log 2>/dev/null; then fail "the login PEM is in a log"; fi
ok "deploy: slice from the certificate's authority (ilabt.imec.be), Allocate -> Provision -> geni_start -> Status (one answered 503: tried again) -> Describe"
for n in master worker1 worker2; do [ "$(cat "nat.$n" 2>/dev/null)" = enabled ] || fail "the NAT script did not run on $n"; done
ok "configure ran the testbed's NAT script on every node first"
hf=$(ddl hostfile --cluster vwe2e)
[ "$(grep -c slots= <<<"$hf")" = 3 ] || { echo "$hf"; fail "hostfile node count"; }
ok "hostfile from the manifest Describe returned"
ddl run --cluster vwe2e -- ddl-allreduce-test -b 1M -e 1M -n 2 >ar.out 2>&1 || { cat ar.out; fail "allreduce"; }
expect_in ar.out "all results exact" "allreduce result"
ok "allreduce on the slice's nodes"
ddl deploy vwe2e.yaml >d2.log 2>&1 || { cat d2.log; fail "second deploy"; }
[ "$(grep -c "^AM Allocate $slice" geni.log)" = 1 ] && [ "$(grep -c "^SA create" geni.log)" = 1 ] \
  || { cat geni.log; fail "a second deploy allocated again"; }
ok "a second deploy converges on the same slice and slivers"
# Another cluster naming the same slice: its slivers are not ddl's to take or delete.
sed -e 's/^name: .*/name: vwtwin/' -e 's/^  connect_via: ipv4/  connect_via: ipv4\n  slice: vwe2e/' vwe2e.yaml >vwtwin.yaml
CLUSTERS+=(vwtwin)
if ddl deploy vwtwin.yaml >t.log 2>&1; then fail "a second cluster took over slice vwe2e"; fi
expect_in t.log "already has slivers at this aggregate that ddl did not create" "twin message"
ddl destroy -y vwtwin >tx.log 2>&1 || { cat tx.log; fail "destroy of the refused twin"; }
expect_in tx.log "nothing to delete" "twin destroy"
[ "$(grep -c "^AM Delete $slice" geni.log)" = 0 ] || fail "the twin's destroy deleted vwe2e's slivers"
ok "a cluster naming a slice with slivers ddl did not create is refused, and its destroy deletes nothing"

st=$(ddl status vwe2e)
grep -Eq "^lease ends [0-9T:-]+Z \(in 1h 5[0-9]m\)$" <<<"$st" || { echo "$st"; fail "status does not show the slice's expiry"; }
ok "status shows when the slice's slivers end: with the lifetime (2h), before expiry_hours (3) ($(grep '^lease' <<<"$st"))"
ddl renew vwe2e --hours 5 >r.log 2>&1 || { cat r.log; cat geni.log; fail "renew"; }
grep -q "^SA update $slice" geni.log && grep -qx "AM Renew $slice" geni.log || { cat geni.log; fail "renew calls"; }
grep -Eq "lease ends .* \(in 4h 5[0-9]m\)$" r.log || { cat r.log; fail "renew did not report the new end"; }
grep -Eq "^lease ends .* \(in 4h 5[0-9]m\)$" <<<"$(ddl status vwe2e)" || fail "status after renew"
rc=0; ddl renew vwe2e --hours 336 >r2.log 2>&1 || rc=$?
# ProtoGENI's slice authority answers GENIRESPONSE_ERROR (2) with its text, read with ProtoGENI's table.
[ "$rc" != 0 ] && [ "$(grep -c . r2.log)" = 1 ] && grep -q "slice authority update at .*/protogeni/xmlrpc/geni-sa/2 refused: ERROR (Error (other)): expiration is greater then the maximum number of minutes 20160; .*: ask for fewer hours$" r2.log \
  || { cat r2.log; fail "renew past the slice authority's limit: not one clear line"; }
ok "renew: SA slice expiry, then AM Renew; a renew too far refused in one line, ProtoGENI's code read as ProtoGENI's ($(cat r2.log | cut -c1-120)...)"
ddl destroy -y vwe2e >x.log 2>&1 || { cat x.log; fail "destroy"; }
grep -qx "AM Delete $slice" geni.log || { cat geni.log; fail "no Delete"; }
[ -z "$(ls -A "$GENI_STATE/nodes")" ] || fail "nodes left after destroy"
[ ! -e "$STATE/vwe2e" ] || fail "state of vwe2e left"
ok "destroy deleted the slivers; nothing left"

# The legacy authority: a wall2 login file works the same; a slice whose slivers are already gone is
# destroyed without error.
# (The real wall2 authorities are ProtoGENI's; this user's spec names the Federation API's paths of the
# stand-in only so that that path stays covered too.)
AUTHORITIES=fed vwspec vwold bob 0
ddl deploy vwold.yaml >o.log 2>&1 || { cat o.log; fail "deploy with a wall2.ilabt.iminds.be login"; }
old="urn:publicid:IDN+wall2.ilabt.iminds.be:ddltest+slice+vwold"
grep -qx "AM Describe $old" geni.log || { cat geni.log; fail "the wall2 slice URN"; }
python3 - "$base" "$old" <<'PY' || fail "deleting the slivers behind ddl's back"
import ssl, sys, xmlrpc.client
ctx = ssl.create_default_context(cafile="ca/ca.pem"); ctx.load_cert_chain("bob.pem")
p = lambda path: xmlrpc.client.ServerProxy(sys.argv[1] + path, context=ctx, allow_none=True)
user = p("/ma/2").get_credentials("urn:publicid:IDN+wall2.ilabt.iminds.be+user+bob", [], {})["value"]
cred = p("/sa/2").get_credentials(sys.argv[2], user, {})["value"]
assert p("/am/3.0").Delete([sys.argv[2]], cred, {})["code"]["geni_code"] == 0
PY
ddl destroy -y vwold >ox.log 2>&1 || { cat ox.log; fail "destroy of a slice without slivers"; }
expect_in ox.log "has no slivers left" "destroy did not say the slivers were gone"
ok "a wall2.ilabt.iminds.be login works too; destroy of a slice already gone counts as done"

# The jFed GUI way: the user created slice vwgui in jFed and saved its manifest. Here the jFed CLI
# stand-in plays the GUI, with the user's own key (jFed installs the account's keys).
ddl render vwe2e.yaml --out r >/dev/null
export FAKE_JFED_STATE FAKE_JFED_ACCOUNT_KEYS="$WORK/user_key.pub"
gui_urn="urn:publicid:IDN+wall2.ilabt.iminds.be:ddltest+slice+vwgui"
rc=0; "$fakes/jfed-cli" run x.yaml 2>err.txt || rc=$?
expect_rc "$rc" 2 err.txt "unknown command 'run'" "jFed stand-in accepted 'run FILE'"
rc=0; "$fakes/jfed-cli" delete --rspec x -s "$gui_urn" 2>err.txt || rc=$?
expect_rc "$rc" 2 err.txt "delete needs -p" "jFed stand-in accepted a call without -p"
"$fakes/jfed-cli" create --create-slice --ssh-keys usercert --manifest "$WORK/gui-manifest.xml" --expiration-hours 2 \
  --rspec "$WORK/r/virtualwall/request.rspec" -s "$gui_urn" -p alice.pem >/dev/null || fail "stand-in as the GUI"
sed -e 's/^name: .*/name: vwe2e-gui/' -e '/login_pem:/d' -e '/_url: https/d' -e 's/connect_via: ipv4/connect_via: hostname\n  slice: vwgui/' \
    vwe2e.yaml >vwgui.yaml
CLUSTERS+=(vwe2e-gui)
if ddl deploy vwgui.yaml >n.log 2>&1; then fail "deploy without login_pem or manifest"; fi
grep -q "virtualwall.login_pem is not set, so ddl needs the manifest: .* request .*request.rspec in the jFed GUI as slice vwgui in project ddltest" n.log \
  || { cat n.log; fail "message without a manifest"; }
spec local-manifest 1
rc=0; ddl deploy local-manifest.yaml --manifest gui-manifest.xml >l.log 2>&1 || rc=$?
expect_rc "$rc" 2 l.log "manifest is for target virtualwall" "--manifest on target local"
ddl deploy vwgui.yaml --manifest gui-manifest.xml >g.log 2>&1 || { cat g.log; fail "deploy --manifest"; }
ddl exec --cluster vwe2e-gui -- true || fail "exec on the GUI slice"
ok "deploy --manifest with the jFed GUI's manifest, then exec on every node"
ddl destroy -y vwe2e-gui >gx.log 2>&1 || { cat gx.log; fail "destroy of the GUI cluster"; }
grep -q "delete slice vwgui of project ddltest (urn:publicid:IDN+wall2.ilabt.iminds.be+authority+cm) yourself" gx.log \
  || { cat gx.log; fail "destroy did not say what to delete"; }
"$fakes/jfed-cli" delete --rspec "$WORK/r/virtualwall/request.rspec" -s "$gui_urn" -p alice.pem >/dev/null || fail "deleting the GUI slice"
ok "destroy told the user exactly which slice to delete, and left it to them"
