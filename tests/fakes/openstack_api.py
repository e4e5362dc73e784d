#!/usr/bin/env python3
"""HTTPS stand-in for the OpenStack APIs ddl's pre-flight reads (python3 stdlib only).

  openstack_api.py --cert server.pem --key server.key --config cloud.json --port-file PORT

Serves, following the OpenStack API reference:
  POST /identity/v3/auth/tokens            Keystone v3: password or application_credential; 201 with
                                           X-Subject-Token and token{project, catalog}
  GET  /compute/v2.1/flavors/detail        Nova {"flavors": [...]}
  GET  /compute/v2.1/limits                Nova {"limits": {"absolute": {...}}}
  GET  /image/v2/images?name=&limit=       Glance {"images": [...]}
  GET  /network/v2.0/networks?name=&router:external=   Neutron {"networks": [...]}
  GET  /network/v2.0/quotas/PID/details.json           Neutron {"quota": {"floatingip": {...}}}
  GET  /volume/v3/PID/limits               Cinder {"limits": {"absolute": {...}}} (only when in the catalog)
The config file is read again for every request, so a test can change the cloud between calls:
  {"users": {"alice": "pw"}, "app_credentials": {"id": "secret"}, "project": {"id": "p1", "name": "ml"},
   "flavors": [{"name": "m1", "vcpus": 2, "ram": 4096, "disk": 20}], "images": ["Ubuntu 22.04"],
   "networks": [{"name": "public", "router:external": true}], "compute_limits": {...},
   "floatingip": {"limit": 5, "used": 0, "reserved": 0}, "volume_limits": {...} or null,
   "fail": {"PATH": STATUS}, "delay": {"PATH": SECONDS}}
Every request is appended to <config>.requests (method, path, header names) for tests.
"""
import argparse
import http.server
import json
import secrets
import ssl
import threading
import time
import urllib.parse

TOKENS = set()
LOCK = threading.Lock()


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
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def record(self, cfg):
        with LOCK, open(self.server.config_path + ".requests", "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": sorted(self.headers.keys())}) + "\n")

    def injected(self, cfg, path):
        if path in cfg.get("delay", {}):
            time.sleep(cfg["delay"][path])
        if path in cfg.get("fail", {}):
            status = cfg["fail"][path]
            self.reply(status, {"computeFault" if status >= 500 else "error":
                                {"code": status, "message": "injected failure"}})
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

    def do_POST(self):
        cfg = self.cfg()
        self.record(cfg)
        path = urllib.parse.urlparse(self.path).path
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.injected(cfg, path):
            return
        if path != "/identity/v3/auth/tokens":
            return self.reply(404, {"error": {"code": 404, "message": "The resource could not be found.", "title": "Not Found"}})
        try:
            req = json.loads(body)["auth"]
            ident = req["identity"]
        except (ValueError, KeyError, TypeError):
            return self.reply(400, {"error": {"code": 400, "message": "Expecting to find auth in request body.", "title": "Bad Request"}})
        project = cfg["project"]
        ok = False
        if ident.get("methods") == ["password"]:
            user = ident["password"]["user"]
            ok = cfg.get("users", {}).get(user.get("name", user.get("id"))) == user.get("password")
            scope = req.get("scope", {}).get("project", {})
            if ok and scope.get("name", scope.get("id")) not in (project["name"], project["id"]):
                return self.reply(401, {"error": {"code": 401, "message": "User has no access to project", "title": "Unauthorized"}})
        elif ident.get("methods") == ["application_credential"]:
            cred = ident["application_credential"]
            ok = cfg.get("app_credentials", {}).get(cred.get("id", cred.get("name"))) == cred.get("secret")
            if "scope" in req:
                return self.reply(401, {"error": {"code": 401, "message": "Application credentials cannot request a scope.", "title": "Unauthorized"}})
        if not ok:
            return self.reply(401, {"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}})
        token = secrets.token_hex(16)
        with LOCK:
            TOKENS.add(token)
        self.reply(201, {"token": {"methods": ident["methods"], "expires_at": "2099-01-01T00:00:00.000000Z",
                                   "project": {"id": project["id"], "name": project["name"], "domain": {"id": "default", "name": "Default"}},
                                   "user": {"id": "u1", "name": "alice", "domain": {"id": "default", "name": "Default"}},
                                   "catalog": self.catalog(cfg, project["id"])}},
                   {"X-Subject-Token": token})

    def do_GET(self):
        cfg = self.cfg()
        self.record(cfg)
        url = urllib.parse.urlparse(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        if self.injected(cfg, path):
            return
        with LOCK:
            known = self.headers.get("X-Auth-Token") in TOKENS
        if not known:
            return self.reply(401, {"error": {"code": 401, "message": "The request you have made requires authentication.", "title": "Unauthorized"}})
        pid = cfg["project"]["id"]
        if path == "/compute/v2.1/flavors/detail":
            flavors = [dict(f, id="f%d" % i, links=[], **{"OS-FLV-EXT-DATA:ephemeral": 0})
                       for i, f in enumerate(cfg.get("flavors", []))]
            return self.reply(200, {"flavors": flavors})
        if path == "/compute/v2.1/limits":
            return self.reply(200, {"limits": {"rate": [], "absolute": cfg.get("compute_limits", {})}})
        if path == "/image/v2/images":
            names = cfg.get("images", [])
            if "name" in query:
                names = [n for n in names if n == query["name"][0]]
            return self.reply(200, {"images": [{"id": "i%d" % i, "name": n, "status": "active"} for i, n in enumerate(names)],
                                    "schema": "/v2/schemas/images", "first": "/v2/images"})
        if path == "/network/v2.0/networks":
            nets = cfg.get("networks", [])
            if "name" in query:
                nets = [n for n in nets if n["name"] == query["name"][0]]
            if "router:external" in query:
                want = query["router:external"][0].lower() == "true"
                nets = [n for n in nets if n.get("router:external", False) == want]
            return self.reply(200, {"networks": [dict(n, id="n-" + n["name"], status="ACTIVE") for n in nets]})
        if path == "/network/v2.0/quotas/%s/details.json" % pid:
            return self.reply(200, {"quota": {"floatingip": cfg.get("floatingip", {"limit": -1, "used": 0, "reserved": 0})}})
        if cfg.get("volume_limits") is not None and path == "/volume/v3/%s/limits" % pid:
            return self.reply(200, {"limits": {"rate": [], "absolute": cfg["volume_limits"]}})
        self.reply(404, {"itemNotFound": {"code": 404, "message": "The resource could not be found."}})


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
    import os
    os.replace(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
