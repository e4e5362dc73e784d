#!/usr/bin/env python3
"""Stand-in for GitLab's Terraform state API (python3 stdlib only), the backend docs/ci/gitlab-ci.yml keeps
the OpenStack reference cluster's state in.

  FAKE_GITLAB_JOB_TOKEN=TOKEN gitlab_tf_state.py --port-file PORT --project-id ID --states FILE

Documents followed:
  GitLab Docs, "GitLab-managed Terraform/OpenTofu state"
      https://docs.gitlab.com/user/infrastructure/iac/terraform_state/ : the state's address
      <CI_API_V4_URL>/projects/<id>/terraform/state/<name>, its lock at <address>/lock (lock_method POST,
      unlock_method DELETE), a CI job authenticating as user gitlab-ci-token with CI_JOB_TOKEN
  GitLab's API that page documents, lib/api/terraform/state.rb (gitlab-org/gitlab): GET 200 with the state,
      404 "Not found" for a state never written, 204 for a state with no file; POST stores the body (empty:
      204; not JSON: 422 "invalid JSON"; no "serial": 422 "No serial in payload"); DELETE removes it;
      POST /lock takes the lock info (ID, Operation, Info, Who, Version, Created, Path are required: 400
      when one is missing) and answers 200 with the lock, or 409 with the holder's lock when it is taken;
      DELETE /lock unlocks (409 when the ID given is not the holder's; no ID unlocks whatever holds it);
      a write or delete that names a lock ID (?ID=) other than the holder's, or none while it is locked,
      is refused with 409 (Terraform::RemoteStateHandler#handle_with_lock); the job token is accepted
      only through HTTP Basic authentication (job_token_allowed: :basic_auth), 401 without it.
  Terraform's http backend, "Backend Type: http"
      https://developer.hashicorp.com/terraform/language/backend/http : what the client sends (GET,
      POST with ?ID=<lock id> while it holds the lock, the lock info in the lock and unlock bodies).

The states live in FILE (JSON: {name: {"state": text or null, "lock": lock info or null, "versions": n}})
so that a test can read what was stored; every request is appended to FILE.log (method, path, status;
never the credentials).
"""
import argparse
import base64
import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

LOCK_FIELDS = ("ID", "Operation", "Info", "Who", "Version", "Created", "Path")
PATH_RE = re.compile(r"^/api/v4/projects/([^/]+)/terraform/state/([^/]+?)(/lock)?$")


class Store:
    def __init__(self, path):
        self.path = path
        self.mutex = threading.Lock()
        if not os.path.exists(path):
            self.save({})

    def load(self):
        with open(self.path) as f:
            return json.load(f)

    def save(self, states):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(states, f, indent=2)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)


def make_handler(store, project_id, token):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def reply(self, status, body=None):
            data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            with open(store.path + ".log", "a") as f:
                f.write("%s %s %d\n" % (self.command, urlsplit(self.path).path, status))

        def authenticated(self):
            auth = self.headers.get("Authorization", "")
            if not auth.startswith("Basic "):
                return False
            try:
                user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            except ValueError:
                return False
            return user == "gitlab-ci-token" and password == token

        def body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def handle_any(self):
            url = urlsplit(self.path)
            m = PATH_RE.match(url.path)
            data = self.body()
            if not m:
                return self.reply(404, {"error": "404 Not Found"})
            if not self.authenticated():
                return self.reply(401, {"message": "401 Unauthorized"})
            if unquote(m.group(1)) != project_id:
                return self.reply(404, {"message": "404 Project Not Found"})
            name, lock_route = unquote(m.group(2)), bool(m.group(3))
            query_id = parse_qs(url.query).get("ID", [None])[0]
            with store.mutex:
                states = store.load()
                st = states.get(name)
                if lock_route:
                    return self.lock_route(states, name, st, data, query_id)
                if self.command == "GET":
                    if st is None:
                        return self.reply(404, {"message": "404 Not found"})
                    if st["state"] is None:
                        return self.reply(204)
                    return self.reply(200, st["state"].encode())
                if self.command not in ("POST", "DELETE"):
                    return self.reply(405, {"error": "405 Not Allowed"})
                if st is not None and st["lock"] is not None and query_id != st["lock"]["ID"]:
                    return self.reply(409, {"message": "409 Conflict"})
                if self.command == "DELETE":
                    if st is None:
                        return self.reply(404, {"message": "404 Not found"})
                    del states[name]
                    store.save(states)
                    return self.reply(200)
                if not data:
                    return self.reply(204)
                try:
                    parsed = json.loads(data)
                except ValueError:
                    return self.reply(422, {"message": "invalid JSON"})
                if not isinstance(parsed, dict) or parsed.get("serial") in (None, ""):
                    return self.reply(422, {"message": "No serial in payload"})
                st = st or {"state": None, "lock": None, "versions": 0}
                st["state"] = data.decode()
                st["versions"] += 1
                states[name] = st
                store.save(states)
                return self.reply(200)

        def lock_route(self, states, name, st, data, query_id):
            try:
                info = json.loads(data) if data else {}
            except ValueError:
                return self.reply(400, {"error": "body is not JSON"})
            if self.command == "POST":
                missing = [k for k in LOCK_FIELDS if not isinstance(info.get(k), str)]
                if missing:
                    return self.reply(400, {"error": "%s is missing" % missing[0]})
                st = st or {"state": None, "lock": None, "versions": 0}
                if st["lock"] is not None:
                    return self.reply(409, st["lock"])
                st["lock"] = {k: info[k] for k in LOCK_FIELDS}
                states[name] = st
                store.save(states)
                return self.reply(200, st["lock"])
            if self.command == "DELETE":
                if st is None:
                    return self.reply(404, {"message": "404 Not found"})
                given = info.get("ID") or query_id
                if st["lock"] is not None and given and given != st["lock"]["ID"]:
                    return self.reply(409, {"message": "409 Conflict"})
                st["lock"] = None
                store.save(states)
                return self.reply(200)
            return self.reply(405, {"error": "405 Not Allowed"})

        do_GET = do_POST = do_DELETE = do_PUT = handle_any

    return Handler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port-file", required=True)
    p.add_argument("--project-id", required=True)
    p.add_argument("--states", required=True)
    a = p.parse_args()
    store = Store(a.states)
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(store, a.project_id, os.environ["FAKE_GITLAB_JOB_TOKEN"]))
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(a.port_file + ".tmp", a.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
