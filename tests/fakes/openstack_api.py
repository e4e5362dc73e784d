#!/usr/bin/env python3
"""HTTPS stand-in for the OpenStack APIs ddl's pre-flight and gc use (python3 stdlib only).

  openstack_api.py --cert server.pem --key server.key --config cloud.json --port-file PORT [--resources FILE]

Documents followed (the api-ref pages, built from each project's api-ref RST; the review with the
row-by-row comparison is docs/research/openstack-standin-review.md):
  Keystone  "Identity API v3" https://docs.openstack.org/api-ref/identity/v3/
            sections "Password authentication with scoped authorization", "... with unscoped
            authorization", "Authenticating with an Application Credential", "Authentication and
            token management" (errors)
  Nova      "Compute API" https://docs.openstack.org/api-ref/compute/ : "List Flavors With Details",
            "Show Rate And Absolute Limits"; "Faults" https://docs.openstack.org/api-guide/compute/faults.html ;
            "Microversions" https://docs.openstack.org/api-guide/compute/microversions.html
  Glance    "Image Service API v2" https://docs.openstack.org/api-ref/image/v2/ : "List images"
            (paging with limit/marker, `first`/`next`, the `in:` operator)
  Neutron   "Networking API v2.0" https://docs.openstack.org/api-ref/network/v2/ : "List networks",
            "Filtering and Column Selection", "Show quota details for a tenant", "Faults"
  Cinder    "Block Storage API v3" https://docs.openstack.org/api-ref/block-storage/v3/ : "Show absolute
            limits for project"
With a registry of the shared cloud (--resources, below), also (read in the RST those pages are built
from: nova 00a030403f api-ref/source and doc/api_samples, neutron-lib 6cd671a8 api-ref/source/v2, neutron
2131d26f73 doc/source/admin/ops-resource-tags.rst):
  Nova      "Compute API" https://docs.openstack.org/api-ref/compute/ : "List Servers Detailed"
            (#list-servers-detailed: limit, marker, servers_links, the name filter; fields per the 2.1
            response parameters and the servers-details-resp.json sample), "List Servers" (#list-servers),
            "Show Server Details" (#show-server-details), "Delete Server" (#delete-server: 204; "the ports
            attached to the server, which Nova created ... are deleted"; the server leaves the list),
            "List Keypairs" / "Show Keypair Details" / "Delete Keypair" (#list-keypairs, #show-keypair-details,
            #delete-keypair: 202 up to microversion 2.1, 204 from 2.2), "List Server Groups" / "Show Server
            Group Details" / "Delete Server Group" (#list-server-groups, #delete-server-group: 204)
  Neutron   "Networking API v2.0" https://docs.openstack.org/api-ref/network/v2/ : "List networks", "Show
            network details", "Delete network" (#delete-network, 409 listed), "List subnets", "Delete subnet"
            (#delete-subnet: "fails if subnet IP addresses are still allocated"; the api-ref lists no 409,
            Neutron answers 409 SubnetInUse), "List ports", "Delete port" (#delete-port: no 409 listed;
            Neutron refuses router ports with 409 ServicePortInUse), "List routers", "Delete router"
            (#delete-router: "fails if the router has attached interfaces", 409), "Remove interface from
            router" (#remove-interface-from-router: subnet_id or port_id, 200 with the interface's info,
            "deletes the port itself"), "List floating IPs", "Delete floating IP" (#delete-floating-ip),
            "List security groups", "Delete security group" (#delete-security-group: "If a port is
            associated with the security group 409 (Conflict) is returned"), each list's tags/tags-any/
            not-tags/not-tags-any parameters ("A list of tags ... separated by comma", parameters tags-query
            etc.), and the Neutron admin guide "Resource tags", section "Filtering with tags"
            https://docs.openstack.org/neutron/latest/admin/ops-resource-tags.html
  The api-ref is silent on the 409 bodies; their NeutronError types and messages are read from the code
  (neutron-lib 6cd671a8 exceptions/__init__.py and exceptions/l3.py, neutron 2131d26f73 db/db_base_plugin_v2.py,
  db/l3_db.py, db/securitygroups_db.py, extensions/securitygroup.py, api/api_common.py) and Nova's 404
  messages from nova 00a030403f (exception.py, api/openstack/compute/servers.py, keypairs.py, server_groups.py):
    DELETE network with ports other than Neutron's own (dhcp)  409 NetworkInUse "Unable to complete operation on
        network N. There are one or more ports still in use on the network, id for these ports is: P1,P2."
        (its subnets and DHCP ports go with it otherwise)
    DELETE subnet with a router interface or a port's address on it  409 SubnetInUse "Unable to complete
        operation on subnet S: One or more ports have an IP allocation from this subnet."
    DELETE router with interfaces  409 RouterInUse "Router R has ports still attached: P1, P2"
    DELETE port owned by a router (network:router_interface ...) or floating IP that still exists  409
        ServicePortInUse "Port P cannot be deleted directly via the port API: has device owner
        network:router_interface." (a port a server still uses may be deleted: Neutron detaches it and
        disassociates its floating IPs)
    DELETE security group a port uses  409 SecurityGroupInUse "Security Group G in use."
    remove_router_interface: 400 BadRequest "Bad router request: Either subnet_id or port_id must be
        specified.", 404 RouterInterfaceNotFound / RouterInterfaceNotFoundForSubnet / SubnetNotFound, 400
        SubnetMismatchForPort, 409 RouterInterfaceInUseByFloatingIP while a floating IP reaches a port on
        the subnet through the router
    404s: NetworkNotFound, SubnetNotFound, PortNotFound, RouterNotFound, FloatingIPNotFound,
        SecurityGroupNotFound (Neutron); itemNotFound "Instance X could not be found." (show), "Instance
        could not be found" (delete), "Keypair K not found for user U", "Instance group G could not be
        found." (Nova)

Where the api-ref is thin, the behaviour below was read from the services' server code (marked
"(code)" in the review) and is only as exact as that reading:
  - Keystone's 400 messages ("Expecting to find X in Y. The server could not comply ..."), the generic
    401 body that hides why (no access to the project, unknown domain), the application-credential
    scope refusal and its "identity": {} member, the `WWW-Authenticate: Keystone uri=...` header
    (keystone exception.py, auth/core.py, auth/plugins/core.py, server/flask/application.py);
  - the 401 keystonemiddleware sends for Nova, Neutron and Cinder (same body and header), and Glance's
    own webob 401 (Glance runs the middleware with delay_auth_decision) (keystonemiddleware auth_token);
  - Nova's and Cinder's fault names per status (nova/cinder api/openstack/wsgi.py), Cinder's 400
    "Malformed request url" for another project's URL, Nova's and Glance's limit/marker messages;
  - NeutronError bodies, AdminRequired (403) for another project's quota, InvalidInput for a value that
    is not a boolean (oslo strutils' strict strings) (neutron api_common, quotasv2_detail, neutron-lib).
Not modelled (the stand-in says so rather than guess): Nova's minRam/minDisk/is_public/sort filters and
microversions other than 2.1 (no version header is read); Glance sorting (images come in config order,
not created_at desc) and filters other than name; Neutron filters other than name and router:external
(others are ignored, not refused as filter validation would) and its paging; Cinder's other resources.
With the registry: Nova's server filters other than name, sorting other than the default, locked
servers (409) and the asynchronous delete (a server goes, or fails into ERROR, before the 204 is sent);
key pairs are listed for every user; the usage in limits and quotas stays what the config says; Neutron
list filters on attributes that are lists or objects, paging, sorting and `fields`; the UUID check of
remove_router_interface's ids; Cinder volumes (the boot volumes go with their servers).

Serves:
  POST /identity/v3/auth/tokens            Keystone v3: password (scoped, unscoped, or to the user's
                                           default project) or application_credential (by id, or by
                                           name + user); 201 with X-Subject-Token; ?nocatalog
  GET  /compute/v2.1/flavors/detail        Nova {"flavors": [...], "flavors_links": [next]}; limit, marker
  GET  /compute/v2.1/limits                Nova {"limits": {"rate": [], "absolute": {...}}}
  GET  /image/v2/images?name=&limit=&marker=   Glance {"images", "first", "next", "schema"}
  GET  /network/v2.0/networks?name=&router:external=   Neutron {"networks": [...]}
  GET  /network/v2.0/quotas/PID/details.json           Neutron {"quota": {resource: {limit, used, reserved}}}
  GET  /volume/v3/PID/limits               Cinder {"limits": {...}} (only when volume_limits is set)
 with a registry (otherwise these answer 404 as any unknown path):
  GET  /compute/v2.1/servers[/detail]?limit=&marker=&name=   Nova {"servers", "servers_links"}, newest first
  GET|DELETE /compute/v2.1/servers/ID      Nova {"server"} | 204: the server and its node go, its ports
                                           are unbound (device_id and device_owner "")
  GET  /compute/v2.1/os-keypairs[/NAME], DELETE .../NAME (202)   GET /compute/v2.1/os-server-groups[/ID],
                                           DELETE .../ID (204)
  GET  /network/v2.0/{networks,subnets,ports,routers,floatingips,security-groups}[/ID]   Neutron lists (with
                                           the attribute and tag filters) and shows; networks also lists
                                           the config's networks
  DELETE /network/v2.0/{...}/ID            204, or Neutron's 409 refusals below
  PUT  /network/v2.0/routers/ID/remove_router_interface   {"subnet_id"} or {"port_id"}: 200, the port goes
Errors carry each service's own body: Keystone {"error": {code, title, message}}; Nova and Cinder
{faultName: {code, message}}; Neutron {"NeutronError": {type, message, detail}}; Glance
{"message", "code": "400 Bad Request", "title"}.

The config file is read again for every request, so a test can change the cloud between calls:
  {"users": {"alice": "pw"},                      users by name (id "u-<name>"), all in domain Default
   "app_credentials": {"id": "secret"},
   "app_credential_names": {"alice": {"name": "id"}},   the (user, name) -> id lookup
   "project": {"id": "p1", "name": "ml"},         in domain Default (id "default")
   "default_project": "p1",                       optional: the users' default_project_id
   "flavors": [{"name": "m1", "vcpus": 2, "ram": 4096, "disk": 20}], "osapi_max_limit": 1000,
   "images": ["Ubuntu 22.04"], "image_limit_default": 25, "image_api_limit_max": 1000,
   "networks": [{"name": "public", "router:external": true}], "compute_limits": {...},
   "floatingip": {"limit": 5, "used": 0, "reserved": 0}, "volume_limits": {...} or null,
   "fail": {"PATH" or "METHOD PATH": STATUS}, "delay": {"PATH" or "METHOD PATH": SECONDS}}
Every request is appended to <config>.requests (method, path, header names) for tests.

The shared cloud. --resources FILE (default $FAKE_OPENSTACK_RESOURCES; unset: none, and the stand-in
serves only the paths above it) is a registry the Terraform stand-in (tests/fakes/terraform) writes when
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
import argparse
import base64
import contextlib
import csv
import datetime
import fcntl
import hashlib
import http
import http.server
import ipaddress
import itertools
import json
import os
import re
import secrets
import ssl
import subprocess
import threading
import time
import urllib.parse
import uuid

TOKENS = {}  # token -> user id
LOCK = threading.Lock()
NODES_LOCK = threading.Lock()  # one ddl-fake-nodes call at a time (a server delete re-ups its cluster)

DEFAULT_DOMAIN = {"id": "default", "name": "Default"}
AUTH_REQUIRED = "The request you have made requires authentication."
CLIENT_AT_FAULT = (" The server could not comply with the request since it is either malformed or otherwise"
                   " incorrect. The client is assumed to be in error.")
NOT_FOUND = "The resource could not be found."
# webob's text for HTTPUnauthorized, which Glance sends as {"message", "code", "title"}.
GLANCE_401 = ("This server could not verify that you are authorized to access the document you requested."
              " Either you supplied the wrong credentials (e.g., bad password), or your browser does not"
              " understand how to supply the credentials required.")
# Nova's and Cinder's fault names by status; any other status is a computeFault.
FAULT_NAMES = {400: "badRequest", 401: "unauthorized", 403: "forbidden", 404: "itemNotFound",
               405: "badMethod", 409: "conflictingRequest", 413: "overLimit", 415: "badMediaType",
               429: "overLimit", 501: "notImplemented", 503: "serviceUnavailable"}
# oslo strutils' strict boolean strings, which neutron-lib's convert_to_boolean uses.
TRUE_STRINGS = ("1", "t", "true", "on", "y", "yes")
FALSE_STRINGS = ("0", "f", "false", "off", "n", "no")
NEUTRON_QUOTA_DEFAULTS = {"network": 100, "subnet": 100, "subnetpool": -1, "port": 500, "router": 10,
                          "floatingip": 50, "security_group": 10, "security_group_rule": 100,
                          "rbac_policy": 10}


class Refusal(Exception):
    """An error answer: STATUS with MESSAGE, in the body shape of the service that refuses."""

    def __init__(self, status, message, kind=None, extra=None):
        super().__init__(message)
        self.status, self.message, self.kind, self.extra = status, message, kind, extra or {}


def phrase(status):
    return http.HTTPStatus(status).phrase


def service_of(path):
    """The service a path belongs to, from its first segment (identity, compute, image, network, volume)."""
    return path.strip("/").split("/", 1)[0]


def error_body(service, status, message, kind=None, extra=None):
    if service == "identity":
        return {"error": dict({"code": status, "title": phrase(status), "message": message}, **(extra or {}))}
    if service in ("compute", "volume"):
        return {FAULT_NAMES.get(status, "computeFault"): {"code": status, "message": message}}
    if service == "network":
        kind = kind or "HTTP" + phrase(status).replace(" ", "").replace("-", "")
        return {"NeutronError": {"type": kind, "message": message, "detail": ""}}
    # Glance (webob's JSON error), and anything outside the five services.
    return {"message": message, "code": "%d %s" % (status, phrase(status)), "title": phrase(status)}


def keystone_missing(attribute, target):
    """Keystone's ValidationError: 400 'Expecting to find ATTRIBUTE in TARGET. ...' (code: exception.py)."""
    return Refusal(400, "Expecting to find %s in %s." % (attribute, target) + CLIENT_AT_FAULT)


def unauthorized():
    """Keystone's 401 in production: the reason (unknown user, wrong secret, no role, unknown domain) is
    hidden unless insecure_debug is on (code: SecurityError)."""
    return Refusal(401, AUTH_REQUIRED)


def paging_int(query, name, default):
    """limit as Nova and Glance read it: an integer >= 0, else 400 '<name> param must be ...' (code)."""
    if name not in query:
        return default
    try:
        value = int(query[name][0])
    except ValueError:
        raise Refusal(400, "%s param must be an integer" % name)
    if value < 0:
        raise Refusal(400, "%s param must be positive" % name)
    return value


def after_marker(items, query, not_found):
    """The items after the one whose id is the `marker` query value; NOT_FOUND(marker) when it is unknown."""
    if "marker" not in query:
        return items
    marker = query["marker"][0]
    ids = [i["id"] for i in items]
    if marker not in ids:
        raise Refusal(400, not_found % marker)
    return items[ids.index(marker) + 1:]


def neutron_bool(value):
    v = value.strip().lower()
    if v in TRUE_STRINGS:
        return True
    if v in FALSE_STRINGS:
        return False
    raise Refusal(400, "Invalid input for operation: '%s' cannot be converted to boolean." % value,
                  kind="InvalidInput")


def timestamp(offset_s=0):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=offset_s)
    return t.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


# --- the shared cloud: the registry both stand-ins read and change -------------------------------------

REGISTRY_KINDS = ("servers", "keypairs", "server_groups", "networks", "subnets", "routers", "ports",
                  "floatingips", "security_groups")
# Ports only the router/floating-IP APIs may delete (neutron l3_db router_device_owners); device_id names
# the router or floating IP.
ROUTER_PORT_OWNERS = ("network:router_interface", "network:ha_router_replicated_interface",
                      "network:router_interface_distributed", "network:router_gateway", "network:floatingip")
ROUTER_INTERFACE_OWNERS = ROUTER_PORT_OWNERS[:3]
# Ports Neutron deletes itself with their network or subnet (neutron common/_constants.py).
AUTO_DELETE_PORT_OWNERS = ("network:dhcp", "network:distributed", "network:floatingip_agent_gateway")


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
              "OS-EXT-STS:power_state": 1, "OS-EXT-STS:task_state": None, "OS-EXT-STS:vm_state": "active",
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


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def cfg(self):
        with open(self.server.config_path) as f:
            return json.load(f)

    def reply(self, status, body, headers=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Openstack-Request-Id", "req-" + str(uuid.uuid4()))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def service_reply(self, service, status, body, headers=None):
        """A reply from the service itself: Nova and Cinder name their (minimum) microversion."""
        headers = dict(headers or {})
        if service == "compute":
            headers.update({"X-OpenStack-Nova-API-Version": "2.1", "OpenStack-API-Version": "compute 2.1",
                            "Vary": "OpenStack-API-Version, X-OpenStack-Nova-API-Version"})
        elif service == "volume":
            headers.update({"OpenStack-API-Version": "volume 3.0", "Vary": "OpenStack-API-Version"})
        self.reply(status, body, headers)

    def refuse(self, service, r):
        if r.status == 401 and service == "identity":
            r.extra.setdefault("headers", {})["WWW-Authenticate"] = self.www_authenticate()
        headers = r.extra.pop("headers", {})
        self.service_reply(service, r.status, error_body(service, r.status, r.message, r.kind, r.extra), headers)

    def www_authenticate(self):
        return 'Keystone uri="%s/identity"' % self.base()

    def record(self, cfg):
        with LOCK, open(self.server.config_path + ".requests", "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": sorted(self.headers.keys())}) + "\n")

    def injected(self, cfg, path):
        """cfg "delay"/"fail" keyed by PATH (any method) or by "METHOD PATH"."""
        for key in (self.command + " " + path, path):
            if key in cfg.get("delay", {}):
                time.sleep(cfg["delay"][key])
                break
        for key in (self.command + " " + path, path):
            if key in cfg.get("fail", {}):
                self.refuse(service_of(path), Refusal(cfg["fail"][key], "injected failure"))
                return True
        return False

    def base(self):
        return "https://127.0.0.1:%d" % self.server.server_port

    def catalog(self, cfg, pid):
        def svc(type_, name, url):
            return {"type": type_, "name": name, "id": name,
                    "endpoints": [{"interface": i, "region": cfg.get("region", "RegionOne"),
                                   "region_id": cfg.get("region", "RegionOne"), "url": url, "id": name + i}
                                  for i in ("public", "internal", "admin")]}
        b = self.base()
        cat = [svc("identity", "keystone", b + "/identity/v3"), svc("compute", "nova", b + "/compute/v2.1"),
               svc("image", "glance", b + "/image"), svc("network", "neutron", b + "/network")]
        if cfg.get("volume_limits") is not None:
            cat.append(svc("volumev3", "cinderv3", b + "/volume/v3/" + pid))
        return cat

    # --- Keystone -------------------------------------------------------------------------------------

    @staticmethod
    def domain(ref, target):
        """The domain a {"id"} or {"name"} reference names; 401 when it is not the one domain here."""
        if not isinstance(ref, dict) or ("id" not in ref and "name" not in ref):
            raise keystone_missing("id or name", target)
        if ref.get("id", DEFAULT_DOMAIN["id"]) != DEFAULT_DOMAIN["id"] or \
                ref.get("name", DEFAULT_DOMAIN["name"]) != DEFAULT_DOMAIN["name"]:
            raise unauthorized()  # DomainNotFound becomes a plain 401 (code: auth/core.py)
        return DEFAULT_DOMAIN

    def user(self, cfg, ref):
        """The user name a user reference names: by id, or by name with its domain (required)."""
        if not isinstance(ref, dict):
            raise keystone_missing("id or name", "user")
        users = cfg.get("users", {})
        if "id" in ref:
            name = ref["id"][2:] if str(ref["id"]).startswith("u-") else None
        elif "name" in ref:
            if "domain" not in ref:
                raise keystone_missing("domain", "user")
            self.domain(ref["domain"], "domain")
            name = ref["name"]
        else:
            raise keystone_missing("id or name", "user")
        if name not in users:
            raise unauthorized()
        return name

    def scoped_project(self, cfg, req):
        """The project the request scopes to; None for an unscoped token."""
        project = cfg["project"]
        if "scope" not in req:
            # No scope: the user's default project when it has one, else an unscoped token.
            return project if cfg.get("default_project") == project["id"] else None
        scope = req["scope"]
        kinds = [k for k in ("project", "domain", "OS-TRUST:trust", "system", "unscoped")
                 if isinstance(scope, dict) and k in scope]
        if len(kinds) != 1:
            raise keystone_missing("project, domain, OS-TRUST:trust or unscoped", "scope")
        if kinds[0] == "unscoped":
            return None
        if kinds[0] != "project":
            raise unauthorized()  # the users here hold roles on their project only
        ref = scope["project"]
        if not isinstance(ref, dict):
            raise keystone_missing("id or name", "project")
        if "id" in ref:
            ok = ref["id"] == project["id"]
        elif "name" in ref:
            if "domain" not in ref:
                raise keystone_missing("domain", "project")
            self.domain(ref["domain"], "domain")
            ok = ref["name"] == project["name"]
        else:
            raise keystone_missing("id or name", "project")
        if not ok:
            raise unauthorized()  # "User has no access to project" only with insecure_debug
        return project

    def app_credential(self, cfg, payload):
        """(id, name, owner) of the application credential a request names; the secret must match."""
        names = cfg.get("app_credential_names", {})
        if "id" in payload:
            cred_id = payload["id"]
            owner, name = next(((u, n) for u, m in names.items() for n, i in m.items() if i == cred_id),
                               (next(iter(cfg.get("users", {})), "alice"), cred_id))
        elif "name" in payload:
            if "user" not in payload:
                raise keystone_missing("user", "application_credential")
            owner, name = self.user(cfg, payload["user"]), payload["name"]
            cred_id = names.get(owner, {}).get(name)
        else:
            raise keystone_missing("id or name", "application_credential")
        if cred_id is None or cfg.get("app_credentials", {}).get(cred_id) != payload.get("secret"):
            raise unauthorized()
        return cred_id, name, owner

    def issue_token(self, cfg, body, query):
        try:
            req = json.loads(body)["auth"]
            ident = req["identity"]
            if not isinstance(req, dict) or not isinstance(ident, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise keystone_missing("auth", "request body")
        methods = ident.get("methods")
        if not isinstance(methods, list) or not methods:
            raise Refusal(400, "Invalid input for field 'identity': 'methods' is a required property")
        if methods not in (["password"], ["application_credential"]):
            raise unauthorized()  # an unsupported method (or a pair ddl never sends)
        method = methods[0]
        payload = ident.get(method)
        if not isinstance(payload, dict):
            raise keystone_missing(method, "identity")
        app_cred = None
        if method == "password":
            if "user" not in payload:
                raise keystone_missing("user", "password")
            name = self.user(cfg, payload["user"])
            if cfg["users"][name] != payload["user"].get("password"):
                raise unauthorized()
            project = self.scoped_project(cfg, req)
        else:
            # Checked before the secret (code: auth/core.py); 401 with the reason and an "identity" member.
            if "scope" in req:
                raise Refusal(401, "Error authenticating with application credential: Application "
                                   "credentials cannot request a scope.", extra={"identity": {}})
            cred_id, cred_name, name = self.app_credential(cfg, payload)
            app_cred = {"id": cred_id, "name": cred_name, "restricted": True}
            project = cfg["project"]
        audit = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")[:22]
        token = {"methods": methods, "issued_at": timestamp(), "expires_at": timestamp(3600),
                 "audit_ids": [audit],
                 "user": {"id": "u-" + name, "name": name, "domain": DEFAULT_DOMAIN, "password_expires_at": None}}
        if project is not None:
            token.update({"project": {"id": project["id"], "name": project["name"], "domain": DEFAULT_DOMAIN},
                          "is_domain": False,
                          "roles": [{"id": "r-member", "name": "member"}, {"id": "r-reader", "name": "reader"}]})
            if "nocatalog" not in query:
                token["catalog"] = self.catalog(cfg, project["id"])
        if app_cred:
            token["application_credential"] = app_cred
        return token

    def do_POST(self):
        cfg = self.cfg()
        self.record(cfg)
        url = urllib.parse.urlparse(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.injected(cfg, path):
            return
        service = service_of(path)
        if path != "/identity/v3/auth/tokens":
            return self.refuse(service, Refusal(404, NOT_FOUND))
        try:
            token = self.issue_token(cfg, body, query)
        except Refusal as r:
            return self.refuse(service, r)
        secret = secrets.token_hex(16)
        with LOCK:
            TOKENS[secret] = token["user"]["id"]
        self.reply(201, {"token": token}, {"X-Subject-Token": secret})

    # --- Nova, Glance, Neutron, Cinder -------------------------------------------------------------------

    def flavors(self, cfg, query):
        detail = []
        for i, f in enumerate(cfg.get("flavors", [])):
            fid = f.get("id", "f%d" % i)
            detail.append(dict({"id": fid, "disk": 0, "swap": "", "OS-FLV-EXT-DATA:ephemeral": 0,
                                "OS-FLV-DISABLED:disabled": False, "os-flavor-access:is_public": True,
                                "rxtx_factor": 1.0,
                                "links": [{"rel": "self", "href": self.base() + "/compute/v2.1/flavors/" + fid},
                                          {"rel": "bookmark", "href": self.base() + "/compute/flavors/" + fid}]},
                               **f))
        max_limit = cfg.get("osapi_max_limit", 1000)
        limit = min(max_limit, paging_int(query, "limit", max_limit))
        page = after_marker(detail, query, "marker [%s] not found")[:limit]
        out = {"flavors": page}
        if limit and len(page) == limit:
            params = {k: v[0] for k, v in query.items()}
            params["marker"] = page[-1]["id"]
            out["flavors_links"] = [{"rel": "next", "href": self.base() + "/compute/v2.1/flavors/detail?" +
                                     urllib.parse.urlencode(params)}]
        return out

    def images(self, cfg, query):
        names = cfg.get("images", [])
        images = [{"id": "i%d" % i, "name": n, "status": "active", "visibility": "public", "protected": False,
                   "tags": [], "disk_format": "qcow2", "container_format": "bare", "min_disk": 0, "min_ram": 0,
                   "owner": cfg["project"]["id"], "self": "/v2/images/i%d" % i, "file": "/v2/images/i%d/file" % i,
                   "schema": "/v2/schemas/image"} for i, n in enumerate(names)]
        limit = min(paging_int(query, "limit", cfg.get("image_limit_default", 25)),
                    cfg.get("image_api_limit_max", 1000))
        if "name" in query:
            wanted = query["name"][0]
            wanted = next(csv.reader([wanted[3:]])) if wanted.startswith("in:") else [wanted]
            images = [im for im in images if im["name"] in wanted]
        page = after_marker(images, query, "Invalid marker. Image %s could not be found.")[:limit]
        params = [(k, v) for k, vs in query.items() if k != "marker" for v in vs]
        out = {"images": page, "schema": "/v2/schemas/images",
               "first": "/v2/images" + ("?" + urllib.parse.urlencode(params) if params else "")}
        if page and len(page) == limit:
            out["next"] = "/v2/images?" + urllib.parse.urlencode(params + [("marker", page[-1]["id"])])
        return out

    def networks(self, cfg, query):
        nets = [dict({"id": "n-" + n["name"], "status": "ACTIVE", "admin_state_up": True, "shared": False,
                      "router:external": False, "subnets": [], "mtu": 1500, "project_id": cfg["project"]["id"],
                      "tenant_id": cfg["project"]["id"]}, **n) for n in cfg.get("networks", [])]
        # AND across fields, OR across the values of one field.
        if "name" in query:
            nets = [n for n in nets if n["name"] in query["name"]]
        if "router:external" in query:
            wanted = [neutron_bool(v) for v in query["router:external"]]
            nets = [n for n in nets if n["router:external"] in wanted]
        return {"networks": nets}

    def quota_details(self, cfg, pid):
        if pid != cfg["project"]["id"]:
            raise Refusal(403, "User does not have admin privileges: Only admin is authorized to access "
                               "quotas for another tenant.", kind="AdminRequired")
        quota = {r: {"limit": v, "used": 0, "reserved": 0} for r, v in NEUTRON_QUOTA_DEFAULTS.items()}
        quota["floatingip"] = cfg.get("floatingip", {"limit": -1, "used": 0, "reserved": 0})
        return {"quota": quota}

    def route(self, cfg, path, query):
        pid = cfg["project"]["id"]
        parts = path.strip("/").split("/")
        if path == "/compute/v2.1/flavors/detail":
            return self.flavors(cfg, query)
        if path == "/compute/v2.1/limits":
            return {"limits": {"rate": [], "absolute": cfg.get("compute_limits", {})}}
        if path == "/image/v2/images":
            return self.images(cfg, query)
        if path == "/network/v2.0/networks":
            return self.networks(cfg, query)
        if parts[:3] == ["network", "v2.0", "quotas"] and len(parts) == 5 and parts[4] in ("details", "details.json"):
            return self.quota_details(cfg, parts[3])
        if cfg.get("volume_limits") is not None and parts[:2] == ["volume", "v3"] and len(parts) >= 3:
            if parts[2] != pid:
                # The project in the URL must be the token's (code: cinder api/openstack/wsgi.py).
                raise Refusal(400, "Malformed request url")
            if parts[3:] == ["limits"]:
                return {"limits": {"rate": [], "absolute": cfg["volume_limits"]}}
        raise Refusal(404, NOT_FOUND)

    def do_GET(self):
        self.serve()

    def do_DELETE(self):
        self.serve()

    def do_PUT(self):
        self.serve()

    def serve(self):
        """GET, DELETE and PUT on Nova, Glance, Neutron and Cinder: authenticated by X-Auth-Token."""
        cfg = self.cfg()
        self.record(cfg)
        url = urllib.parse.urlparse(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        data = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        if self.injected(cfg, path):
            return
        service = service_of(path)
        if service == "identity":
            return self.refuse(service, Refusal(404, NOT_FOUND))
        with LOCK:
            user_id = TOKENS.get(self.headers.get("X-Auth-Token"))
        if user_id is None:
            if service == "image":
                # Glance decides itself (delay_auth_decision) and answers with webob's 401, no header.
                return self.reply(401, error_body("image", 401, GLANCE_401))
            # keystonemiddleware answers for Nova, Neutron and Cinder, with Keystone's body and header.
            return self.reply(401, error_body("identity", 401, AUTH_REQUIRED),
                              {"WWW-Authenticate": self.www_authenticate()})
        try:
            status, body = 200, None
            if self.server.resources and service in ("compute", "network"):
                answer = Cloud(self, cfg, user_id).route(self.command, path, query, data)
                if answer is not None:
                    status, body = answer
                    return self.service_reply(service, status, body)
            if self.command != "GET":
                raise Refusal(404, NOT_FOUND)
            body = self.route(cfg, path, query)
        except Refusal as r:
            return self.refuse(service, r)
        self.service_reply(service, status, body)


class Cloud:
    """Nova and Neutron over the registry of the shared cloud (--resources / FAKE_OPENSTACK_RESOURCES):
    what the Terraform stand-in created, listed and deleted as the api-ref shows it. Only the token's
    project's resources are seen (tenant_id / project_id); key pairs are not told apart by user."""

    def __init__(self, handler, cfg, user_id):
        self.handler, self.cfg, self.user_id = handler, cfg, user_id
        self.path, self.pid, self.base = handler.server.resources, cfg["project"]["id"], handler.base()

    def route(self, method, path, query, data):
        """(status, body) for a registry path, or None when the path is not one of them."""
        parts = path.strip("/").split("/")
        if parts[:2] == ["compute", "v2.1"] and len(parts) >= 3:
            return self.nova(method, parts[2:], query)
        if parts[:2] == ["network", "v2.0"] and len(parts) >= 3:
            if parts[-1].endswith(".json"):
                parts[-1] = parts[-1][:-5]
            return self.neutron(method, parts[2:], query, data)
        return None

    def mine(self, r):
        return r.get("tenant_id", r.get("project_id")) == self.pid

    # --- Nova ---------------------------------------------------------------------------------------

    def nova(self, method, parts, query):
        kind = parts[0]
        if parts == ["servers"] and method == "GET":
            out = self.servers(query)  # List Servers: the same page, id, name and links only
            out["servers"] = [{k: v[k] for k in ("id", "name", "links")} for v in out["servers"]]
            if "servers_links" in out:
                out["servers_links"][0]["href"] = out["servers_links"][0]["href"].replace("/detail?", "?")
            return 200, out
        if kind == "servers" and len(parts) == 2:
            if parts[1] == "detail" and method == "GET":
                return 200, self.servers(query)
            if method == "GET":
                with registry(self.path) as reg:
                    s = find(reg, "servers", parts[1])
                    if not s or not self.mine(s):
                        raise Refusal(404, "Instance %s could not be found." % parts[1])
                    return 200, {"server": self.server_view(reg, s)}
            if method == "DELETE":
                return self.delete_server(parts[1])
        if kind == "os-keypairs" and len(parts) <= 2:
            with registry(self.path, write=method == "DELETE") as reg:
                if len(parts) == 1 and method == "GET":
                    return 200, {"keypairs": [{"keypair": {k: kp["keypair"][k] for k in ("fingerprint", "name",
                                                                                       "public_key")}}
                                              for kp in reg["keypairs"]]}
                if len(parts) == 2 and method in ("GET", "DELETE"):
                    kp = next((k for k in reg["keypairs"] if k["keypair"]["name"] == parts[1]), None)
                    if kp is None:
                        raise Refusal(404, "Keypair %s not found for user %s" % (parts[1], self.user_id))
                    if method == "GET":
                        return 200, kp
                    reg["keypairs"].remove(kp)
                    return 202, None  # 202 up to microversion 2.1, 204 from 2.2
        if kind == "os-server-groups" and len(parts) <= 2:
            with registry(self.path, write=method == "DELETE") as reg:
                groups = [g for g in reg["server_groups"] if self.mine(g)]
                view = ("id", "name", "policies", "members", "metadata")  # microversion 2.1
                if len(parts) == 1 and method == "GET":
                    return 200, {"server_groups": [{k: g[k] for k in view} for g in groups]}
                if len(parts) == 2 and method in ("GET", "DELETE"):
                    g = next((g for g in groups if g["id"] == parts[1]), None)
                    if g is None:
                        raise Refusal(404, "Instance group %s could not be found." % parts[1])
                    if method == "GET":
                        return 200, {"server_group": {k: g[k] for k in view}}
                    reg["server_groups"].remove(g)
                    return 204, None
        return None

    def server_view(self, reg, s):
        v = public(s)
        flavors = self.cfg.get("flavors", [])
        fid = next((f.get("id", "f%d" % i) for i, f in enumerate(flavors) if f["name"] == s.get("_flavor_name")),
                   s.get("_flavor_name", ""))
        v["flavor"] = {"id": fid, "links": [{"rel": "bookmark", "href": self.base + "/compute/flavors/" + fid}]}
        v["links"] = [{"rel": "self", "href": self.base + "/compute/v2.1/servers/" + s["id"]},
                      {"rel": "bookmark", "href": self.base + "/compute/servers/" + s["id"]}]
        addresses = {}
        for p in reg["ports"]:
            if p["device_id"] != s["id"] or not p["device_owner"].startswith("compute:"):
                continue
            net = find(reg, "networks", p["network_id"]) or \
                next((n for n in self.cfg.get("networks", []) if "n-" + n["name"] == p["network_id"]), {})
            entries = addresses.setdefault(net.get("name", p["network_id"]), [])
            for ip in p["fixed_ips"]:
                entries.append({"version": ipaddress.ip_address(ip["ip_address"]).version, "addr": ip["ip_address"],
                                "OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": p["mac_address"]})
            for f in reg["floatingips"]:
                if f["port_id"] == p["id"]:
                    entries.append({"version": 4, "addr": f["floating_ip_address"], "OS-EXT-IPS:type": "floating",
                                    "OS-EXT-IPS-MAC:mac_addr": p["mac_address"]})
        v["addresses"] = addresses
        return v

    def servers(self, query):
        """List Servers Detailed: newest first (Nova's default sort, created_at desc), limit/marker paging
        with servers_links "next" when a page is full, and the `name` filter (a regular expression)."""
        with registry(self.path) as reg:
            servers = sorted((s for s in reg["servers"] if self.mine(s)), key=lambda s: (s["created"], s["id"]),
                             reverse=True)
            if "name" in query:
                servers = [s for s in servers if re.search(query["name"][0], s["name"])]
            max_limit = self.cfg.get("osapi_max_limit", 1000)
            limit = min(max_limit, paging_int(query, "limit", max_limit))
            page = after_marker(servers, query, "marker [%s] not found")[:limit]
            out = {"servers": [self.server_view(reg, s) for s in page]}
        if limit and len(page) == limit:
            params = {k: v[0] for k, v in query.items()}
            params["marker"] = page[-1]["id"]
            out["servers_links"] = [{"rel": "next", "href": self.base + "/compute/v2.1/servers/detail?" +
                                     urllib.parse.urlencode(params)}]
        return out

    def delete_server(self, server_id):
        """204, then what Nova does: the instance goes (its ddl-fake-nodes node with it: the cluster's other
        nodes are brought up again without it, or the last one is taken down), its ports are unbound. When
        the node cannot be removed the server stays, in ERROR with a fault, as Nova leaves it."""
        with NODES_LOCK:
            with registry(self.path) as reg:
                s = find(reg, "servers", server_id)
                if not s or not self.mine(s):
                    raise Refusal(404, "Instance could not be found")
                nodes = s.get("_fake_nodes")
                rest = [o["_fake_nodes"]["node"] for o in reg["servers"] if o["id"] != server_id and nodes and
                        o.get("_fake_nodes", {}).get("id") == nodes["id"] and
                        o["_fake_nodes"].get("state_dir") == nodes["state_dir"]]
            error = fake_nodes_without(nodes, rest) if nodes else None
            with registry(self.path, write=True) as reg:
                s = find(reg, "servers", server_id)
                if s and error:
                    s.update(status="ERROR", updated=iso_now())
                    s["OS-EXT-STS:vm_state"] = "error"
                    s["fault"] = {"code": 500, "message": error[-255:], "created": iso_now()}
                elif s:
                    remove_server(reg, server_id)
        return 204, None

    # --- Neutron ------------------------------------------------------------------------------------

    NEUTRON = {  # collection in the URL: (registry kind, body key of one, NotFound type, its message)
        "networks": ("networks", "network", "NetworkNotFound", "Network %s could not be found."),
        "subnets": ("subnets", "subnet", "SubnetNotFound", "Subnet %s could not be found."),
        "ports": ("ports", "port", "PortNotFound", "Port %s could not be found."),
        "routers": ("routers", "router", "RouterNotFound", "Router %s could not be found"),
        "floatingips": ("floatingips", "floatingip", "FloatingIPNotFound", "Floating IP %s could not be found"),
        "security-groups": ("security_groups", "security_group", "SecurityGroupNotFound",
                            "Security group %s does not exist"),
    }

    def neutron(self, method, parts, query, data):
        if parts[0] not in self.NEUTRON or len(parts) > 3:
            return None
        kind, one, missing, missing_msg = self.NEUTRON[parts[0]]
        with registry(self.path, write=method != "GET") as reg:
            items = [self.neutron_view(reg, kind, r) for r in reg[kind] if self.mine(r)]
            if kind == "networks":
                items = self.handler.networks(self.cfg, {})["networks"] + items
            if len(parts) == 1 and method == "GET":
                return 200, {kind: neutron_filter(items, query)}
            found = next((r for r in items if r["id"] == parts[1]), None)
            if found is None or (kind == "networks" and not find(reg, kind, parts[1]) and method != "GET"):
                raise Refusal(404, missing_msg % parts[1], kind=missing)
            if len(parts) == 2 and method == "GET":
                return 200, {one: found}
            if len(parts) == 2 and method == "DELETE":
                getattr(self, "delete_" + one)(reg, parts[1])
                return 204, None
            if parts[2:] == ["remove_router_interface"] and kind == "routers" and method == "PUT":
                return 200, self.remove_router_interface(reg, parts[1], data)
        return None

    def neutron_view(self, reg, kind, r):
        v = public(r)
        if kind == "floatingips":
            p = find(reg, "ports", r["port_id"]) if r["port_id"] else None
            v["port_details"] = {k: p[k] for k in ("name", "network_id", "mac_address", "admin_state_up", "status",
                                                   "device_id", "device_owner")} if p else None
        return v

    def delete_network(self, reg, net_id):
        ports = [p["id"] for p in reg["ports"] if p["network_id"] == net_id and
                 p["device_owner"] not in AUTO_DELETE_PORT_OWNERS]
        if ports:
            raise Refusal(409, "Unable to complete operation on network %s. There are one or more ports still in "
                               "use on the network, id for these ports is: %s." % (net_id, ",".join(ports)),
                          kind="NetworkInUse")
        remove_network(reg, net_id)

    def delete_subnet(self, reg, subnet_id):
        # Router interfaces first, then user ports with an address on it (neutron db_base_plugin_v2).
        for owners in (ROUTER_INTERFACE_OWNERS, None):
            if any(ip["subnet_id"] == subnet_id for p in reg["ports"] for ip in p["fixed_ips"]
                   if (p["device_owner"] in owners if owners else p["device_owner"] not in AUTO_DELETE_PORT_OWNERS)):
                raise Refusal(409, "Unable to complete operation on subnet %s: One or more ports have an IP "
                                   "allocation from this subnet." % subnet_id, kind="SubnetInUse")
        remove_subnet(reg, subnet_id)

    def delete_port(self, reg, port_id):
        p = find(reg, "ports", port_id)
        owner_exists = find(reg, "floatingips" if p["device_owner"] == "network:floatingip" else "routers",
                            p["device_id"])
        if p["device_owner"] in ROUTER_PORT_OWNERS and owner_exists:
            raise Refusal(409, "Port %s cannot be deleted directly via the port API: has device owner %s."
                          % (port_id, p["device_owner"]), kind="ServicePortInUse")
        # A port a server still uses may go: Neutron deletes it, Nova drops the interface.
        remove_port(reg, port_id)

    def delete_router(self, reg, router_id):
        ports = [p["id"] for p in reg["ports"] if p["device_id"] == router_id and
                 p["device_owner"] in ROUTER_INTERFACE_OWNERS]
        if ports:
            raise Refusal(409, "Router %s has ports still attached: %s" % (router_id, ", ".join(ports)),
                          kind="RouterInUse")
        reg["routers"] = [r for r in reg["routers"] if r["id"] != router_id]  # its gateway goes with it

    def delete_floatingip(self, reg, fip_id):
        reg["floatingips"] = [f for f in reg["floatingips"] if f["id"] != fip_id]

    def delete_security_group(self, reg, sg_id):
        if any(sg_id in p["security_groups"] for p in reg["ports"]):
            raise Refusal(409, "Security Group %s in use." % sg_id, kind="SecurityGroupInUse")
        reg["security_groups"] = [g for g in reg["security_groups"] if g["id"] != sg_id]

    def remove_router_interface(self, reg, router_id, data):
        """By port_id (and subnet_id, which must be on it) or by subnet_id; 200 with the interface's info
        (neutron l3_db remove_router_interface, _make_router_interface_info)."""
        try:
            info = json.loads(data or b"null")
        except ValueError:
            info = None
        if not isinstance(info, dict) or not ("port_id" in info or "subnet_id" in info):
            raise Refusal(400, "Bad router request: Either subnet_id or port_id must be specified.", kind="BadRequest")
        ours = [p for p in reg["ports"] if p["device_id"] == router_id and p["device_owner"] in ROUTER_INTERFACE_OWNERS]
        subnet_id = info.get("subnet_id")
        if "port_id" in info:
            port = next((p for p in ours if p["id"] == info["port_id"]), None)
            if port is None:
                raise Refusal(404, "Router %s does not have an interface with id %s" % (router_id, info["port_id"]),
                              kind="RouterInterfaceNotFound")
            subnets = [ip["subnet_id"] for ip in port["fixed_ips"]]
            if subnet_id and subnet_id not in subnets:
                raise Refusal(400, "Subnet on port %s does not match the requested subnet %s."
                              % (port["id"], subnet_id), kind="SubnetMismatchForPort")
        else:
            if not find(reg, "subnets", subnet_id):
                raise Refusal(404, "Subnet %s could not be found." % subnet_id, kind="SubnetNotFound")
            port = next((p for p in ours if any(ip["subnet_id"] == subnet_id for ip in p["fixed_ips"])), None)
            if port is None:
                raise Refusal(404, "Router %s has no interface on subnet %s" % (router_id, subnet_id),
                              kind="RouterInterfaceNotFoundForSubnet")
            subnets = [subnet_id]
        for sid in subnets:
            # A floating IP routed through this interface to a port on the subnet keeps it (l3_db).
            on_subnet = {p["id"] for p in reg["ports"] if any(ip["subnet_id"] == sid for ip in p["fixed_ips"])}
            if any(f["router_id"] == router_id and f["port_id"] in on_subnet for f in reg["floatingips"]):
                raise Refusal(409, "Router interface for subnet %s on router %s cannot be deleted, as it is "
                                   "required by one or more floating IPs." % (sid, router_id),
                              kind="RouterInterfaceInUseByFloatingIP")
        remove_port(reg, port["id"])
        return {"id": router_id, "network_id": port["network_id"], "port_id": port["id"], "subnet_id": subnets[0],
                "subnet_ids": subnets, "project_id": port["project_id"], "tenant_id": port["project_id"],
                "tags": find(reg, "routers", router_id)["tags"]}


def neutron_filter(items, query):
    """Neutron's list filters: a top-level attribute equal to one of its query values (AND across
    attributes, OR across one attribute's values; booleans strictly parsed), and the tag filters of
    "Filtering with tags" (tags: all of them, tags-any: one of them, not-tags: not all, not-tags-any: none;
    each a comma-separated list). Paging, sorting, `fields` and attributes that are lists or objects are
    not modelled (ignored)."""
    def tag_list(name):
        return [t for v in query.get(name, []) for t in v.split(",") if t]
    for name, values in query.items():
        if name in ("tags", "tags-any", "not-tags", "not-tags-any", "fields", "sort_key", "sort_dir", "limit",
                    "marker", "page_reverse"):
            continue
        kept = []
        for item in items:
            have = item.get(name, Ellipsis)
            if have is Ellipsis or isinstance(have, (list, dict)):
                kept.append(item)  # not an attribute of this resource: ignored
            elif isinstance(have, bool):
                if have in [neutron_bool(v) for v in values]:
                    kept.append(item)
            elif have is not None and str(have) in values:
                kept.append(item)
        items = kept
    if "tags" in query:
        items = [i for i in items if set(tag_list("tags")) <= set(i.get("tags", []))]
    if "tags-any" in query:
        items = [i for i in items if set(tag_list("tags-any")) & set(i.get("tags", []))]
    if "not-tags" in query:
        items = [i for i in items if not set(tag_list("not-tags")) <= set(i.get("tags", []))]
    if "not-tags-any" in query:
        items = [i for i in items if not set(tag_list("not-tags-any")) & set(i.get("tags", []))]
    return items


def fake_nodes_without(nodes, rest):
    """Takes NODES["node"] out of its ddl-fake-nodes cluster: `up` with the REST of the node names (the
    first is the bastion, as the Terraform stand-in brings them up), or `down` when none is left. The tool
    is the one that made them (recorded), else $DDL_FAKE_NODES. None, or why it failed."""
    tool = nodes.get("tool") or os.environ.get("DDL_FAKE_NODES")
    if not tool:
        return "DDL_FAKE_NODES is not set: the stand-in cannot remove the instance's node"
    d = nodes["state_dir"]
    if rest:
        order = sorted(rest, key=lambda n: (n != "master", int(re.sub(r"\D", "", n) or 0)))
        args = ["up", "--id", nodes["id"], "--state-dir", d, "--names", ",".join(order),
                "--pubkey-file", os.path.join(d, "pubkey.pub"), "--bastion"]
    else:
        args = ["down", "--id", nodes["id"], "--state-dir", d]
    r = subprocess.run([tool] + args, capture_output=True, text=True)
    return None if r.returncode == 0 else "%s %s failed: %s" % (tool, args[0], (r.stderr or r.stdout).strip())

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--resources", default=os.environ.get("FAKE_OPENSTACK_RESOURCES") or None,
                    help="the shared cloud's registry (default: $FAKE_OPENSTACK_RESOURCES; none: not served)")
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.config_path = a.config
    srv.resources = os.path.abspath(a.resources) if a.resources else None
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_port))
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
