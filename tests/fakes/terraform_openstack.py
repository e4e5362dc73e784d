"""The OpenStack provider of the Terraform stand-in (tests/fakes/terraform): the mode of a module that
configures `provider "openstack"` (src/targets/openstack/terraform).

Follows:
  - terraform-provider-openstack's resource documentation (registry.terraform.io/providers/
    terraform-provider-openstack/openstack/latest/docs): openstack_compute_instance_v2 "flavor_name ...
    Changing this resizes the existing server" (update in place), its block_device (the image) "Changing
    this creates a new server" (replace), its power_state ("active", "shutoff": updated in place, the
    provider's os-stop / os-start, then its wait for SHUTOFF / ACTIVE; the server boots with its disk as it
    was; the provider's Read, Terraform's refresh before a plan, takes it from the server's status);
    openstack_compute_keypair_v2 public_key: new resource (replace);
    the resource ids (keypair: its name; router interface: its port; floating IP association: the
    floating IP's). The provider's `cloud` argument reads clouds.yaml (OS_CLOUD, OS_CLIENT_CONFIG_FILE);
    without it the provider cannot configure.
  - The module's validation blocks and its precondition on allowed_cidrs
    (src/targets/openstack/terraform/variables.tf, security.tf; those of src/terraform/module/common.tf are
    in tf_cli.py), as far as a stand-in can evaluate them.
  - The shapes in which the shared cloud holds what the module creates: the api-ref pages
    tests/fakes/openstack_api.py names (Nova "List Servers Detailed", "Show Keypair Details", "List Server
    Groups"; Neutron "List networks/subnets/ports/routers/floating IPs/security groups").

The shared cloud: with FAKE_OPENSTACK_RESOURCES set (the registry tests/fakes/openstack_api.py serves;
tests/fakes/openstack_registry.py has the format), the module's resources are also written there as the cloud's APIs would show
them, each with a fresh id that is also the id the state records: the key pair (Nova refuses a second one
of the same name, 409, as here), server group, network, subnet, router, the router interface's port
(device_owner network:router_interface), the security group with its rules, the servers' ports
(addresses from the subnet's pool; bound to their server: device_id, device_owner compute:nova), the
servers (ACTIVE, metadata ddl_cluster, ddl_role, ddl_state = var.state_dir, and ddl_expires = var.expires
where it is set) and the floating IP (its address the master node's public one); Neutron resources tagged
"ddl" and "ddl-cluster=<cluster>" (and "ddl-expires=<var.expires>" where it is set) as the module tags them
(src/targets/openstack/terraform/main.tf; var.expires of src/terraform/module/common.tf). A changed var.expires updates the servers' metadata in
place (what ddl gc reads; the stand-in models no other in-place tag update). Deletes (destroy, or fewer workers) take them out again. Their project is
$FAKE_OPENSTACK_PROJECT_ID (default "p1": it must be the API stand-in's config project to be seen there),
their user $FAKE_OPENSTACK_USER_ID (default "u-alice"). Every server records its node (the cluster id,
its node name, the nodes' state folder and $DDL_FAKE_NODES) in its private "_fake_nodes", so that a server
deleted through the API takes its node with it.
"""
import json
import os
import re

from tf_cli import (CloudError, api_module, fail, key_digest, node_power, nodes_dir, registry_from_env,
                    ssh_from_anywhere, state_id)

NAME = "openstack"
LOCK = ("registry.terraform.io/terraform-provider-openstack/openstack", "3.0.0")
INSTALL = "terraform-provider-openstack/openstack v3.0.0"
DATA_SOURCE = "data.openstack_images_image_v2.node"
INSTANCE = "openstack_compute_instance_v2"
CREATE_SERVER_ERROR = "Error creating OpenStack server"
DELETE_SERVER_ERROR = "Error deleting OpenStack server"
# FAKE_TF_FAIL_APPLY: the instance the apply fails at, with the API's refusal.
APPLY_FAILURE = ("openstack_compute_instance_v2.worker[0]", CREATE_SERVER_ERROR,
                 "Expected HTTP response code [202] when accessing [POST https://nova.example.org:8774/v2.1/servers], "
                 "but got 403 instead: {\"forbidden\": {\"code\": 403, \"message\": \"Quota exceeded for instances: "
                 "Requested 1, but already used 10 of 10 instances\"}}")
# FAKE_TF_FAIL_DESTROY: the resource a destroy fails at (address prefix), with the API's refusal.
DESTROY_FAILURE = ("openstack_networking_secgroup_v2", "Error deleting openstack_networking_secgroup_v2",
                   "Expected HTTP response code [] when accessing [DELETE https://neutron.example.org:9696/v2.0/"
                   "security-groups/1], but got 409 instead: {\"NeutronError\": {\"type\": \"SecurityGroupInUse\", "
                   "\"message\": \"Security Group 1 in use.\"}}")

# The node credential (credential.tf): created after the servers it names, also when it is replaced.
CREDENTIAL = "openstack_identity_application_credential_v3.node[0]"
CREATED_LAST = (CREDENTIAL,)

# The validation blocks of the module's own variables (variables.tf), as far as a stand-in can evaluate them.
VALIDATIONS = {
    "cloud": (lambda v: len(v) > 0, "cloud must name an entry of clouds.yaml."),
    "boot_volume_gb": (lambda v: 10 <= v <= 65536 and v == int(v), "boot_volume_gb must be a whole number from 10 to 65536."),
}
DEFAULTS = {"network_name": "", "dns_nameservers": [], "anti_affinity": False}


def check_env(json_mode, values):
    """The provider's `cloud` argument reads clouds.yaml; without it the real provider cannot configure."""
    path = os.environ.get("OS_CLIENT_CONFIG_FILE", "")
    if not os.environ.get("OS_CLOUD") or not path or not os.path.exists(path):
        fail(json_mode, "One of 'auth_url' or 'cloud' must be specified",
             'with provider["registry.terraform.io/terraform-provider-openstack/openstack"]')
    if ("\n  %s:" % os.environ["OS_CLOUD"]) not in open(path).read() and ("\n    %s:" % os.environ["OS_CLOUD"]) not in open(path).read():
        fail(json_mode, "Error loading clouds.yaml", "cloud %s does not exist in %s" % (os.environ["OS_CLOUD"], path))


def preconditions(json_mode, values):
    """The module's precondition that fails a plan before anything is created."""
    ssh_from_anywhere(json_mode, values, "openstack_networking_secgroup_v2.cluster")


def desired(v):
    res = ["openstack_compute_keypair_v2.cluster", "openstack_networking_secgroup_v2.cluster"]
    res += ['openstack_networking_secgroup_rule_v2.ssh["%s"]' % c for c in sorted(set(v["allowed_cidrs"]))]
    res += ['openstack_networking_secgroup_rule_v2.internal["%s"]' % e for e in ("IPv4", "IPv6")]
    res += ['openstack_networking_secgroup_rule_v2.egress["%s"]' % e for e in ("IPv4", "IPv6")]
    if not v["network_name"]:
        res += ["openstack_networking_network_v2.cluster[0]", "openstack_networking_subnet_v2.cluster[0]",
                "openstack_networking_router_v2.cluster[0]", "openstack_networking_router_interface_v2.cluster[0]"]
    if v["anti_affinity"]:
        res.append("openstack_compute_servergroup_v2.cluster[0]")
    res.append("openstack_networking_port_v2.master")
    res += ["openstack_networking_port_v2.worker[%d]" % i for i in range(int(v["worker_count"]))]
    res.append("openstack_compute_instance_v2.master")
    res += ["openstack_compute_instance_v2.worker[%d]" % i for i in range(int(v["worker_count"]))]
    res += ["openstack_networking_floatingip_v2.master", "openstack_networking_floatingip_associate_v2.master"]
    if values_node_credential(v):
        res.append(CREDENTIAL)
    return res


def values_node_credential(values):
    return bool(values.get("node_credential", False))


def replaced_with(addr, v):
    """What a forced replacement of `addr` (-replace) replaces too: the node credential, whose access rules
    name every server's id (credential.tf: every argument forces a new credential)."""
    return [CREDENTIAL] if addr.startswith(INSTANCE + ".") and values_node_credential(v) else []


def attributes(addr, v):
    """{attribute: (value, forces_replacement)} of the resources whose changes ddl's users see."""
    if addr == "openstack_compute_keypair_v2.cluster":
        return {"public_key": (key_digest(v), True)}
    if addr == "openstack_compute_instance_v2.master":
        return {"flavor_name": (v["master_flavor"], False), "block_device.uuid": (v["image_name"], True),
                "metadata.ddl_expires": (v["expires"], False), "power_state": (power_state(v), False)}
    if addr == CREDENTIAL:
        # Every argument forces a new credential; its access rules name the servers' ids, which change with
        # the number of workers and with a replaced server (another image).
        return {"access_rules": ("%d servers, image %s" % (int(v["worker_count"]) + 1, v["image_name"]), True),
                "expires_at": (v["expires"], True)}
    if addr.startswith("openstack_compute_instance_v2.worker["):
        return {"flavor_name": (v["worker_flavor"], False), "block_device.uuid": (v["image_name"], True),
                "metadata.ddl_expires": (v["expires"], False), "power_state": (power_state(v), False)}
    return {}


def registry_path():
    """The shared cloud's registry (FAKE_OPENSTACK_RESOURCES), or None without one."""
    return registry_from_env("FAKE_OPENSTACK_RESOURCES")


def cloud():
    """tests/fakes/openstack_registry.py (the registry and the api-ref's resource shapes) with a shared cloud."""
    return api_module("openstack_registry") if registry_path() else None


def server_ids(st):
    """The servers' ids as credential.tf's local.server_ids has them: the workers in index order, the master last."""
    ids = {r["addr"]: r["id"] for r in st["resources"] if r["addr"].startswith(INSTANCE + ".")}
    workers = sorted((a for a in ids if a != INSTANCE + ".master"), key=lambda a: int(a[a.index("[") + 1:-1]))
    return [ids[a] for a in workers] + ([ids[INSTANCE + ".master"]] if INSTANCE + ".master" in ids else [])


def access_rules(st):
    """credential.tf's local.node_credential_rules."""
    ids = server_ids(st)
    rules = [r for i in ids for r in ({"service": "compute", "method": "POST", "path": "/**/servers/%s/action" % i},
                                      {"service": "compute", "method": "DELETE", "path": "/**/servers/%s" % i})]
    return rules + [{"service": "compute", "method": "PUT", "path": "/**/servers/%s/metadata/ddl_autostop" % ids[-1]}]


def create_credential(st, values):
    """openstack_identity_application_credential_v3.node: the provider's create (POST
    /v3/users/{user_id}/application_credentials) made in the shared cloud's registry, which the identity
    stand-in serves; the secret goes into the state only (st["secrets"]), as the provider keeps it there."""
    import openstack_identity
    uid = os.environ.get("FAKE_OPENSTACK_USER_ID") or "u-alice"
    pid = os.environ.get("FAKE_OPENSTACK_PROJECT_ID") or "p1"
    req = {"name": values["cluster_name"] + "-node", "unrestricted": False, "roles": [{"name": "member"}],
           "description": "ddl cluster %s: the master's idle clock stops or deletes the cluster's own servers"
                          % values["cluster_name"],
           "access_rules": access_rules(st), "expires_at": values["expires"] or None}
    api = cloud()
    if not api:
        ident, secret = os.urandom(16).hex(), os.urandom(32).hex()
    else:
        with api.registry(registry_path(), write=True, kinds=("application_credentials",)) as reg:
            try:
                cred = openstack_identity.new_application_credential(reg, uid, pid, req)
            except api.Refusal as r:
                raise CloudError("Error creating openstack_identity_application_credential_v3",
                                 "Expected HTTP response code [201] when accessing [POST https://keystone.example.org"
                                 "/v3/users/%s/application_credentials], but got %d instead: %s"
                                 % (uid, r.status, json.dumps({"error": {"code": r.status, "message": r.message}})))
            ident, secret = cred["id"], cred["_secret"]
    st.setdefault("secrets", {})[CREDENTIAL] = {"id": ident, "secret": secret}
    return ident


def outputs(st, values):
    """credential.tf's outputs: node_credential (sensitive; null without var.node_credential) and server_ids."""
    ids = server_ids(st)
    cred = (st.get("secrets") or {}).get(CREDENTIAL)
    return {"node_credential": {"sensitive": True, "type": ["object", {"id": "string", "secret": "string"}] if cred
                                else "dynamic", "value": cred},
            "server_ids": {"sensitive": False, "type": ["tuple", ["string"] * len(ids)], "value": ids}}


def create(addr, st, values):
    """Adds what ADDR creates to the shared cloud, in the shape the API stand-in serves; returns its id
    (the id the provider records in the state), or None when there is no shared cloud."""
    if addr == CREDENTIAL:
        return create_credential(st, values)
    api = cloud()
    if not api:
        return None
    c, kind = values["cluster_name"], addr.split(".")[0]
    pid = os.environ.get("FAKE_OPENSTACK_PROJECT_ID") or "p1"
    uid = os.environ.get("FAKE_OPENSTACK_USER_ID") or "u-alice"
    tags = ["ddl", "ddl-cluster=" + c] + (["ddl-expires=" + values["expires"]] if values.get("expires") else [])
    key = addr[addr.index("[") + 1:-1] if addr.endswith("]") else None
    key = json.loads(key) if key and key.startswith('"') else (int(key) if key else None)
    with api.registry(registry_path(), write=True) as reg:
        find = lambda kind_, a: api.find(reg, kind_, state_id(st, a))  # noqa: E731
        if kind == "openstack_compute_keypair_v2":
            if any(k["keypair"]["name"] == c + "-key" for k in reg["keypairs"]):
                raise CloudError("Error creating OpenStack keypair",
                                 "Expected HTTP response code [200 201] when accessing [POST https://nova.example.org:8774"
                                 "/v2.1/os-keypairs], but got 409 instead: {\"conflictingRequest\": {\"code\": 409, "
                                 "\"message\": \"Key pair '%s-key' already exists.\"}}" % c)
            reg["keypairs"].append(api.new_keypair(reg, c + "-key", values["public_key"], uid))
            return c + "-key"  # the provider's id of a key pair is its name
        if kind == "openstack_networking_secgroup_v2":
            r = api.new_security_group(pid, c + "-nodes", tags, "ddl cluster %s: SSH from allowed networks, all "
                                       "traffic between nodes" % c)
            reg["security_groups"].append(r)
        elif kind == "openstack_networking_secgroup_rule_v2":
            sg = find("security_groups", "openstack_networking_secgroup_v2.cluster")
            if sg is None:
                return None  # deleted behind Terraform's back; the stand-in does not refresh
            name = addr.split(".")[1].split("[")[0]
            if name == "ssh":
                r = api.new_security_group_rule(pid, sg["id"], "ingress", "IPv6" if ":" in key else "IPv4", "tcp", 22, 22,
                                                remote_ip_prefix=key, description="SSH from " + key)
            elif name == "internal":
                r = api.new_security_group_rule(pid, sg["id"], "ingress", key, remote_group_id=sg["id"],
                                                description="All %s traffic between cluster nodes" % key)
            else:
                r = api.new_security_group_rule(pid, sg["id"], "egress", key, description="All %s egress" % key)
            sg["security_group_rules"].append(r)
        elif kind == "openstack_networking_network_v2":
            r = api.new_network(pid, c + "-net", tags)
            reg["networks"].append(r)
        elif kind == "openstack_networking_subnet_v2":
            net = find("networks", "openstack_networking_network_v2.cluster[0]")
            r = api.new_subnet(pid, c + "-subnet", tags, net["id"], values["network_cidr"], values["dns_nameservers"])
            net["subnets"].append(r["id"])
            reg["subnets"].append(r)
        elif kind == "openstack_networking_router_v2":
            r = api.new_router(pid, c + "-router", tags, "n-" + values["external_network"])
            reg["routers"].append(r)
        elif kind == "openstack_networking_router_interface_v2":
            sub = find("subnets", "openstack_networking_subnet_v2.cluster[0]")
            r = api.new_port(pid, "", [], sub["network_id"], [{"subnet_id": sub["id"], "ip_address": sub["gateway_ip"]}],
                             [], device_id=state_id(st, "openstack_networking_router_v2.cluster[0]"),
                             device_owner="network:router_interface")
            reg["ports"].append(r)  # the provider's id of a router interface is its port's
        elif kind == "openstack_compute_servergroup_v2":
            r = api.new_server_group(pid, uid, c + "-nodes", ["anti-affinity"])
            reg["server_groups"].append(r)
        elif kind == "openstack_networking_port_v2":
            sub = find("subnets", "openstack_networking_subnet_v2.cluster[0]")
            net_id = state_id(st, "openstack_networking_network_v2.cluster[0]") or "n-" + values["network_name"]
            fixed = [{"subnet_id": sub["id"], "ip_address": api.free_ip(reg, sub)}] if sub else []
            name = c + ("-master" if key is None else "-worker-%d" % key)
            r = api.new_port(pid, name, tags, net_id, fixed, [state_id(st, "openstack_networking_secgroup_v2.cluster")])
            reg["ports"].append(r)
        elif kind == "openstack_compute_instance_v2":
            role = "master" if key is None else "worker"
            nodes = {"id": c, "state_dir": nodes_dir(values, registry_path()),
                     "node": "master" if key is None else "worker%d" % (key + 1), "tool": os.environ.get("DDL_FAKE_NODES", "")}
            r = api.new_server(pid, uid, c + ("-master" if key is None else "-worker-%d" % key),
                               values["master_flavor" if key is None else "worker_flavor"], c + "-key",
                               dict({"ddl_cluster": c, "ddl_role": role, "ddl_state": values.get("state_dir", "")},
                                    **({"ddl_expires": values["expires"]} if values.get("expires") else {})),
                               [c + "-nodes"], nodes)
            reg["servers"].append(r)
            port = find("ports", "openstack_networking_port_v2." + ("master" if key is None else "worker[%d]" % key))
            if port:
                port.update(device_id=r["id"], device_owner="compute:nova", status="ACTIVE", updated_at=api.iso_now())
            group = find("server_groups", "openstack_compute_servergroup_v2.cluster[0]")
            if group:
                group["members"].append(r["id"])
        elif kind == "openstack_networking_floatingip_v2":
            nodes = (st.get("fake_nodes") or {}).get("nodes") or [{}]
            address = nodes[0].get("public_address") or "203.0.113.%d" % (10 + len(reg["floatingips"]) % 240)
            r = api.new_floatingip(pid, tags, c + " master", "n-" + values["external_network"], address)
            reg["floatingips"].append(r)
        elif kind == "openstack_networking_floatingip_associate_v2":
            r = find("floatingips", "openstack_networking_floatingip_v2.master")
            port = find("ports", "openstack_networking_port_v2.master")
            if r and port:
                r.update(port_id=port["id"], fixed_ip_address=(port["fixed_ips"] or [{}])[0].get("ip_address"),
                         router_id=state_id(st, "openstack_networking_router_v2.cluster[0]"), status="ACTIVE",
                         updated_at=api.iso_now())
            # the provider's id of an association is the floating IP's
        else:
            return None
        return r["id"] if r else None


def delete(addr, ident):
    """Takes what ADDR (id IDENT) made out of the shared cloud, as the provider's delete would; a resource
    already gone (deleted through the API) is no error, as for the provider."""
    api = cloud()
    if not api:
        return
    kind = addr.split(".")[0]
    with api.registry(registry_path(), write=True) as reg:
        if kind == "openstack_identity_application_credential_v3":
            # DELETE /v3/users/{user_id}/application_credentials/{id}: revoked, its tokens with it.
            reg["application_credentials"] = [c for c in reg.get("application_credentials", []) if c["id"] != ident]
        elif kind == "openstack_compute_keypair_v2":
            reg["keypairs"] = [k for k in reg["keypairs"] if k["keypair"]["name"] != ident]
        elif kind == "openstack_networking_secgroup_rule_v2":
            for g in reg["security_groups"]:
                g["security_group_rules"] = [r for r in g["security_group_rules"] if r["id"] != ident]
        elif kind == "openstack_networking_network_v2":
            api.remove_network(reg, ident)
        elif kind == "openstack_networking_subnet_v2":
            api.remove_subnet(reg, ident)
        elif kind in ("openstack_networking_port_v2", "openstack_networking_router_interface_v2"):
            api.remove_port(reg, ident)
        elif kind == "openstack_compute_instance_v2":
            api.remove_server(reg, ident)
        elif kind == "openstack_networking_floatingip_associate_v2":
            fip = api.find(reg, "floatingips", ident)
            if fip:
                fip.update(port_id=None, fixed_ip_address=None, router_id=None, status="DOWN", updated_at=api.iso_now())
        else:
            collection = {"openstack_networking_secgroup_v2": "security_groups", "openstack_networking_router_v2": "routers",
                          "openstack_compute_servergroup_v2": "server_groups",
                          "openstack_networking_floatingip_v2": "floatingips"}.get(kind)
            if collection:
                reg[collection] = [r for r in reg[collection] if r["id"] != ident]


def power_state(values):
    """The servers' power_state as the module sets it from var.stopped."""
    return "shutoff" if values["stopped"] else "active"


def refresh(st):
    """Terraform's refresh of openstack_compute_instance_v2's power_state (the provider's Read: a SHUTOFF
    server is "shutoff", an ACTIVE one "active"), in the plan's view of the state (the file is not written): a
    server stopped behind Terraform's back (the master's idle clock) is a change to make."""
    api = cloud()
    if not api:
        return
    with api.registry(registry_path()) as reg:
        for r in st["resources"]:
            if r["addr"].startswith("openstack_compute_instance_v2."):
                server = api.find(reg, "servers", r["id"])
                status = (server or {}).get("status")
                if status in ("ACTIVE", "SHUTOFF"):
                    r.setdefault("attributes", {})["power_state"] = "active" if status == "ACTIVE" else "shutoff"


def update(addr, ident, values, before, st):
    """An instance updated in place: its flavor (resized), its ddl_expires metadata and its power_state: the
    provider's os-stop or os-start (its messages "Error stopping/starting OpenStack instance"), the server then
    SHUTOFF or ACTIVE and its node powered off or booted (tests/fakes/openstack_registry.py power_server; without a shared cloud,
    the node alone)."""
    if not addr.startswith("openstack_compute_instance_v2."):
        return
    api = cloud()
    # With a shared cloud the server's own status decides (the refresh below), not what the state recorded.
    power = power_state(values) if api or before.get("power_state", "active") != power_state(values) else None
    if not api:
        if power:
            node_power(st, addr, power == "active")
        return
    with api.registry(registry_path(), write=True) as reg:
        server = api.find(reg, "servers", ident)
        if server:
            server.update(_flavor_name=values["master_flavor" if addr.endswith(".master") else "worker_flavor"],
                          updated=api.iso_now())
            server["metadata"].pop("ddl_expires", None)
            if values.get("expires"):
                server["metadata"]["ddl_expires"] = values["expires"]
        if server and power and (server["status"] == "SHUTOFF") == (power == "shutoff"):
            # Terraform's refresh reads power_state from the server (the provider's Read: SHUTOFF is "shutoff"),
            # so a server already in the wanted state (the master's idle clock stopped it) is left as it is.
            power = None
        if server and power:
            action = "start" if power == "active" else "stop"
            try:
                api.power_server(reg, server, action)
            except api.Refusal as r:
                raise CloudError("Error %s OpenStack instance" % ("starting" if action == "start" else "stopping"),
                                 "Expected HTTP response code [202] when accessing [POST https://nova.example.org:8774"
                                 "/v2.1/servers/%s/action], but got %d instead: %s"
                                 % (ident, r.status, json.dumps({"conflictingRequest" if r.status == 409 else
                                                                 "computeFault": {"code": r.status, "message": r.message}})))
