#!/usr/bin/env python3
"""Follows, for the API: imecilabt-gpulab-cli 3.11.11 (PyPI; `imecilabt/gpulab/cli/apiclient.py`,
`__main__.py`), which calls API v4.0 (.../api/gpulab/v4.0/): POST jobs answers the new id as text; GET
jobs?user_urn=URN&page_size=N answers {"items": [...]} (a user URN picks that user's jobs; page_size at
most 200; `page` from 1 and `project_urn` as imecilabt-gpulab-common's job query takes them); GET jobs/ID; GET jobs/ID/log (the log as text, 204 when there is none yet); PUT
jobs/ID/state/status with the word CANCELLED and no Content-Type. And "GPULab API" (iLab.t documentation,
https://doc.ilabt.imec.be/ilabt/gpulab/api.html), sections "Endpoint and authentication" (.../v3.0/, SSL
client authentication) and "API Details" (curl examples with .../v3.1/ paths), for v3.0 and v3.1: the id
as {"uuid": ...}, a bare list of the caller's jobs, cancel with Content-Type text/plain. Not modelled
(answered 400 or 405 here, where v4.0 has them): the other status words (MUSTHALT, ONHOLD, QUEUED) and
DELETE jobs/ID; ddl calls neither.
For the job request and the job's state: "The Job Request" (https://doc.ilabt.imec.be/ilabt/gpulab/
jobdefinition.html) and GPULab's Job2 model in imecilabt-gpulab (JobRequestDocker: `command` is a string or
a list, handed to docker-py as it is; JobStateResources: slaveHost, portMappings, sshHost, sshPort,
sshUsername, sshProxyHost, sshProxyPort, sshProxyUsername; JobEventTimes: one time per status, upper case).
For how the command runs: docker-py (docker/docker-py, docker/types/containers.py ContainerConfig: a string
command goes through split_command, docker/utils/utils.py, which is shlex.split: words, no shell) and
Docker ("Dockerfile reference", section "Understand how CMD and ENTRYPOINT interact",
https://docs.docker.com/reference/dockerfile/#understand-how-cmd-and-entrypoint-interact: the command is
appended to the image's ENTRYPOINT, and the first word is executed, found on PATH, without a shell; one
that cannot be executed fails the container's start: "exec: ...: executable file not found in $PATH").

A stand-in for that REST API over HTTPS with a required client certificate, and for the workers that run
the jobs' containers.

Endpoints, under /api/gpulab/v4.0 (or v3.0, v3.1): POST /jobs (submit), GET /jobs (the caller's jobs),
GET /jobs/ID, GET /jobs/ID/log, PUT /jobs/ID/state/status (cancel: Content-Type text/plain, body exactly
CANCELLED, as the page's "Cancel job" example; anything else -> 400 with the reason). A method a path does
not support (e.g. DELETE /jobs/ID) is refused as an HTTP server refuses it: 405 Method Not Allowed with an
Allow header listing the path's methods. Not on the page, so chosen here: a cancel answers 200 with the
job; cancelling a job that has ended leaves it as it is (also 200). A job request is checked field by
field like GPULab's job model (version 2, camelCase, no unknown fields) and refused with 400 and the
reason (gpulab_model.py). The caller is the client certificate's CN: not in --users -> 403; the job's owner
project not --project -> 403. The job's owner gets the certificate's user URN and e-mail (subjectAltName
URI and email), as GPULab's model returns them.

A submitted job goes QUEUED -> STARTING, then its container starts: a real local node made with
$DDL_FAKE_NODES (`up --no-sshd`: a network namespace with its own files and nothing listening), in which the
job's command runs as Docker runs it: the image's ENTRYPOINT (--image IMAGE=JSON-LIST; an image not named
has none) followed by the command (a string split into shlex words, a list as it is), the first word
executed from PATH with the job's environment, no shell, in private mount and UTS namespaces (its own
/root, /etc/ssh, /tmp, /etc/hosts, /etc/ddl, /opt/ddl). Only what that command starts listens in the
node: sshd comes up only if the command starts it. A command that cannot be executed fails the start: the
job goes to FAILED with Docker's message in its log, never RUNNING. Once executed the job is RUNNING, its
port mappings point at the node (hostPort = containerPort at the node's address); when the command exits
the job is FINISHED (status 0) or FAILED, and its node is removed, as on cancel. Output goes to the log.
--ssh proxy: each job's node sits behind an SSH proxy (a small sshd jump host made with it, admitting
--proxy-key, the users' login key) and the state names it (sshProxyHost/Port/Username; sshHost is the
node's address behind it, which this machine cannot reach itself); --ssh direct: the node is on this
machine's bridge and the state names no proxy. Failure mode (--mode never-start): jobs stay QUEUED, with the
scheduler's explanation. Event log (--log): one line per status change ("Cancelled ID NAME"), per cancel
request ("PUT PATH CANCELLED"), per container start ("exec ID ARGV-JSON") and per refusal ("405 METHOD
PATH", "400 ...", "403 ..."). Python 3 standard library only.
"""
import argparse
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gpulab_worker
from gpulab_model import Bad, validate

PREFIXES = ("/api/gpulab/v4.0", "/api/gpulab/v3.0", "/api/gpulab/v3.1")
ARGS = None
LOCK = threading.Lock()
JOBS = {}  # uuid -> job dict (GPULab's shape) + private "_owner", "_node_id"


def log_event(line):
    if ARGS.log:
        with open(ARGS.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def fake_nodes(*args):
    r = subprocess.run([os.environ["DDL_FAKE_NODES"], *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return r.stdout


def set_status(job, status):
    job["state"]["status"] = status
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    times = job["state"]["eventTimes"]  # JobEventTimes: created, statusUpdated, one time per status
    times.setdefault("created", now)
    times["statusUpdated"] = now
    times[status.upper().replace(" ", "")] = now
    log_event(f"{status} {job['uuid']} {job['name']}")


def job_log(job_id):
    return os.path.join(ARGS.state, job_id + ".log")


def run_job(job_id):
    """The scheduler and worker: starts the job's container a moment after it was queued."""
    time.sleep(0.3)
    with LOCK:
        job = JOBS[job_id]
        if ARGS.mode == "never-start" or job["state"]["status"] != "Queued":
            return
        set_status(job, "Starting")
    node_id = "gl" + job_id.replace("-", "")[:8]
    names = "proxy,job" if ARGS.ssh == "proxy" else "job"
    pub = os.path.join(ARGS.state, node_id + ".pub")
    with open(pub, "w", encoding="utf-8") as f:
        # Only the proxy's sshd admits anyone (the users' login key); the job's node runs none of its own.
        f.write((ARGS.proxy_key or ARGS.nobody_key) + "\n")
    try:
        made = json.loads(fake_nodes("up", "--id", node_id, "--state-dir", os.path.join(ARGS.state, "nodes"),
                                     "--names", names, "--pubkey-file", pub, "--no-sshd", "job",
                                     *(["--bastion"] if ARGS.ssh == "proxy" else [])))["nodes"]
    except Exception as e:  # the worker could not make the container's network
        print(f"gpulab stand-in: the worker cannot start the container: {e}", file=sys.stderr)
        with open(job_log(job_id), "a", encoding="utf-8") as log:
            log.write(f"the worker cannot start the container: {e}\n")
        with LOCK:
            set_status(job, "Failed")
        return
    with LOCK:
        job["_node_id"] = node_id
        if job["state"]["status"] != "Starting":  # cancelled meanwhile
            threading.Thread(target=node_down, args=(node_id,)).start()
            return
    node = made[-1]
    # A command that cannot be executed: the worker wrote Docker's message to the job's log.
    proc, _ = gpulab_worker.start_container(job, node, ARGS.images, os.path.join(ARGS.state, "containers", job_id),
                                           job_log(job_id), log_event, ARGS.project_share)
    with LOCK:
        if proc is None:
            set_status(job, "Failed")
            threading.Thread(target=node_down, args=(node_id,)).start()
            return
        job["_proc"] = proc
        address = node["private_address"] if ARGS.ssh == "proxy" else node["public_address"]
        pms = job["request"]["docker"].get("portMappings", [])
        resources = {
            "clusterId": job["request"]["resources"].get("clusterId", 1), "gpuIds": [0], "cpuIds": [0, 1],
            "cpuMemoryGb": job["request"]["resources"]["cpuMemoryGb"], "gpuMemoryGb": 16,
            "slaveName": "fake-worker", "slaveHost": address, "slaveInstanceId": "i1",
            "slaveInstancePid": 1, "workerId": 0,
            # The node is the container's host: what listens on a container port is there, unmapped.
            "portMappings": [{"containerPort": (pm if isinstance(pm, int) else pm["containerPort"]),
                              "hostPort": (pm if isinstance(pm, int) else pm["containerPort"]),
                              "hostIp": "0.0.0.0"} for pm in pms],
            "sshHost": address, "sshPort": 22, "sshUsername": "root"}
        if ARGS.ssh == "proxy":
            resources.update({"sshProxyHost": made[0]["public_address"], "sshProxyPort": made[0]["port"],
                              "sshProxyUsername": made[0]["user"]})
        job["state"]["resources"] = resources
        if job["state"]["status"] != "Starting":
            proc.kill()
        else:
            set_status(job, "Running")
    rc = proc.wait()
    with LOCK:
        if job["state"]["status"] == "Running":
            set_status(job, "Finished" if rc == 0 else "Failed")
            threading.Thread(target=node_down, args=(node_id,)).start()


def node_down(node_id):
    try:
        fake_nodes("down", "--id", node_id, "--state-dir", os.path.join(ARGS.state, "nodes"))
    except RuntimeError as e:
        print(f"gpulab_server: removing node {node_id}: {e}", file=sys.stderr)


def public(job):
    return {k: v for k, v in job.items() if not k.startswith("_")}


def sanitized(job):
    """Another member's job as GPULab's model shows it to a project member: owner URNs, name, image and
    state kept; e-mail, SSH logins and port mappings hidden (what the shared model hides is read from
    imecilabt-gpulab-common; that the server hides the same is inferred)."""
    j = public(job)
    j["owner"] = {k: v for k, v in j["owner"].items() if k != "userEmail"}
    res = dict(j.get("state", {}).get("resources") or {})
    for k in [k for k in res if k.startswith("ssh") or k == "portMappings"]:
        del res[k]
    j["state"] = dict(j.get("state", {}), resources=res)
    return j


def allowed_methods(parts):
    """The methods a path under the prefix supports (parts: the path split at '/'), or None: no such path."""
    if parts == ["jobs"]:
        return ["GET", "POST"]
    if len(parts) == 2 and parts[0] == "jobs" and parts[1]:
        return ["GET"]
    if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "log":
        return ["GET"]
    if len(parts) == 4 and parts[0] == "jobs" and parts[2:] == ["state", "status"]:
        return ["PUT"]
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, body, ctype="application/json", headers=None):
        data = (json.dumps(body) if ctype == "application/json" else body).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def caller(self):
        cert = self.connection.getpeercert() or {}
        for rdn in cert.get("subject", ()):
            for k, v in rdn:
                if k == "commonName":
                    return v
        return ""

    def identity(self):
        """(user URN, e-mail) from the certificate's subjectAltName, as GPULab's client reads them."""
        san = (self.connection.getpeercert() or {}).get("subjectAltName", ())
        urn = next((v for k, v in san if k == "URI" and "+user+" in v), "")
        return urn, next((v for k, v in san if k == "email"), "")

    def route(self, method):
        # Read the whole body first: the connection is kept alive, so none of it may be left unread.
        body = self.rfile.read(int(self.headers.get("Content-Length", "0") or "0"))
        user = self.caller()
        if user not in ARGS.users:
            log_event(f"403 {method} {self.path} {user}")
            return self.reply(403, {"detail": f"user {user or '?'} is not allowed to use GPULab"})
        prefix = next((p for p in PREFIXES if self.path.startswith(p + "/")), None)
        v4 = prefix == PREFIXES[0]
        path = self.path[len(prefix):].split("?")[0] if prefix else ""
        query = dict(q.partition("=")[::2] for q in self.path.partition("?")[2].split("&") if q)
        parts = path.split("/")[1:]  # ["jobs", id?, "state"?, "status"?]
        allowed = allowed_methods(parts) if prefix else None
        if allowed is None:
            log_event(f"404 {method} {self.path}")
            return self.reply(404, {"detail": f"no such endpoint {self.path}"})
        if method not in allowed:
            log_event(f"405 {method} {self.path}")
            return self.reply(405, {"detail": f"The method {method} is not allowed for the requested URL."},
                              headers={"Allow": ", ".join(allowed)})
        if method == "POST":
            if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                return self.reply(415, {"detail": "send the job as application/json"})
            try:
                job = json.loads(body)
                project = validate(job)
            except (ValueError, Bad) as e:
                log_event(f"400 {e}")
                return self.reply(400, {"detail": f"invalid job request: {e}"})
            if project != ARGS.project:
                return self.reply(403, {"detail": f"user {user} is not a member of project {project}"})
            job_id = str(uuid.uuid4())
            urn, email = self.identity()
            # What GPULab fills in (the Job model requires them in what it returns): the owner from the
            # certificate, the durations, the restart record.
            job["owner"] = dict(job["owner"], userUrn=urn or f"urn:publicid:IDN+ilabt.imec.be+user+{user}",
                                userEmail=email or f"{user}@example.org")
            job.setdefault("deploymentEnvironment", "production")
            job["restartInfo"] = {"initialJobUuid": job_id, "restartCount": 0}
            sched = job["request"].setdefault("scheduling", {})
            sched.setdefault("maxDuration", "1 day")
            sched.setdefault("minDuration", sched["maxDuration"])
            with LOCK:
                JOBS[job_id] = dict(job, uuid=job_id, _owner=user, state={
                    "status": "Queued", "eventTimes": {},
                    "scheduling": {"queuedExplanations": ["No worker has a free GPU for this job; project " +
                                                          project + " uses its full GPU quota"]
                                   if ARGS.mode == "never-start" else []}})
                set_status(JOBS[job_id], "Queued")
            threading.Thread(target=run_job, args=(job_id,), daemon=True).start()
            # v4.0: the id as the body's text (gpulab-cli uses r.text); v3.x: a JSON object.
            return self.reply(200, job_id, ctype="text/plain") if v4 else self.reply(201, {"uuid": job_id})
        if parts == ["jobs"]:
            with LOCK:
                if not v4:
                    return self.reply(200, [public(j) for j in JOBS.values() if j["_owner"] == user])
                # v4.0: imecilabt-gpulab-common's job query (Master.find_jobs3(job_filter, page=1,
                # page_size=10); JobFilter3's user_urn and project_urn), in submission order, page_size at
                # most --max-page-size (200: `gpulab-cli jobs -c`'s maximum). Others' jobs are shown in part.
                try:
                    page = int(query.get("page", "1"))
                    size = min(int(query.get("page_size", "10")), ARGS.max_page_size)
                except ValueError:
                    return self.reply(400, {"detail": "page and page_size must be integers"})
                if page < 1 or size < 1:
                    return self.reply(400, {"detail": "page and page_size must be at least 1"})
                user_urn = urllib.parse.unquote(query.get("user_urn", ""))
                project_urn = urllib.parse.unquote(query.get("project_urn", ""))
                me = self.identity()[0]
                jobs = [j for j in JOBS.values()
                        if (not user_urn or j["owner"].get("userUrn") == user_urn)
                        and (not project_urn or j["owner"].get("projectUrn") == project_urn)]
                items = [public(j) if j["owner"].get("userUrn") == me else sanitized(j)
                         for j in jobs[(page - 1) * size:page * size]]
                return self.reply(200, {"items": items})
        with LOCK:
            job = JOBS.get(parts[1])
            if job is None or job["_owner"] != user:
                return self.reply(404, {"detail": "no such job"})
            if len(parts) == 2:
                return self.reply(200, public(job))
            if parts[2] == "log":
                try:
                    with open(job_log(job["uuid"]), "rb") as f:
                        text = f.read().decode("utf-8", "replace")
                except FileNotFoundError:
                    text = ""
                if not text:
                    self.send_response(204)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                return self.reply(200, text, ctype="text/plain")
            # PUT .../jobs/ID/state/status: the documented cancel.
            ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
            # v4.0's client sends the word with no Content-Type; v3.0's page says text/plain.
            if ctype != "text/plain" and not (v4 and not ctype):
                log_event(f"400 {method} {self.path} Content-Type {ctype or '(none)'}")
                return self.reply(400, {"detail": f"send the new status as text/plain, not {ctype or 'no Content-Type'}"})
            text = body.decode("utf-8", "replace")
            if text != "CANCELLED":
                log_event(f"400 {method} {self.path} body {text[:40]!r}")
                return self.reply(400, {"detail": f"the only status a job can be set to is CANCELLED, not {text[:40]!r}"})
            log_event(f"PUT {self.path} CANCELLED")
            if job["state"]["status"] in ("Queued", "Starting", "Running", "Assigned"):
                set_status(job, "Cancelled")
                if job.get("_proc"):
                    job["_proc"].kill()
                if job.get("_node_id"):
                    threading.Thread(target=node_down, args=(job["_node_id"],)).start()
            return self.reply(200, public(job))

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")

    def do_PATCH(self):
        self.route("PATCH")


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--ca", required=True, help="CA whose client certificates are accepted")
    p.add_argument("--state", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--users", required=True, help="comma separated CNs allowed to use the API")
    p.add_argument("--project", required=True)
    p.add_argument("--max-page-size", type=int, default=200,
                   help="GET jobs' largest page (200 as gpulab-cli says; tests lower it to see paging)")
    p.add_argument("--mode", default="normal", choices=["normal", "never-start"])
    p.add_argument("--image", action="append", default=[], metavar="IMAGE=JSON-LIST",
                   help="an image the registry holds, with its ENTRYPOINT (a JSON list)")
    p.add_argument("--ssh", default="direct", choices=["direct", "proxy"])
    p.add_argument("--proxy-key", default="", help="public key the SSH proxy admits (the users' login key)")
    p.add_argument("--log")
    p.add_argument("--project-share", default="", help="the project's share on this site (PROJECT_SHARE_AUTO)")
    ARGS = p.parse_args()
    ARGS.users = ARGS.users.split(",")
    images = {}
    for spec in ARGS.image:
        name, _, entry = spec.partition("=")
        images[name] = json.loads(entry)
        if not isinstance(images[name], list) or not all(isinstance(x, str) for x in images[name]):
            p.error(f"--image {spec}: the ENTRYPOINT must be a JSON list of strings")
    ARGS.images = images
    if ARGS.ssh == "proxy" and not ARGS.proxy_key.startswith("ssh-"):
        p.error("--ssh proxy needs --proxy-key (an OpenSSH public key)")
    # ddl-fake-nodes wants a key for the nodes' own sshd, which the stand-in stops at once: one nobody holds.
    nobody = os.path.join(ARGS.state, "nobody")
    if not os.path.exists(nobody + ".pub"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "nobody", "-f", nobody], check=True)
    with open(nobody + ".pub", encoding="utf-8") as f:
        ARGS.nobody_key = f.read().strip()
    os.makedirs(os.path.join(ARGS.state, "nodes"), exist_ok=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ARGS.cert, ARGS.key)
    ctx.load_verify_locations(ARGS.ca)
    ctx.verify_mode = ssl.CERT_REQUIRED
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    finally:
        for j in JOBS.values():
            if j.get("_proc"):
                j["_proc"].kill()
            if j.get("_node_id"):
                node_down(j["_node_id"])


if __name__ == "__main__":
    main()
