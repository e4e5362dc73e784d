"""Nova and Neutron over the shared cloud's registry (tests/fakes/openstack_registry.py), for the OpenStack
API stand-in (tests/fakes/openstack_api.py --resources): what the Terraform stand-in created, listed and
deleted as the api-ref shows it.

Follows (read in the RST those pages are built from: nova 00a030403f api-ref/source and doc/api_samples,
neutron-lib 6cd671a8 api-ref/source/v2, neutron 2131d26f73 doc/source/admin/ops-resource-tags.rst):
  Nova      "Compute API" https://docs.openstack.org/api-ref/compute/ : "List Servers Detailed"
            (#list-servers-detailed: limit, marker, servers_links, the name filter; fields per the 2.1
            response parameters and the servers-details-resp.json sample), "List Servers" (#list-servers),
            "Show Server Details" (#show-server-details), "Delete Server" (#delete-server: 204; "the ports
            attached to the server, which Nova created ... are deleted"; the server leaves the list),
            "Create Or Update Metadata Item" (#create-or-update-metadata-item: PUT
            /servers/{server_id}/metadata/{key}, {"meta": {key: value}}, 200 with the item), "Delete Metadata
            Item" (#delete-metadata-item: 204),
            "Stop Server (os-stop Action)" / "Start Server (os-start Action)" (#stop-server-os-stop-action,
            #start-server-os-start-action: POST /servers/{id}/action, 202 without a body; the server goes
            to SHUTOFF / ACTIVE; 409 when its state does not allow it),
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
Not modelled: Nova's server filters other than name, sorting other than the default, locked servers
(409) and the asynchronous delete (a server goes, or fails into ERROR, before the 204 is sent); key pairs
are listed for every user; Neutron list filters on attributes that are lists or objects, paging, sorting
and `fields`; the UUID check of remove_router_interface's ids; Cinder volumes (the boot volumes go with
their servers).
"""
import ipaddress
import json
import re
import threading
import urllib.parse

from openstack_errors import Refusal, after_marker, neutron_bool, paging_int
from openstack_registry import (AUTO_DELETE_PORT_OWNERS, ROUTER_INTERFACE_OWNERS, ROUTER_PORT_OWNERS,
                                fake_nodes_without, find, iso_now, power_server, public, registry,
                                remove_network, remove_port, remove_server, remove_subnet)

NODES_LOCK = threading.Lock()  # one ddl-fake-nodes call at a time (a server delete re-ups its cluster)


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
        if parts[:2] == ["compute", "v2.1"] and len(parts) == 5 and parts[2] == "servers" and parts[4] == "action" \
                and method == "POST":
            return self.server_action(parts[3], data)
        if parts[:3] == ["compute", "v2.1", "servers"] and len(parts) == 6 and parts[4] == "metadata" and \
                method in ("PUT", "DELETE"):
            return self.metadata_item(parts[3], parts[5], data) if method == "PUT" else \
                self.delete_metadata_item(parts[3], parts[5])
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

    def server_action(self, server_id, data):
        """POST /servers/{id}/action with {"os-stop": null} or {"os-start": null}: 202, no body (the server is
        SHUTOFF / ACTIVE when it is sent); Nova's 400 for a body that is not one action it knows (here: the
        two modelled), 404 for a server not seen, 409 from the state check (power_server)."""
        try:
            body = json.loads(data or b"null")
        except ValueError:
            raise Refusal(400, "Malformed request body")
        if not isinstance(body, dict) or len(body) != 1:
            raise Refusal(400, "Malformed request body")
        action = next(iter(body))
        if action not in ("os-stop", "os-start"):
            raise Refusal(400, "There is no such action: %s" % action)
        with NODES_LOCK:
            with registry(self.path, write=True) as reg:
                s = find(reg, "servers", server_id)
                if not s or not self.mine(s):
                    raise Refusal(404, "Instance %s could not be found." % server_id)
                power_server(reg, s, action[3:])
        return 202, None

    def metadata_item(self, server_id, key, data):
        """PUT /servers/{id}/metadata/{key} {"meta": {key: value}}: 200 with the item (Nova's schema: one item,
        its key the URI's, key and value at most 255 characters; 400 otherwise); 404 for a server not seen."""
        try:
            meta = json.loads(data or b"null")["meta"]
        except (ValueError, KeyError, TypeError):
            raise Refusal(400, "Invalid input for field/attribute meta.")
        if not isinstance(meta, dict) or len(meta) != 1:
            raise Refusal(400, "Request body contains too many items" if isinstance(meta, dict) and meta else
                          "Invalid input for field/attribute meta.")
        if key not in meta:
            raise Refusal(400, "Request body and URI mismatch")
        value = meta[key]
        if not isinstance(value, str) or len(value) > 255 or len(key) > 255:
            raise Refusal(400, "Invalid input for field/attribute meta. Value: %s." % json.dumps(meta))
        with registry(self.path, write=True) as reg:
            s = find(reg, "servers", server_id)
            if not s or not self.mine(s):
                raise Refusal(404, "Instance %s could not be found." % server_id)
            s["metadata"][key] = value
            s["updated"] = iso_now()
        return 200, {"meta": {key: value}}

    def delete_metadata_item(self, server_id, key):
        """DELETE /servers/{id}/metadata/{key}: 204; 404 for a server not seen or a key it does not have."""
        with registry(self.path, write=True) as reg:
            s = find(reg, "servers", server_id)
            if not s or not self.mine(s):
                raise Refusal(404, "Instance %s could not be found." % server_id)
            if key not in s["metadata"]:
                raise Refusal(404, "Metadata item was not found")
            del s["metadata"][key]
            s["updated"] = iso_now()
        return 204, None

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
