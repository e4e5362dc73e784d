#!/usr/bin/env bash
# Target virtualwall against the jFed stand-in (tests/fakes/jfed-cli: the CLI's documented commands),
# whose slices are real local nodes made by ddl-fake-nodes: deploy through the CLI (create, the user's
# login PEM) -> the testbed's NAT script runs on every node -> exec -> hostfile -> destroy (delete); then
# the jFed-GUI way: a manifest given with --manifest, and destroy saying what to delete.
source "$(dirname "$0")/lib.sh"
fakes="$DDL_SOURCE_DIR/tests/fakes"
export DDL_FAKE_NODES="${DDL_FAKE_NODES:-$DDL_BINARY_DIR/tests/fakes/ddl-fake-nodes}"
[ -x "$DDL_FAKE_NODES" ] || fail "missing $DDL_FAKE_NODES (build the tests/fakes tools)"
export FAKE_JFED_STATE="$WORK/jfed" FAKE_JFED_LOG="$WORK/jfed.log"
mkdir -p "$FAKE_JFED_STATE"
# Whatever happens, no fake node outlives the test.
trap 'rc=$?; for d in "$FAKE_JFED_STATE"/nodes/*/; do [ -d "$d" ] && "$DDL_FAKE_NODES" down --id "$(basename "$d")" --state-dir "$FAKE_JFED_STATE/nodes" >/dev/null 2>&1; done; (exit $rc); cleanup' EXIT

slice_gone() { # PROJECT-SLICE: no namespace, no slice record left
  [ ! -e "$FAKE_JFED_STATE/slices/$1.json" ] || fail "slice record $1 left"
  [ -z "$(ls -A "$FAKE_JFED_STATE/nodes" 2>/dev/null | grep -x "$1")" ] || fail "fake nodes of $1 left"
  if ip netns list | grep -q "ddl-$1-"; then fail "namespaces of $1 left"; fi
}

# The user's iLab.t login file (certificate + key) and the SSH key registered with the account.
openssl req -x509 -newkey rsa:2048 -nodes -keyout login.key -out login.crt -subj /CN=e2e -days 1 2>/dev/null
cat login.crt login.key >login.pem && chmod 600 login.pem
ssh-keygen -q -t ed25519 -N '' -C e2e-user -f user_key
export FAKE_JFED_ACCOUNT_KEYS="$WORK/user_key.pub"
# The stand-in refuses what jFed would: another tool's command line, a missing login.
rc=0; "$fakes/jfed-cli" run x.yaml 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -q "unknown command 'run'" err.txt || { cat err.txt; fail "stand-in accepted 'run FILE'"; }
rc=0; "$fakes/jfed-cli" delete --rspec x -s "urn:publicid:IDN+wall2.ilabt.iminds.be:ddltest+slice+x" 2>err.txt || rc=$?
[ "$rc" = 2 ] && grep -q "delete needs -p" err.txt || { cat err.txt; fail "stand-in accepted a call without -p"; }
ok "the jFed stand-in refuses an unknown command and a call without the login"
# The testbed's NAT script, served to the nodes by a local web server (the nodes reach this machine
# through their default route); it leaves a mark per node.
mkdir -p nat && printf '#!/bin/bash\necho enabled >"%s/nat.$(hostname)"\n' "$WORK" >nat/enable-nat.sh
nat_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 0.0.0.0 --directory nat "$nat_port" >http.log 2>&1 &
http_pid=$!
host_ip=$(hostname -I | awk '{print $1}')
for _ in $(seq 50); do curl -fs "http://$host_ip:$nat_port/enable-nat.sh" >/dev/null && break; sleep 0.1; done
trap 'rc=$?; kill $http_pid 2>/dev/null; for d in "$FAKE_JFED_STATE"/nodes/*/; do [ -d "$d" ] && "$DDL_FAKE_NODES" down --id "$(basename "$d")" --state-dir "$FAKE_JFED_STATE/nodes" >/dev/null 2>&1; done; (exit $rc); cleanup' EXIT

cat >vwcli.yaml <<YAML
apiVersion: ddl/v1
name: vwe2e-cli
target: virtualwall
nodes:
  master: {gpus: 0}
  workers: {count: 2, gpus: 0}
access:
  user: root
  private_key: $WORK/user_key
virtualwall:
  testbed: wall2
  project: ddltest
  disk_image: urn:publicid:IDN+wall2.ilabt.iminds.be+image+emulab-ops:UBUNTU22-64-STD
  link_capacity: 1gbit
  jfed_cli: $fakes/jfed-cli
  login_pem: $WORK/login.pem
  nat_script_url: http://$host_ip:$nat_port/enable-nat.sh
  connect_via: ipv4
YAML
CLUSTERS+=(vwe2e-cli)
ddl deploy vwcli.yaml >d.log 2>&1 || { cat d.log; fail "deploy through the jFed CLI"; }
grep -qx "create ddltest vwe2e-cli master,worker1,worker2" jfed.log || { cat jfed.log; fail "jFed create call"; }
ok "deploy: jFed create with the login PEM checked by the stand-in, slice created, manifest read"
for n in master worker1 worker2; do [ "$(cat "nat.$n" 2>/dev/null)" = enabled ] || fail "the NAT script did not run on $n"; done
grep -q '"GET /enable-nat.sh' http.log || fail "the nodes did not fetch the NAT script"
ok "configure ran the testbed's NAT script on every node first"
out=$(ddl exec --cluster vwe2e-cli -- 'hostname; echo "$SSH_CONNECTION"') || fail "exec on every node"
for n in master worker1 worker2; do grep -q "^\[$n\] $n$" <<<"$out" || { echo "$out"; fail "exec on $n"; }; done
ok "exec on every node of the slice"
addrs=$(python3 - "$STATE/vwe2e-cli/virtualwall/manifest.rspec" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.geni.net/resources/rspec/3}"
for n in ET.parse(sys.argv[1]).getroot().findall(ns + "node"):
    print(n.find(ns + "host").get("ipv4"))
PY
)
hf=$(ddl hostfile --cluster vwe2e-cli)
for a in $addrs; do grep -q "^$a slots=1$" <<<"$hf" || { echo "$hf"; fail "hostfile misses $a"; }; done
[ "$(grep -c slots= <<<"$hf")" = 3 ] || fail "hostfile node count"
ok "hostfile from the manifest's nodes"
ddl deploy vwcli.yaml >d2.log 2>&1 || { cat d2.log; fail "second deploy"; }
[ "$(grep -c '^create' jfed.log)" = 1 ] || fail "a second deploy created the slice again"
ok "a second deploy converges without a second slice"
ddl destroy -y vwe2e-cli >x.log 2>&1 || { cat x.log; fail "destroy"; }
grep -qx "delete ddltest vwe2e-cli" jfed.log || { cat jfed.log; fail "jFed delete call"; }
[ ! -e "$STATE/vwe2e-cli" ] || fail "state of vwe2e-cli left"
slice_gone ddltest-vwe2e-cli
ok "destroy deleted the slice through the CLI; nothing left"

# The jFed GUI way: the user created slice vwgui in jFed and saved its manifest. Here the stand-in plays
# the GUI, with the user's own key (jFed installs the account's keys).
ddl render vwcli.yaml --out r >/dev/null
gui_urn="urn:publicid:IDN+wall2.ilabt.iminds.be:ddltest+slice+vwgui"
"$fakes/jfed-cli" create --create-slice --ssh-keys usercert --manifest "$WORK/gui-manifest.xml" --expiration-hours 2 \
  --rspec "$WORK/r/virtualwall/request.rspec" -s "$gui_urn" -p login.pem >/dev/null || fail "stand-in as the GUI"
sed -e 's/^name: .*/name: vwe2e-gui/' -e '/jfed_cli:/d' -e '/login_pem:/d' -e 's/connect_via: ipv4/connect_via: hostname\n  slice: vwgui/' \
    vwcli.yaml >vwgui.yaml
CLUSTERS+=(vwe2e-gui)
if ddl deploy vwgui.yaml >n.log 2>&1; then fail "deploy without CLI or manifest"; fi
grep -q "ddl needs the manifest: request .*request.rspec in the jFed GUI as slice vwgui in project ddltest" n.log \
  || { cat n.log; fail "message without a manifest"; }
spec local-manifest 1
rc=0; ddl deploy local-manifest.yaml --manifest gui-manifest.xml >l.log 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "manifest is for target virtualwall" l.log || { cat l.log; fail "--manifest on target local"; }
ddl deploy vwgui.yaml --manifest gui-manifest.xml >g.log 2>&1 || { cat g.log; fail "deploy --manifest"; }
ddl exec --cluster vwe2e-gui -- true || fail "exec on the GUI slice"
ok "deploy --manifest with the jFed GUI's manifest, then exec on every node"
ddl destroy -y vwe2e-gui >gx.log 2>&1 || { cat gx.log; fail "destroy of the GUI cluster"; }
grep -q "delete slice vwgui of project ddltest (urn:publicid:IDN+wall2.ilabt.iminds.be+authority+cm) yourself" gx.log \
  || { cat gx.log; fail "destroy did not say what to delete"; }
[ -e "$FAKE_JFED_STATE/slices/ddltest-vwgui.json" ] || fail "destroy deleted a slice ddl did not create"
"$fakes/jfed-cli" delete --rspec "$WORK/r/virtualwall/request.rspec" -s "$gui_urn" -p login.pem >/dev/null || fail "deleting the GUI slice"
slice_gone ddltest-vwgui
ok "destroy told the user exactly which slice to delete, and left it to them"
