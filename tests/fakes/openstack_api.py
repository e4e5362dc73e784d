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
With a registry of the shared cloud (--resources), also Nova's servers, key pairs and server groups and
Neutron's networks, subnets, ports, routers, floating IPs and security groups, listed and deleted as the
api-ref has them: the pages and the 409 refusals are named in tests/fakes/openstack_cloud.py.

Split by job: this file (the HTTP server, the requests log, injected faults, authentication by token and
the config-based answers of Nova, Glance, Neutron and Cinder), openstack_identity.py (Keystone),
openstack_errors.py (each service's error bodies, paging), openstack_registry.py (the shared cloud's
registry and resource shapes, also used by the Terraform stand-in and tests/fakes/aws_api.py),
openstack_cloud.py (Nova and Neutron over the registry).

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
With the registry: the usage in limits and quotas stays what the config says (the rest: openstack_cloud.py).

Serves:
  POST /identity/v3/auth/tokens            Keystone v3: password (scoped, unscoped, or to the user's
                                           default project) or application_credential (by id, or by
                                           name + user); 201 with X-Subject-Token; ?nocatalog
  POST|GET /identity/v3/users/UID/application_credentials, GET|DELETE .../ID   (with a registry) Keystone's
                                           application credentials (openstack_identity.py); a token made
                                           from one with access rules passes only the requests a rule
                                           names (service type, method, path pattern), else 401 as
                                           keystonemiddleware answers
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
  PUT|DELETE /compute/v2.1/servers/ID/metadata/KEY   Nova's metadata item: {"meta": {KEY: value}} 200 | 204
  POST /compute/v2.1/servers/ID/action     {"os-stop": null} | {"os-start": null}: 202; the server is SHUTOFF
                                           (its node powered off, files kept) | ACTIVE (booted); 409 when
                                           its vm_state does not allow it
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
--listen ADDRESS (default 127.0.0.1; 0.0.0.0 for nodes in network namespaces to reach it) and --public-host
HOST (default 127.0.0.1: the host of the catalog's URLs, an address in the certificate).


The shared cloud: --resources FILE (default $FAKE_OPENSTACK_RESOURCES; unset: none, and the stand-in
serves only the paths above it); its format is in tests/fakes/openstack_registry.py.
"""
import argparse
import csv
import http.server
import json
import os
import re
import secrets
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from openstack_cloud import Cloud  # noqa: E402
from openstack_errors import (AUTH_REQUIRED, GLANCE_401, NEUTRON_QUOTA_DEFAULTS, NOT_FOUND, Refusal,  # noqa: E402
                              after_marker, error_body, neutron_bool, paging_int, service_of)
from openstack_identity import Keystone  # noqa: E402

TOKENS = {}  # token -> the token's body (its user, methods, application credential)
# keystonemiddleware's service_type of each service here (the catalog's types).
SERVICE_TYPES = {"compute": "compute", "network": "network", "image": "image", "volume": "volumev3"}
LOCK = threading.Lock()


class Handler(Keystone, http.server.BaseHTTPRequestHandler):
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
        return "https://%s:%d" % (self.server.public_host, self.server.server_port)


    def do_POST(self):
        if urllib.parse.urlparse(self.path).path != "/identity/v3/auth/tokens":
            return self.serve()  # Nova's server actions; any other path is refused there
        cfg = self.cfg()
        self.record(cfg)
        url = urllib.parse.urlparse(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.injected(cfg, path):
            return
        service = service_of(path)
        try:
            token = self.issue_token(cfg, body, query)
        except Refusal as r:
            return self.refuse(service, r)
        secret = secrets.token_hex(16)
        with LOCK:
            TOKENS[secret] = token
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
        """GET, DELETE, PUT and POST (other than Keystone's tokens) on Nova, Glance, Neutron and Cinder:
        authenticated by X-Auth-Token."""
        cfg = self.cfg()
        self.record(cfg)
        url = urllib.parse.urlparse(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        data = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        if self.injected(cfg, path):
            return
        service = service_of(path)
        with LOCK:
            token = TOKENS.get(self.headers.get("X-Auth-Token"))
        if service == "identity":
            return self.identity(path, token, data)
        if token is None or not self.allowed(token, service, path):
            if service == "image":
                # Glance decides itself (delay_auth_decision) and answers with webob's 401, no header.
                return self.reply(401, error_body("image", 401, GLANCE_401))
            # keystonemiddleware answers for Nova, Neutron and Cinder, with Keystone's body and header.
            return self.reply(401, error_body("identity", 401, AUTH_REQUIRED),
                              {"WWW-Authenticate": self.www_authenticate()})
        try:
            status, body = 200, None
            if self.server.resources and service in ("compute", "network"):
                answer = Cloud(self, cfg, token["user"]["id"]).route(self.command, path, query, data)
                if answer is not None:
                    status, body = answer
                    return self.service_reply(service, status, body)
            if self.command != "GET":
                raise Refusal(404, NOT_FOUND)
            body = self.route(cfg, path, query)
        except Refusal as r:
            return self.refuse(service, r)
        self.service_reply(service, status, body)

    def allowed(self, token, service, path):
        """keystonemiddleware's check of a token from an application credential with access rules
        (auth_token validate_allowed_request, _path_matches): one rule must name this service type, the
        request's method and a path pattern matching the whole request path ({name} and * one segment, **
        anything); else the token is invalid for this request (401 as for no token)."""
        rules = token.get("application_credential", {}).get("access_rules")
        if rules is None:
            return True
        for rule in rules:
            pattern = "".join("[^/]+" if t[0] or t[1] else ".*" if t[2] else re.escape(t[3]) for t in
                              re.findall(r"({[^}]*})|(\*(?=$|[^*]))|(\*\*)|([^{}*])", rule["path"]))
            if rule["method"] == self.command and rule["service"] == SERVICE_TYPES.get(service) and \
                    re.match("^%s$" % pattern, path):
                return True
        return False

    def identity(self, path, token, data):
        """Keystone's own paths other than POST auth/tokens: the application credentials of a user (with a
        registry); anything else 404. Keystone checks the token itself: 401 without a valid one."""
        parts = path.strip("/").split("/")
        if not (self.server.resources and parts[1:3] == ["v3", "users"] and len(parts) in (5, 6) and
                parts[4] == "application_credentials"):
            return self.refuse("identity", Refusal(404, NOT_FOUND))
        try:
            if token is None:
                raise Refusal(401, AUTH_REQUIRED)
            status, body = self.application_credentials(self.command, parts, token, data)
        except Refusal as r:
            return self.refuse("identity", r)
        self.reply(status, body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--resources", default=os.environ.get("FAKE_OPENSTACK_RESOURCES") or None,
                    help="the shared cloud's registry (default: $FAKE_OPENSTACK_RESOURCES; none: not served)")
    ap.add_argument("--listen", default="127.0.0.1", help="the address to listen on (0.0.0.0: every one)")
    ap.add_argument("--public-host", default="127.0.0.1",
                    help="the host in the catalog's URLs and links (an address in the certificate)")
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer((a.listen, 0), Handler)
    srv.daemon_threads = True
    srv.public_host = a.public_host
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
