#!/usr/bin/env bash
# Follows: the OpenStack api-ref pages tests/fakes/openstack_cloud.py names for the shared cloud: Compute
# "List Servers Detailed", "Show Server Details", "Delete Server", "Delete Keypair", "List/Delete Server
# Groups", "Stop Server (os-stop Action)", "Start Server (os-start Action)"
# (https://docs.openstack.org/api-ref/compute/); Networking "List/Delete" networks, subnets, ports,
# routers, floating IPs, security groups, "Remove interface from router"
# (https://docs.openstack.org/api-ref/network/v2/) and Neutron's "Resource tags", "Filtering with tags"
# (https://docs.openstack.org/neutron/latest/admin/ops-resource-tags.html); the 409 types and messages as
# Neutron's code raises them (openstack_cloud.py names the files).
# Checks the shared cloud of the two OpenStack stand-ins with curl: a registry seeded by hand is listed
# (tag and attribute filters, server paging), each Neutron refusal of a delete in the wrong order comes
# with its status and NeutronError type, the order that works empties it, a deleted server takes its
# ddl-fake-nodes node with it (argv checked on a stub), and what tests/fakes/terraform applies is in the
# registry, deletable through the API, and gone after its destroy.
# Usage: test_openstack_resources.sh [SOURCE_DIR]
# shellcheck disable=SC2015,SC2016 # `good` always succeeds; the stubs' scripts are literal text
set -euo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
fakes="$src/tests/fakes"

# shellcheck source=SCRIPTDIR/standin_lib.sh
source "$fakes/standin_lib.sh"

PW="planted-Pa55word-$$"
cat >"$work/cloud.json" <<JSON
{"users": {"alice": "$PW"}, "project": {"id": "p-42", "name": "ml"},
 "flavors": [{"name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20}, {"name": "g1.small", "vcpus": 2, "ram": 4096, "disk": 0}],
 "images": ["Ubuntu 22.04"], "networks": [{"name": "public", "router:external": true}],
 "compute_limits": {"maxTotalInstances": 10, "totalInstancesUsed": 0}}
JSON
REG="$work/cloud-resources.json"

# ddl-fake-nodes stand-ins: one logs its argv and brings up the nodes it is given, one always fails.
export NODES_LOG="$work/nodes.log"
cat >"$work/nodes-stub" <<'SH'
#!/bin/sh
echo "$*" >>"$NODES_LOG"
[ "$1" = up ] || exit 0
names=$(echo "$*" | sed -n 's/.*--names \([^ ]*\).*/\1/p')
python3 -c 'import json, sys
print(json.dumps({"nodes": [{"name": n, "public_address": "192.0.2.10" if i == 0 else "", "private_address": "10.77.0.%d" % (i + 2),
                            "port": 22, "user": "root"} for i, n in enumerate(sys.argv[1].split(","))]}))' "$names"
SH
printf '#!/bin/sh\necho "$*" >>"$NODES_LOG.failing"\necho "no such cluster" >&2\nexit 1\n' >"$work/nodes-failing"
chmod +x "$work/nodes-stub" "$work/nodes-failing"
export DDL_FAKE_NODES="$work/nodes-stub"

# The seeded cloud: cluster c1 (key pair, server group, network, subnet, router and its interface, security
# group, three servers on their ports, the master's floating IP), a network of c2 with a subnet, c3's
# server whose node cannot be removed, and a server of another project.
"$py" - "$fakes" "$REG" "$work" <<'PY'
import json, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import openstack_registry as api
reg_path, work = sys.argv[2], sys.argv[3]
with api.registry(reg_path, write=True) as reg:
    T = ["ddl", "ddl-cluster=c1"]
    kp = api.new_keypair(reg, "c1-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHN0YW5kLWluLWtleQ c1", "u-alice")
    reg["keypairs"].append(kp)
    g = dict(api.new_server_group("p-42", "u-alice", "c1-nodes", ["anti-affinity"]), id="sg-grp-c1")
    net = dict(api.new_network("p-42", "c1-net", T), id="net-c1")
    sub = dict(api.new_subnet("p-42", "c1-subnet", T, "net-c1", "192.168.42.0/24"), id="sub-c1")
    net["subnets"] = ["sub-c1"]
    rt = dict(api.new_router("p-42", "c1-router", T, "n-public"), id="rt-c1")
    sg = dict(api.new_security_group("p-42", "c1-nodes", T), id="secg-c1")
    reg["server_groups"].append(g); reg["networks"].append(net); reg["subnets"].append(sub)
    reg["routers"].append(rt); reg["security_groups"].append(sg)
    reg["ports"].append(dict(api.new_port("p-42", "", [], "net-c1", [{"subnet_id": "sub-c1", "ip_address": "192.168.42.1"}], [],
                                          "rt-c1", "network:router_interface"), id="port-rif"))
    for i, (role, name, node) in enumerate([("master", "c1-master", "master"), ("worker", "c1-worker-0", "worker1"),
                                            ("worker", "c1-worker-1", "worker2")]):
        s = api.new_server("p-42", "u-alice", name, "m1.small" if role == "master" else "g1.small", "c1-key",
                           {"ddl_cluster": "c1", "ddl_role": role, "ddl_state": "/gone/state"}, ["c1-nodes"],
                           {"id": "c1", "state_dir": work + "/nodes/c1", "node": node})
        s.update(id="srv-" + node, created="2026-11-26T10:00:0%dZ" % i)
        reg["servers"].append(s)
        g["members"].append(s["id"])
        reg["ports"].append(dict(api.new_port("p-42", name, T, "net-c1", [{"subnet_id": "sub-c1", "ip_address": "192.168.42.%d" % (10 + i)}],
                                              ["secg-c1"], s["id"], "compute:nova"), id="port-" + node))
    fip = dict(api.new_floatingip("p-42", T, "c1 master", "n-public", "203.0.113.7"), id="fip-c1")
    fip.update(port_id="port-master", fixed_ip_address="192.168.42.10", router_id="rt-c1", status="ACTIVE")
    reg["floatingips"].append(fip)
    T2 = ["ddl", "ddl-cluster=c2"]
    reg["networks"].append(dict(api.new_network("p-42", "c2-net", T2), id="net-c2", subnets=["sub-c2"]))
    reg["subnets"].append(dict(api.new_subnet("p-42", "c2-subnet", T2, "net-c2", "10.9.0.0/24"), id="sub-c2"))
    reg["servers"].append(dict(api.new_server("p-42", "u-alice", "c3-master", "m1.small", "c3-key", {"ddl_cluster": "c3"}, [],
                                              {"id": "c3", "state_dir": work + "/nodes/c3", "node": "master",
                                               "tool": work + "/nodes-failing"}), id="srv-c3", created="2026-11-25T09:00:00Z"))
    reg["servers"].append(dict(api.new_server("p-other", "u-bob", "theirs", "m1.small", "k", {}, []), id="srv-other"))
PY

"$fakes/make_test_ca.sh" "$work/tls"
start_standin "$fakes/openstack_api.py" "$work/cloud.json" --resources "$REG"

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
get() { call GET "$1" -H "X-Auth-Token: $TOKEN" "${@:2}"; }
del() { call DELETE "$1" -H "X-Auth-Token: $TOKEN"; }
put() { call PUT "$1" -H "X-Auth-Token: $TOKEN" -H "Content-Type: application/json" --data "$2"; }
bad() { echo "FAIL: $1"; [ -z "${2:-}" ] || echo "  $2"; failed=1; }
good() { passed=$((passed + 1)); echo "ok   $1"; }
# expect WHAT STATUS PYEXPR: the last reply had STATUS and a JSON body for which PYEXPR (over `b`) holds;
# PYEXPR "" means no body at all (204, 202).
expect() {
  local what=$1 want=$2 cond=$3
  if [ "$status" != "$want" ]; then bad "$what: status $status, expected $want" "$body"; return; fi
  if [ -z "$cond" ]; then
    [ -z "$body" ] || { bad "$what: a body where none is sent" "$body"; return; }
  elif ! "$py" -c 'import sys, json
b = json.loads(sys.stdin.read())
sys.exit(0 if eval(sys.argv[1]) else 1)' "$cond" <<<"$body"; then
    bad "$what: the body is not JSON or fails: $cond" "$body"; return
  fi
  good "$what ($status)"
}
# neutron_409 WHAT TYPE MESSAGE: a 409 NeutronError of TYPE with exactly MESSAGE.
neutron_409() {
  expect "$1" 409 "b == {'NeutronError': {'type': '$2', 'message': '$3', 'detail': ''}}"
}
# nodes_call WHAT LINE: the last ddl-fake-nodes call was exactly LINE.
nodes_call() {
  local last
  last=$(tail -n 1 "$NODES_LOG" 2>/dev/null || true)
  if [ "$last" = "$2" ]; then good "$1"; else bad "$1: the last ddl-fake-nodes call was" "$last (expected: $2)"; fi
}
in_registry() { "$py" -c 'import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$REG" "$1"; }

call POST /identity/v3/auth/tokens -H "Content-Type: application/json" --data \
  '{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "alice", "domain": {"id": "default"}, "password": "'"$PW"'"}}},
    "scope": {"project": {"id": "p-42"}}}}'
TOKEN=$(sed -n 's/^x-subject-token: *//p' <<<"$headers")
[ -n "$TOKEN" ] || { echo "FAIL: no token: $body"; exit 1; }

# --- listing ----------------------------------------------------------------------------------------------
get "/compute/v2.1/servers/detail?limit=2"
expect "R1 servers/detail?limit=2: the two newest of the project, every field, a next link" 200 \
  "[s['id'] for s in b['servers']] == ['srv-worker2', 'srv-worker1'] and b['servers_links'] == [{'rel': 'next', 'href': '$url/compute/v2.1/servers/detail?limit=2&marker=srv-worker1'}] and all({'id','name','status','created','updated','metadata','tenant_id','user_id','flavor','addresses','links','key_name','image','hostId','OS-EXT-STS:vm_state','security_groups'} <= set(s) and not any(k.startswith('_') for k in s) for s in b['servers']) and b['servers'][0]['flavor'] == {'id': 'f1', 'links': [{'rel': 'bookmark', 'href': '$url/compute/flavors/f1'}]} and b['servers'][0]['metadata'] == {'ddl_cluster': 'c1', 'ddl_role': 'worker', 'ddl_state': '/gone/state'} and b['servers'][0]['tenant_id'] == 'p-42'"
get "/compute/v2.1/servers/detail?limit=2&marker=srv-worker1"
expect "R1 the page after the marker: the master and c3's server; another project's is never listed" 200 \
  "[s['id'] for s in b['servers']] == ['srv-master', 'srv-c3'] and 'servers_links' in b and b['servers'][0]['addresses'] == {'c1-net': [{'version': 4, 'addr': '192.168.42.10', 'OS-EXT-IPS:type': 'fixed', 'OS-EXT-IPS-MAC:mac_addr': b['servers'][0]['addresses']['c1-net'][0]['OS-EXT-IPS-MAC:mac_addr']}, {'version': 4, 'addr': '203.0.113.7', 'OS-EXT-IPS:type': 'floating', 'OS-EXT-IPS-MAC:mac_addr': b['servers'][0]['addresses']['c1-net'][0]['OS-EXT-IPS-MAC:mac_addr']}]}"
get "/compute/v2.1/servers/detail?limit=2&marker=srv-c3"
expect "R1 past the last one: an empty page without a next link" 200 "b == {'servers': []}"
get "/compute/v2.1/servers/detail?marker=nope"
expect "R1 an unknown marker: 400 badRequest" 400 "b == {'badRequest': {'code': 400, 'message': 'marker [nope] not found'}}"
get "/compute/v2.1/servers/detail?name=%5Ec1-worker"
expect "R1 the name filter is a regular expression" 200 "sorted(s['name'] for s in b['servers']) == ['c1-worker-0', 'c1-worker-1']"
get "/compute/v2.1/servers"
expect "R1 List Servers: id, name and links only" 200 "sorted(b['servers'][0]) == ['id', 'links', 'name'] and len(b['servers']) == 4"
get /compute/v2.1/servers/srv-master
expect "R2 show a server" 200 "b['server']['name'] == 'c1-master' and b['server']['status'] == 'ACTIVE'"
get /compute/v2.1/servers/srv-other
expect "R2 another project's server: 404 itemNotFound" 404 \
  "b == {'itemNotFound': {'code': 404, 'message': 'Instance srv-other could not be found.'}}"
get "/network/v2.0/ports?tags=ddl,ddl-cluster%3Dc1"
expect "R3 ports?tags=ddl,ddl-cluster=c1: every listed tag must match (the router's port has none)" 200 \
  "sorted(p['name'] for p in b['ports']) == ['c1-master', 'c1-worker-0', 'c1-worker-1']"
get "/network/v2.0/networks?tags=ddl-cluster%3Dc2"
expect "R3 networks?tags=ddl-cluster=c2" 200 "[n['name'] for n in b['networks']] == ['c2-net']"
get "/network/v2.0/networks?tags=ddl&tags=ddl-cluster%3Dc1"
expect "R3 tags given twice: both must match" 200 "[n['name'] for n in b['networks']] == ['c1-net']"
get "/network/v2.0/networks?tags-any=ddl-cluster%3Dc1,ddl-cluster%3Dc2&not-tags=ddl-cluster%3Dc2"
expect "R3 tags-any and not-tags" 200 "[n['name'] for n in b['networks']] == ['c1-net']"
get "/network/v2.0/networks?router:external=true"
expect "R3 the config's networks stay listed (pre-flight)" 200 "[n['name'] for n in b['networks']] == ['public']"
get "/network/v2.0/ports?device_owner=network:router_interface&network_id=net-c1"
expect "R3 ports by device_owner and network_id" 200 "[p['id'] for p in b['ports']] == ['port-rif'] and b['ports'][0]['device_id'] == 'rt-c1'"
for what in "routers?name=c1-router:routers" "subnets?name=c1-subnet:subnets" "security-groups?tags=ddl-cluster%3Dc1:security_groups"; do
  get "/network/v2.0/${what%:*}"
  expect "R3 ${what%:*}" 200 "len(b['${what##*:}']) == 1 and b['${what##*:}'][0]['tags'] == ['ddl', 'ddl-cluster=c1']"
done
get "/network/v2.0/floatingips?port_id=port-master"
expect "R3 floatingips?port_id=: the master's, with its description and port_details" 200 \
  "[f['id'] for f in b['floatingips']] == ['fip-c1'] and b['floatingips'][0]['description'] == 'c1 master' and b['floatingips'][0]['floating_ip_address'] == '203.0.113.7' and b['floatingips'][0]['port_details']['device_id'] == 'srv-master'"
get /compute/v2.1/os-keypairs
expect "R4 key pairs" 200 "[k['keypair']['name'] for k in b['keypairs']] == ['c1-key'] and sorted(b['keypairs'][0]['keypair']) == ['fingerprint', 'name', 'public_key']"
get /compute/v2.1/os-server-groups
expect "R4 server groups" 200 "b['server_groups'][0]['name'] == 'c1-nodes' and len(b['server_groups'][0]['members']) == 3"

# --- deletes in the wrong order: Neutron refuses ---------------------------------------------------------
del /network/v2.0/networks/net-c1
neutron_409 "D1 a network with ports: 409 NetworkInUse" NetworkInUse \
  "Unable to complete operation on network net-c1. There are one or more ports still in use on the network, id for these ports is: port-rif,port-master,port-worker1,port-worker2."
del /network/v2.0/subnets/sub-c1
neutron_409 "D2 a subnet with a router interface: 409 SubnetInUse" SubnetInUse \
  "Unable to complete operation on subnet sub-c1: One or more ports have an IP allocation from this subnet."
del /network/v2.0/routers/rt-c1
neutron_409 "D3 a router with an interface: 409 RouterInUse" RouterInUse "Router rt-c1 has ports still attached: port-rif"
del /network/v2.0/ports/port-rif
neutron_409 "D4 the router's port through the port API: 409 ServicePortInUse" ServicePortInUse \
  "Port port-rif cannot be deleted directly via the port API: has device owner network:router_interface."
del /network/v2.0/security-groups/secg-c1
neutron_409 "D5 a security group ports use: 409 SecurityGroupInUse" SecurityGroupInUse "Security Group secg-c1 in use."
put /network/v2.0/routers/rt-c1/remove_router_interface '{"subnet_id": "sub-c1"}'
neutron_409 "D6 the interface a floating IP is routed through: 409 RouterInterfaceInUseByFloatingIP" RouterInterfaceInUseByFloatingIP \
  "Router interface for subnet sub-c1 on router rt-c1 cannot be deleted, as it is required by one or more floating IPs."
put /network/v2.0/routers/rt-c1/remove_router_interface '{}'
expect "D6 remove_router_interface without subnet_id or port_id: 400 BadRequest" 400 \
  "b['NeutronError']['type'] == 'BadRequest' and b['NeutronError']['message'] == 'Bad router request: Either subnet_id or port_id must be specified.'"
put /network/v2.0/routers/rt-c1/remove_router_interface '{"port_id": "port-master"}'
expect "D6 a port that is no interface of the router: 404 RouterInterfaceNotFound" 404 "b['NeutronError']['type'] == 'RouterInterfaceNotFound'"
del /network/v2.0/networks/n-public
expect "D7 a network of the config (not the project's own): 404 NetworkNotFound" 404 "b['NeutronError']['type'] == 'NetworkNotFound'"
in_registry 'len(r["ports"]) == 4 and len(r["networks"]) == 2 and len(r["routers"]) == 1' &&
  good "the refused deletes changed nothing" || bad "a refused delete changed the registry"

# --- Stop Server (os-stop Action), Start Server (os-start Action) -------------------------------------------
post() { call POST "$1" -H "X-Auth-Token: $TOKEN" -H "Content-Type: application/json" --data "$2"; }
post /compute/v2.1/servers/srv-worker1/action '{"os-stop": null}'
expect "P1 os-stop: 202 without a body" 202 ""
nodes_call "P1 its node is powered off" "stop --id c1 --state-dir $work/nodes/c1 --names worker1"
get /compute/v2.1/servers/srv-worker1
expect "P1 then SHUTOFF, vm_state stopped, power_state SHUTDOWN (4)" 200 \
  "b['server']['status'] == 'SHUTOFF' and b['server']['OS-EXT-STS:vm_state'] == 'stopped' and b['server']['OS-EXT-STS:power_state'] == 4"
post /compute/v2.1/servers/srv-worker1/action '{"os-stop": null}'
expect "P2 os-stop of a stopped server: 409 conflictingRequest" 409 \
  "b == {'conflictingRequest': {'code': 409, 'message': \"Cannot 'stop' instance srv-worker1 while it is in vm_state stopped\"}}"
post /compute/v2.1/servers/srv-master/action '{"os-start": null}'
expect "P3 os-start of an active server: 409 conflictingRequest" 409 \
  "b == {'conflictingRequest': {'code': 409, 'message': \"Cannot 'start' instance srv-master while it is in vm_state active\"}}"
post /compute/v2.1/servers/srv-worker1/action '{"os-start": null}'
expect "P4 os-start: 202" 202 ""
nodes_call "P4 its node boots: up with every node of its cluster, --start it (the others stay as they are)" \
  "up --id c1 --state-dir $work/nodes/c1 --names master,worker1,worker2 --pubkey-file $work/nodes/c1/pubkey.pub --bastion --start worker1"
get /compute/v2.1/servers/srv-worker1
expect "P4 then ACTIVE, power_state RUNNING (1)" 200 \
  "b['server']['status'] == 'ACTIVE' and b['server']['OS-EXT-STS:vm_state'] == 'active' and b['server']['OS-EXT-STS:power_state'] == 1"
post /compute/v2.1/servers/srv-worker1/action '{"os-reboot-not-modelled": null}'
expect "P5 an action Nova does not have: 400" 400 "b == {'badRequest': {'code': 400, 'message': 'There is no such action: os-reboot-not-modelled'}}"
post /compute/v2.1/servers/srv-other/action '{"os-stop": null}'
expect "P5 another project's server: 404" 404 "b == {'itemNotFound': {'code': 404, 'message': 'Instance srv-other could not be found.'}}"
call POST /compute/v2.1/servers/srv-worker1/action -H "Content-Type: application/json" --data '{"os-stop": null}'
expect "P5 without a token: keystonemiddleware's 401" 401 "b['error']['code'] == 401"

# --- the order that works ---------------------------------------------------------------------------------
del /network/v2.0/floatingips/fip-c1
expect "O1 the floating IP: 204" 204 ""
get /network/v2.0/floatingips/fip-c1
expect "O1 then 404 FloatingIPNotFound" 404 \
  "b == {'NeutronError': {'type': 'FloatingIPNotFound', 'message': 'Floating IP fip-c1 could not be found', 'detail': ''}}"
del /compute/v2.1/servers/srv-worker2
expect "O2 a worker: 204" 204 ""
nodes_call "O2 its node goes: the cluster's others come up again without it" \
  "up --id c1 --state-dir $work/nodes/c1 --names master,worker1 --pubkey-file $work/nodes/c1/pubkey.pub --bastion"
get /network/v2.0/ports/port-worker2
expect "O2 its port stays, unbound (device_id and device_owner empty)" 200 \
  "b['port']['device_id'] == '' and b['port']['device_owner'] == '' and b['port']['status'] == 'DOWN'"
get /compute/v2.1/servers/srv-worker2
expect "O2 the server: 404 itemNotFound" 404 "b == {'itemNotFound': {'code': 404, 'message': 'Instance srv-worker2 could not be found.'}}"
del /compute/v2.1/servers/srv-master
expect "O2 the master: 204" 204 ""
nodes_call "O2 the remaining worker comes up alone" \
  "up --id c1 --state-dir $work/nodes/c1 --names worker1 --pubkey-file $work/nodes/c1/pubkey.pub --bastion"
del /compute/v2.1/servers/srv-worker1
expect "O2 the last server: 204" 204 ""
nodes_call "O2 with the last server the nodes go down" "down --id c1 --state-dir $work/nodes/c1"
del /compute/v2.1/servers/srv-worker1
expect "O2 deleted twice: 404 itemNotFound" 404 "b == {'itemNotFound': {'code': 404, 'message': 'Instance could not be found'}}"
get /compute/v2.1/os-server-groups
expect "O2 the server group forgot its members" 200 "b['server_groups'][0]['members'] == []"
for p in port-master port-worker1 port-worker2; do
  del "/network/v2.0/ports/$p"
  expect "O3 port $p: 204" 204 ""
done
del /network/v2.0/security-groups/secg-c1
expect "O3 the security group, no port left on it: 204" 204 ""
put /network/v2.0/routers/rt-c1/remove_router_interface '{"subnet_id": "sub-c1"}'
expect "O4 remove_router_interface by subnet: 200 with the interface's info" 200 \
  "b['id'] == 'rt-c1' and b['port_id'] == 'port-rif' and b['subnet_id'] == 'sub-c1' and b['subnet_ids'] == ['sub-c1'] and b['network_id'] == 'net-c1' and b['project_id'] == 'p-42'"
get /network/v2.0/ports/port-rif
expect "O4 the interface's port is gone" 404 "b['NeutronError']['type'] == 'PortNotFound' and b['NeutronError']['message'] == 'Port port-rif could not be found.'"
put /network/v2.0/routers/rt-c1/remove_router_interface '{"subnet_id": "sub-c1"}'
expect "O4 again: 404 RouterInterfaceNotFoundForSubnet" 404 \
  "b['NeutronError'] == {'type': 'RouterInterfaceNotFoundForSubnet', 'message': 'Router rt-c1 has no interface on subnet sub-c1', 'detail': ''}"
del /network/v2.0/routers/rt-c1
expect "O5 the router: 204" 204 ""
del /network/v2.0/subnets/sub-c1
expect "O5 the subnet: 204" 204 ""
del /network/v2.0/networks/net-c1
expect "O5 the network: 204" 204 ""
del /compute/v2.1/os-keypairs/c1-key
expect "O6 the key pair: 202 (microversion 2.1)" 202 ""
del /compute/v2.1/os-keypairs/c1-key
expect "O6 again: 404 itemNotFound" 404 "b == {'itemNotFound': {'code': 404, 'message': 'Keypair c1-key not found for user u-alice'}}"
del /compute/v2.1/os-server-groups/sg-grp-c1
expect "O6 the server group: 204" 204 ""
del /compute/v2.1/os-server-groups/sg-grp-c1
expect "O6 again: 404 itemNotFound" 404 "b['itemNotFound']['message'] == 'Instance group sg-grp-c1 could not be found.'"
for what in networks/net-c1:NetworkNotFound subnets/sub-c1:SubnetNotFound routers/rt-c1:RouterNotFound security-groups/secg-c1:SecurityGroupNotFound; do
  get "/network/v2.0/${what%:*}"
  expect "O7 ${what%:*} after its delete: 404 ${what#*:}" 404 "b['NeutronError']['type'] == '${what#*:}'"
done
in_registry '[s["id"] for s in r["servers"]] == ["srv-c3", "srv-other"] and [n["id"] for n in r["networks"]] == ["net-c2"] and not (r["ports"] or r["routers"] or r["floatingips"] or r["security_groups"] or r["keypairs"] or r["server_groups"])' &&
  good "O7 nothing of c1 is left in the registry" || bad "O7 c1 left something: $(cat "$REG")"
del /network/v2.0/networks/net-c2
expect "O8 a network with a subnet and no port: 204" 204 ""
get /network/v2.0/subnets/sub-c2
expect "O8 its subnet went with it" 404 "b['NeutronError']['type'] == 'SubnetNotFound'"

del /compute/v2.1/servers/srv-c3
expect "O9 a server whose node cannot be removed: 204 all the same (Nova deletes asynchronously)" 204 ""
get /compute/v2.1/servers/srv-c3
expect "O9 it stays, in ERROR with a fault" 200 \
  "b['server']['status'] == 'ERROR' and b['server']['fault']['code'] == 500 and 'no such cluster' in b['server']['fault']['message']"
[ "$(cat "$NODES_LOG.failing")" = "down --id c3 --state-dir $work/nodes/c3" ] &&
  good "O9 the recorded tool was called, not \$DDL_FAKE_NODES" || bad "O9 the failing tool's calls: $(cat "$NODES_LOG.failing" 2>&1)"

# --- the Terraform stand-in writes the same cloud ----------------------------------------------------------
tfdir="$work/tf"
mkdir -p "$tfdir"
cp "$src"/src/targets/openstack/terraform/*.tf "$tfdir/"
printf 'clouds:\n  fakecloud:\n    auth:\n      auth_url: %s/identity/v3\n' "$url" >"$work/clouds.yaml"
cat >"$tfdir/terraform.tfvars.json" <<JSON
{"cluster_name": "tf1", "cloud": "fakecloud", "ssh_user": "root", "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRmMQ tf1",
 "image_name": "Ubuntu 22.04", "master_flavor": "m1.small", "worker_flavor": "g1.small", "worker_count": 2,
 "boot_volume_gb": 20, "external_network": "public", "network_cidr": "192.168.50.0/24", "allowed_cidrs": ["10.0.0.0/8"],
 "anti_affinity": true, "state_dir": "$work/state/tf1"}
JSON
tf() {
  (cd "$tfdir" && OS_CLOUD=fakecloud OS_CLIENT_CONFIG_FILE="$work/clouds.yaml" FAKE_OPENSTACK_RESOURCES="$REG" \
    FAKE_OPENSTACK_PROJECT_ID=p-42 "$fakes/terraform" "$@") >"$work/tf.out" 2>&1 || { cat "$work/tf.out"; return 1; }
}
: >"$NODES_LOG"
if tf init -input=false && tf plan -input=false -json -out=tfplan && tf apply -input=false -json tfplan; then
  good "T1 init, plan, apply with the registry set"
else
  bad "T1 the Terraform stand-in's apply failed"
fi
[ "$(head -n 1 "$NODES_LOG")" = "up --id tf1 --state-dir $work/nodes/tf1 --names master,worker1,worker2 --pubkey-file $work/nodes/tf1/pubkey.pub --bastion" ] &&
  [ ! -e "$tfdir/.fake-nodes" ] && good "T1 the nodes' state is kept beside the registry, not in the working directory" ||
  bad "T1 nodes: $(cat "$NODES_LOG")"
get "/compute/v2.1/servers/detail?name=%5Etf1-"
expect "T2 the applied servers are listed, ACTIVE, with ddl's metadata" 200 \
  "sorted((s['name'], s['status'], s['metadata']['ddl_role']) for s in b['servers']) == [('tf1-master', 'ACTIVE', 'master'), ('tf1-worker-0', 'ACTIVE', 'worker'), ('tf1-worker-1', 'ACTIVE', 'worker')] and all(s['metadata'] == {'ddl_cluster': 'tf1', 'ddl_role': s['metadata']['ddl_role'], 'ddl_state': '$work/state/tf1'} and s['key_name'] == 'tf1-key' and list(s['addresses']) == ['tf1-net'] for s in b['servers'])"
"$py" - "$tfdir/terraform.tfstate" "$REG" <<'PY' && good "T2 the state records the registry's ids; ports bound, floating IP on the master, tags, rules" || bad "T2 the registry after apply: $(cat "$REG")"
import json, sys
ids = {r["addr"]: r["id"] for r in json.load(open(sys.argv[1]))["resources"]}
reg = json.load(open(sys.argv[2]))
by = lambda kind, i: next(x for x in reg[kind] if x["id"] == i)
master, port = by("servers", ids["openstack_compute_instance_v2.master"]), by("ports", ids["openstack_networking_port_v2.master"])
assert master["name"] == "tf1-master" and master["_fake_nodes"]["node"] == "master", master
assert port["device_id"] == master["id"] and port["device_owner"] == "compute:nova" and port["name"] == "tf1-master", port
assert port["tags"] == ["ddl", "ddl-cluster=tf1"] and port["security_groups"] == [ids["openstack_networking_secgroup_v2.cluster"]]
fip = by("floatingips", ids["openstack_networking_floatingip_v2.master"])
assert fip["port_id"] == port["id"] and fip["description"] == "tf1 master" and fip["floating_ip_address"] == "192.0.2.10", fip
assert ids["openstack_networking_floatingip_associate_v2.master"] == fip["id"]
rif = by("ports", ids["openstack_networking_router_interface_v2.cluster[0]"])
assert rif["device_owner"] == "network:router_interface" and rif["device_id"] == ids["openstack_networking_router_v2.cluster[0]"]
assert ids["openstack_compute_keypair_v2.cluster"] == "tf1-key" and [k["keypair"]["name"] for k in reg["keypairs"]] == ["tf1-key"]
sg = by("security_groups", ids["openstack_networking_secgroup_v2.cluster"])
assert sg["name"] == "tf1-nodes" and len(sg["security_group_rules"]) == 5, sg
assert len(by("server_groups", ids["openstack_compute_servergroup_v2.cluster[0]"])["members"]) == 3
assert all(n["tags"] == ["ddl", "ddl-cluster=tf1"] for n in reg["networks"] + reg["subnets"] + reg["routers"])
PY
get "/network/v2.0/ports?tags=ddl-cluster%3Dtf1&device_owner=compute:nova"
expect "T2 the API lists the cluster's ports by tag" 200 "sorted(p['name'] for p in b['ports']) == ['tf1-master', 'tf1-worker-0', 'tf1-worker-1']"
worker=$("$py" -c 'import json, sys; print(next(r["id"] for r in json.load(open(sys.argv[1]))["resources"] if r["addr"] == "openstack_compute_instance_v2.worker[1]"))' "$tfdir/terraform.tfstate")
del "/compute/v2.1/servers/$worker"
expect "T3 a server Terraform made, deleted through the API: 204" 204 ""
nodes_call "T3 its node goes, the nodes folder the Terraform stand-in recorded" \
  "up --id tf1 --state-dir $work/nodes/tf1 --names master,worker1 --pubkey-file $work/nodes/tf1/pubkey.pub --bastion"
tf destroy -auto-approve -input=false -json && good "T4 destroy, with a server already gone behind Terraform's back" ||
  bad "T4 the Terraform stand-in's destroy failed"
nodes_call "T4 destroy takes the nodes down" "down --id tf1 --state-dir $work/nodes/tf1"
in_registry '[s["id"] for s in r["servers"]] == ["srv-c3", "srv-other"] and not any(r[k] for k in r if k != "servers")' &&
  good "T4 after destroy the registry holds nothing of tf1" || bad "T4 left after destroy: $(cat "$REG")"
tf plan -input=false -json -out=tfplan && tf apply -input=false -json tfplan && good "T5 the same cluster applied again" ||
  bad "T5 the second apply failed"
# Another state folder deploying a cluster of the same name while this one lives: Nova refuses the key pair.
cp -r "$tfdir" "$work/tf2" && rm -f "$work/tf2/terraform.tfstate"
tfdir="$work/tf2"
if tf plan -input=false -json -out=tfplan && ! tf apply -input=false -json tfplan >/dev/null 2>&1 &&
  grep -q "Key pair 'tf1-key' already exists" "$work/tf.out" && grep -q '"summary": "Error creating OpenStack keypair"' "$work/tf.out"; then
  good "T6 a second state folder, same cluster name: the key pair's 409 as the provider reports it"
else
  bad "T6 the duplicate key pair" "$(tail -n 3 "$work/tf.out")"
fi
in_registry '[k["keypair"]["name"] for k in r["keypairs"]] == ["tf1-key"] and len(r["servers"]) == 5' &&
  good "T6 the refused apply added nothing" || bad "T6 the refused apply changed the registry: $(cat "$REG")"
tfdir="$work/tf"
tf destroy -auto-approve -input=false -json || bad "T6 destroy"
in_registry 'not r["keypairs"] and len(r["servers"]) == 2' || bad "T6 left after the last destroy: $(cat "$REG")"

if grep -qF -e "$PW" -e "$TOKEN" "$REG"; then bad "the registry holds a secret or a token"; fi
[ "$failed" -eq 0 ] && echo "ok: $passed checks of the shared cloud (openstack_api.py and terraform)"
exit "$failed"
