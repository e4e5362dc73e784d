#!/usr/bin/env python3
"""HTTPS stand-in for the OpenStack APIs ddl's pre-flight reads (python3 stdlib only).

  openstack_api.py --cert server.pem --key server.key --config cloud.json --port-file PORT

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
   "fail": {"PATH": STATUS}, "delay": {"PATH": SECONDS}}
Every request is appended to <config>.requests (method, path, header names) for tests.
"""
import argparse
import base64
import csv
import datetime
import http
import http.server
import json
import os
import secrets
import ssl
import threading
import time
import urllib.parse
import uuid

TOKENS = set()
LOCK = threading.Lock()

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
        if path in cfg.get("delay", {}):
            time.sleep(cfg["delay"][path])
        if path in cfg.get("fail", {}):
            self.refuse(service_of(path), Refusal(cfg["fail"][path], "injected failure"))
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
            TOKENS.add(secret)
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
        cfg = self.cfg()
        self.record(cfg)
        url = urllib.parse.urlparse(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        if self.injected(cfg, path):
            return
        service = service_of(path)
        if service == "identity":
            return self.refuse(service, Refusal(404, NOT_FOUND))
        with LOCK:
            known = self.headers.get("X-Auth-Token") in TOKENS
        if not known:
            if service == "image":
                # Glance decides itself (delay_auth_decision) and answers with webob's 401, no header.
                return self.reply(401, error_body("image", 401, GLANCE_401))
            # keystonemiddleware answers for Nova, Neutron and Cinder, with Keystone's body and header.
            return self.reply(401, error_body("identity", 401, AUTH_REQUIRED),
                              {"WWW-Authenticate": self.www_authenticate()})
        try:
            body = self.route(cfg, path, query)
        except Refusal as r:
            return self.refuse(service, r)
        self.service_reply(service, 200, body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--port-file", required=True)
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.config_path = a.config
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_port))
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
