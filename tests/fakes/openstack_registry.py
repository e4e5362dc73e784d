"""The shared cloud of the OpenStack stand-ins: the registry that tests/fakes/openstack_api.py serves and
the Terraform stand-in (tests/fakes/terraform_openstack.py) writes, the resources in the shapes the api-ref
shows, and what Nova and Neutron do to the others when one is deleted.

Follows (read in the RST those pages are built from: nova 00a030403f api-ref/source and doc/api_samples,
neutron-lib 6cd671a8 api-ref/source/v2):
  Nova      "Compute API" https://docs.openstack.org/api-ref/compute/ : "List Servers Detailed" (the 2.1
            response parameters and the servers-details-resp.json sample), "Show Keypair Details", "List
            Server Groups", "Delete Server" ("the ports attached to the server ... are deleted": this
            cloud's ports are all made through Neutron first, so they are unbound)
  Neutron   "Networking API v2.0" https://docs.openstack.org/api-ref/network/v2/ : "List networks/subnets/
            ports/routers/floating IPs/security groups" (the standard attributes), "Delete network" (its
            subnets and DHCP ports go with it), "Delete port" (its floating IPs are disassociated)

The registry: openstack_api.py --resources FILE (default $FAKE_OPENSTACK_RESOURCES; unset: none, and the
API stand-in serves no registry paths) is a registry the Terraform stand-in (tests/fakes/terraform) writes when
it creates and deletes the OpenStack module's resources, so what Terraform made can be listed and
deleted here as on a real cloud. It is JSON, read and written under flock(2) on FILE.lock:
  {"servers": [...], "keypairs": [{"keypair": {...}}], "server_groups": [...], "networks": [...],
   "subnets": [...], "routers": [...], "ports": [...], "floatingips": [...], "security_groups": [...]}
each entry in the shape the api-ref's response shows (security groups with their rules), plus private
keys starting with "_" the API never returns: a server's "_flavor_name" (its flavor, resolved against the
config's flavors when served) and "_fake_nodes" {"id", "state_dir", "node", "tool"}: the ddl-fake-nodes
cluster its node belongs to, the node's name there, and the tool that made it (else $DDL_FAKE_NODES is
used). A server's flavor, links and addresses (from the ports bound to it and their floating IPs) and a
floating IP's port_details are filled in when served. Only resources of the config's project are seen.
"""
import base64
import contextlib
import datetime
import fcntl
import hashlib
import ipaddress
import itertools
import json
import os
import re
import secrets
import subprocess
import uuid

from openstack_errors import Refusal

REGISTRY_KINDS = ("servers", "keypairs", "server_groups", "networks", "subnets", "routers", "ports",
                  "floatingips", "security_groups")
# Ports only the router/floating-IP APIs may delete (neutron l3_db router_device_owners); device_id names
# the router or floating IP.
ROUTER_PORT_OWNERS = ("network:router_interface", "network:ha_router_replicated_interface",
                      "network:router_interface_distributed", "network:router_gateway", "network:floatingip")
ROUTER_INTERFACE_OWNERS = ROUTER_PORT_OWNERS[:3]
# Ports Neutron deletes itself with their network or subnet (neutron common/_constants.py).
AUTO_DELETE_PORT_OWNERS = ("network:dhcp", "network:distributed", "network:floatingip_agent_gateway")
# OS-EXT-STS:power_state (nova compute/power_state.py): RUNNING 1, SHUTDOWN 4.
POWER_RUNNING, POWER_SHUTDOWN = 1, 4


@contextlib.contextmanager
def registry(path, write=False, kinds=None):
    """The registry at PATH as a dict of KINDS lists (default REGISTRY_KINDS), under flock(2) on PATH.lock
    (shared to read, exclusive to change, as both stand-ins change it). With write, the dict is saved
    (atomically) when the block ends without an exception. tests/fakes/aws_api.py keeps its region so too."""
    with open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if write else fcntl.LOCK_SH)
        try:
            try:
                with open(path) as f:
                    text = f.read()
            except FileNotFoundError:
                text = ""
            reg = json.loads(text) if text.strip() else {}
            for kind in kinds or REGISTRY_KINDS:
                reg.setdefault(kind, [])
            yield reg
            if write:
                with open(path + ".tmp", "w") as f:
                    json.dump(reg, f, indent=1)
                os.replace(path + ".tmp", path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def iso_now():
    """Nova's created/updated and Neutron's created_at/updated_at: ISO 8601 UTC to the second."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def find(reg, kind, ident):
    return next((r for r in reg[kind] if r.get("id") == ident), None)


def ssh_fingerprint(public_key):
    """Nova's key pair fingerprint: MD5 of the key blob, as colon-separated hex."""
    try:
        blob = base64.b64decode(public_key.split()[1])
    except (IndexError, ValueError):
        blob = public_key.encode()
    return ":".join("%02x" % b for b in hashlib.md5(blob).digest())


def neutron_common(project_id, name="", tags=(), description=""):
    """The standard attributes every Neutron resource here carries."""
    now = iso_now()
    return {"id": str(uuid.uuid4()), "name": name, "description": description, "tags": list(tags),
            "created_at": now, "updated_at": now, "revision_number": 1, "project_id": project_id,
            "tenant_id": project_id}


def new_network(project_id, name, tags):
    return dict(neutron_common(project_id, name, tags), **{
        "admin_state_up": True, "status": "ACTIVE", "shared": False, "router:external": False, "subnets": [],
        "mtu": 1500, "port_security_enabled": True, "availability_zone_hints": [], "availability_zones": ["nova"],
        "ipv4_address_scope": None, "ipv6_address_scope": None, "is_default": False})


def new_subnet(project_id, name, tags, network_id, cidr, dns_nameservers=()):
    net = ipaddress.ip_network(cidr, strict=False)
    hosts = list(itertools.islice(net.hosts(), 2)) or [net.network_address]
    last = max(net.broadcast_address - 1, hosts[-1]) if net.version == 4 else net[-1]
    return dict(neutron_common(project_id, name, tags), **{
        "network_id": network_id, "cidr": str(net), "ip_version": net.version, "gateway_ip": str(hosts[0]),
        "allocation_pools": [{"start": str(hosts[-1]), "end": str(last)}], "enable_dhcp": True,
        "dns_nameservers": list(dns_nameservers), "host_routes": [], "ipv6_address_mode": None,
        "ipv6_ra_mode": None, "subnetpool_id": None, "segment_id": None, "service_types": [],
        "dns_publish_fixed_ip": False})


def new_router(project_id, name, tags, external_network_id):
    return dict(neutron_common(project_id, name, tags), **{
        "admin_state_up": True, "status": "ACTIVE", "routes": [], "distributed": False, "ha": False,
        "flavor_id": None, "availability_zone_hints": [], "availability_zones": ["nova"],
        "external_gateway_info": {"network_id": external_network_id, "enable_snat": True, "external_fixed_ips": []}})


def new_port(project_id, name, tags, network_id, fixed_ips, security_groups, device_id="", device_owner=""):
    mac = "fa:16:3e:%02x:%02x:%02x" % tuple(secrets.token_bytes(3))
    return dict(neutron_common(project_id, name, tags), **{
        "network_id": network_id, "admin_state_up": True, "status": "ACTIVE" if device_id else "DOWN",
        "mac_address": mac, "fixed_ips": fixed_ips, "device_id": device_id, "device_owner": device_owner,
        "security_groups": list(security_groups), "allowed_address_pairs": [], "extra_dhcp_opts": [],
        "binding:vnic_type": "normal", "port_security_enabled": True, "ip_allocation": "immediate",
        "dns_name": "", "dns_assignment": [], "propagate_uplink_status": False})


def free_ip(reg, subnet):
    """The first address of SUBNET's allocation pools no port holds (Neutron picks one from the pools)."""
    used = {ip["ip_address"] for p in reg["ports"] for ip in p["fixed_ips"] if ip.get("subnet_id") == subnet["id"]}
    used.add(subnet["gateway_ip"])
    for pool in subnet["allocation_pools"]:
        a, end = ipaddress.ip_address(pool["start"]), ipaddress.ip_address(pool["end"])
        while a <= end:
            if str(a) not in used:
                return str(a)
            a += 1
    raise Refusal(409, "No more IP addresses available on network %s." % subnet["network_id"],
                  kind="IpAddressGenerationFailure")


def new_security_group(project_id, name, tags, description=""):
    return dict(neutron_common(project_id, name, tags, description), stateful=True, shared=False,
                security_group_rules=[])


def new_security_group_rule(project_id, group_id, direction, ethertype, protocol=None, port_range_min=None,
                            port_range_max=None, remote_ip_prefix=None, remote_group_id=None, description=""):
    return dict(neutron_common(project_id, description=description), **{
        "security_group_id": group_id, "direction": direction, "ethertype": ethertype, "protocol": protocol,
        "port_range_min": port_range_min, "port_range_max": port_range_max, "remote_ip_prefix": remote_ip_prefix,
        "remote_group_id": remote_group_id, "remote_address_group_id": None, "belongs_to_default_sg": False,
        "normalized_cidr": remote_ip_prefix})


def new_floatingip(project_id, tags, description, floating_network_id, address):
    fip = neutron_common(project_id, tags=tags, description=description)
    del fip["name"]  # floating IPs have no name
    fip.update({"floating_ip_address": address, "floating_network_id": floating_network_id, "router_id": None,
                "port_id": None, "fixed_ip_address": None, "status": "DOWN", "dns_domain": "", "dns_name": "",
                "port_forwardings": [], "qos_policy_id": None, "qos_network_policy_id": None})
    return fip


def new_keypair(reg, name, public_key, user_id):
    """{"keypair": {...}} as Nova's "Show Keypair Details" has it (id: Nova's integer row id)."""
    ident = 1 + max([k["keypair"]["id"] for k in reg["keypairs"]] or [0])
    return {"keypair": {"name": name, "public_key": public_key.strip() + "\n",
                        "fingerprint": ssh_fingerprint(public_key), "user_id": user_id, "created_at": iso_now(),
                        "updated_at": None, "deleted": False, "deleted_at": None, "id": ident}}


def new_server_group(project_id, user_id, name, policies):
    return {"id": str(uuid.uuid4()), "name": name, "policies": list(policies), "members": [], "metadata": {},
            "project_id": project_id, "user_id": user_id}


def new_server(project_id, user_id, name, flavor_name, key_name, metadata, security_group_names, fake_nodes=None):
    """A server as "List Servers Detailed" (2.1) shows a non-admin, booted from a volume (image ""). flavor,
    links and addresses are filled in when served (the stand-in's URL, its flavors, the bound ports)."""
    now = iso_now()
    server = {"id": str(uuid.uuid4()), "name": name, "status": "ACTIVE", "created": now, "updated": now,
              "tenant_id": project_id, "user_id": user_id, "metadata": dict(metadata), "key_name": key_name,
              "image": "", "flavor": {}, "addresses": {}, "links": [], "accessIPv4": "", "accessIPv6": "",
              "hostId": hashlib.sha224((project_id + "host-1").encode()).hexdigest(), "progress": 0,
              "config_drive": "", "OS-DCF:diskConfig": "MANUAL", "OS-EXT-AZ:availability_zone": "nova",
              "OS-EXT-STS:power_state": POWER_RUNNING, "OS-EXT-STS:task_state": None, "OS-EXT-STS:vm_state": "active",
              "OS-SRV-USG:launched_at": now.replace("Z", ".000000"), "OS-SRV-USG:terminated_at": None,
              "os-extended-volumes:volumes_attached": [{"id": str(uuid.uuid4())}],
              "security_groups": [{"name": n} for n in security_group_names], "_flavor_name": flavor_name}
    if fake_nodes:
        server["_fake_nodes"] = fake_nodes
    return server


def remove_server(reg, server_id):
    """Nova deletes a server: the ports it was given are unbound (Nova deletes only ports it created
    itself, and this cloud's ports are all made through Neutron first), its server groups forget it."""
    reg["servers"] = [s for s in reg["servers"] if s["id"] != server_id]
    for p in reg["ports"]:
        if p["device_id"] == server_id and p["device_owner"].startswith("compute:"):
            p.update(device_id="", device_owner="", status="DOWN", updated_at=iso_now())
    for g in reg["server_groups"]:
        g["members"] = [m for m in g["members"] if m != server_id]


def remove_port(reg, port_id):
    """Neutron deletes a port: its addresses go back to the pools, floating IPs on it are disassociated."""
    reg["ports"] = [p for p in reg["ports"] if p["id"] != port_id]
    for f in reg["floatingips"]:
        if f["port_id"] == port_id:
            f.update(port_id=None, fixed_ip_address=None, router_id=None, status="DOWN", updated_at=iso_now())


def remove_subnet(reg, subnet_id):
    sub = find(reg, "subnets", subnet_id)
    reg["subnets"] = [s for s in reg["subnets"] if s["id"] != subnet_id]
    net = find(reg, "networks", sub["network_id"]) if sub else None
    if net:
        net["subnets"] = [s for s in net["subnets"] if s != subnet_id]


def remove_network(reg, network_id):
    """Neutron deletes a network with its subnets and its own (DHCP) ports."""
    for s in [s["id"] for s in reg["subnets"] if s["network_id"] == network_id]:
        remove_subnet(reg, s)
    reg["ports"] = [p for p in reg["ports"] if p["network_id"] != network_id]
    reg["networks"] = [n for n in reg["networks"] if n["id"] != network_id]


def public(resource):
    """A registry entry as the API shows it: without the private `_` keys."""
    return {k: v for k, v in resource.items() if not k.startswith("_")}



def run_fake_nodes(nodes, args, why):
    """ddl-fake-nodes ARGS with the tool that made NODES (recorded), else $DDL_FAKE_NODES. None, or why it
    failed (WHY: what cannot be done without the tool)."""
    tool = nodes.get("tool") or os.environ.get("DDL_FAKE_NODES")
    if not tool:
        return "DDL_FAKE_NODES is not set: the stand-in cannot " + why
    r = subprocess.run([tool] + args, capture_output=True, text=True)
    return None if r.returncode == 0 else "%s %s failed: %s" % (tool, args[0], (r.stderr or r.stdout).strip())


def node_order(names):
    """The nodes as the Terraform stand-in brings them up: the master (the bastion) first, then the workers."""
    return sorted(names, key=lambda n: (n != "master", int(re.sub(r"\D", "", n) or 0)))


def fake_nodes_without(nodes, rest):
    """Takes NODES["node"] out of its ddl-fake-nodes cluster: `up` with the REST of the node names, or `down`
    when none is left. None, or why it failed."""
    d = nodes["state_dir"]
    if rest:
        args = ["up", "--id", nodes["id"], "--state-dir", d, "--names", ",".join(node_order(rest)),
                "--pubkey-file", os.path.join(d, "pubkey.pub"), "--bastion"]
    else:
        args = ["down", "--id", nodes["id"], "--state-dir", d]
    return run_fake_nodes(nodes, args, "remove the instance's node")


def fake_nodes_power(nodes, names, on):
    """Powers NODES["node"] off (`ddl-fake-nodes stop`: its processes end, its links go down, its files stay)
    or boots it again (`up` with every node of its cluster, NAMES, and --start it: links up, sshd with the
    same host key; the cluster's other stopped nodes stay off). None, or why it failed."""
    d = nodes["state_dir"]
    if on:
        args = ["up", "--id", nodes["id"], "--state-dir", d, "--names", ",".join(node_order(names)),
                "--pubkey-file", os.path.join(d, "pubkey.pub"), "--bastion", "--start", nodes["node"]]
    else:
        args = ["stop", "--id", nodes["id"], "--state-dir", d, "--names", nodes["node"]]
    return run_fake_nodes(nodes, args, "power the instance's node")


def cluster_node_names(reg, server):
    """The ddl-fake-nodes names of every server in SERVER's node cluster (itself included)."""
    nodes = server.get("_fake_nodes") or {}
    return [o["_fake_nodes"]["node"] for o in reg["servers"] if o.get("_fake_nodes", {}).get("id") == nodes.get("id")
            and o["_fake_nodes"].get("state_dir") == nodes.get("state_dir")]


def power_server(reg, server, action):
    """Nova's os-stop / os-start on SERVER (a registry entry): the state check of nova compute/api.py
    (stop: vm_state active or error; start: vm_state stopped; else 409 "Cannot 'ACTION' instance ID while it
    is in vm_state STATE", from api/openstack/common.py raise_http_conflict_for_instance_invalid_state),
    then the instance's node powered off or booted, and the state Nova ends in: SHUTOFF (vm_state stopped,
    power_state SHUTDOWN) or ACTIVE (vm_state active, power_state RUNNING). The stand-in does it before it
    answers 202, so no task_state is ever seen."""
    vm_state = server.get("OS-EXT-STS:vm_state", "active")
    allowed = ("active", "error") if action == "stop" else ("stopped",)
    if vm_state not in allowed:
        raise Refusal(409, "Cannot '%s' instance %s while it is in vm_state %s" % (action, server["id"], vm_state))
    nodes = server.get("_fake_nodes")
    if nodes:
        error = fake_nodes_power(nodes, cluster_node_names(reg, server), action == "start")
        if error:
            raise Refusal(500, error[-255:])
    stopped = action == "stop"
    server.update(status="SHUTOFF" if stopped else "ACTIVE", updated=iso_now())
    server["OS-EXT-STS:vm_state"] = "stopped" if stopped else "active"
    server["OS-EXT-STS:power_state"] = POWER_SHUTDOWN if stopped else POWER_RUNNING
