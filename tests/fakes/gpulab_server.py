#!/usr/bin/env python3
"""Follows, for the API: "GPULab API" (iLab.t documentation, https://doc.ilabt.imec.be/ilabt/gpulab/api.html),
sections "Endpoint and authentication" (endpoint .../api/gpulab/v3.0/, SSL client authentication) and "API
Details" (the curl examples for APIv3 and the Job2 format, with .../v3.1/ paths: get all jobs, get one job,
create job, cancel job; both prefixes are served). The page documents no DELETE on jobs and no log call;
the log call is the one imec's own client makes (imecilabt-gpulab-cli 3.11 on PyPI, `gpulab-cli log`:
GET .../jobs/ID/log, the log as text, 204 when there is none yet).
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

Endpoints, under /api/gpulab/v3.0 (or v3.1): POST /jobs (submit), GET /jobs (the caller's jobs),
GET /jobs/ID, GET /jobs/ID/log, PUT /jobs/ID/state/status (cancel: Content-Type text/plain, body exactly
CANCELLED, as the page's "Cancel job" example; anything else -> 400 with the reason). A method a path does
not support (e.g. DELETE /jobs/ID) is refused as an HTTP server refuses it: 405 Method Not Allowed with an
Allow header listing the path's methods. Not on the page, so chosen here: a cancel answers 200 with the
job; cancelling a job that has ended leaves it as it is (also 200). A job request is checked field by
field like GPULab's job model (version 2, camelCase, no unknown fields) and refused with 400 and the
reason. The caller is the client certificate's CN: not in --users -> 403; the job's owner project not
--project -> 403.

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
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gpulab_worker

PREFIXES = ("/api/gpulab/v3.0", "/api/gpulab/v3.1")
IMAGE = re.compile(r"^((?P<username>[\w\-+_.]+):(?P<password>[^@ ]+)@)?(?P<repository>[\w.\-_]+(?::\d+|)\/)?"
                   r"(?P<image>[a-z0-9.\-_]+(?:\/[a-z0-9.\-_]+|)+)(:(?P<tag>[\w.\-_]{1,127}))?$")
DURATION = re.compile(r"^\d+ ?(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?|w|weeks?)$")
PROJECT_URN = re.compile(r"^urn:publicid:IDN\+(?P<authority>[^+:]+)(:[^+]+)?\+project\+(?P<name>[^+]+)$")
ENV_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")

ARGS = None
LOCK = threading.Lock()
JOBS = {}  # uuid -> job dict (GPULab's shape) + private "_owner", "_node_id"


class Bad(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Bad(msg)


def check_keys(obj, where, required, optional=()):
    need(isinstance(obj, dict), f"{where} must be an object")
    for k in obj:
        need(k in required or k in optional, f"{where}: unknown field {k!r}")
    for k in required:
        need(k in obj, f"{where}: missing field {k!r}")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def validate(job):
    check_keys(job, "job", ["name", "request"], ["description", "owner", "deploymentEnvironment"])
    need(isinstance(job["name"], str) and job["name"], "job.name must be a non-empty string")
    owner = job.get("owner")
    check_keys(owner, "job.owner", ["projectUrn"])
    m = PROJECT_URN.match(owner["projectUrn"]) if isinstance(owner["projectUrn"], str) else None
    need(m, "job.owner.projectUrn is not a project URN")
    req = job["request"]
    check_keys(req, "request", ["resources", "docker"], ["scheduling", "extra"])
    res = req["resources"]
    check_keys(res, "request.resources", ["cpus", "gpus", "cpuMemoryGb"],
               ["gpuMemoryGb", "features", "gpuModel", "minCudaVersion", "clusterId", "slaveName", "slaveInstanceId"])
    need(is_int(res["cpus"]) and res["cpus"] > 0, "request.resources.cpus must be an integer > 0")
    need(is_int(res["gpus"]) and res["gpus"] >= 0, "request.resources.gpus must be an integer >= 0")
    need(is_int(res["cpuMemoryGb"]) and res["cpuMemoryGb"] > 0, "request.resources.cpuMemoryGb must be an integer > 0")
    if "clusterId" in res:
        need(is_int(res["clusterId"]) and res["clusterId"] >= 0, "request.resources.clusterId must be an integer")
    if "minCudaVersion" in res:
        need(is_int(res["minCudaVersion"]) and res["minCudaVersion"] >= 0,
             "request.resources.minCudaVersion must be an integer")
    if "gpuModel" in res:
        gm = res["gpuModel"] if isinstance(res["gpuModel"], list) else [res["gpuModel"]]
        need(all(isinstance(x, str) and len(x) >= 2 for x in gm), "request.resources.gpuModel must be model names")
    d = req["docker"]
    check_keys(d, "request.docker", ["image"],
               ["command", "environment", "storage", "portMappings", "projectGidVariableName", "workingDir",
                "groupAdd", "user"])
    need(isinstance(d["image"], str) and IMAGE.match(d["image"]), f"request.docker.image {d['image']!r} is not an image")
    cmd = d.get("command", [])
    need(isinstance(cmd, str) or (isinstance(cmd, list) and all(isinstance(x, str) for x in cmd)),
         "request.docker.command must be a string or a list of strings")

    env = d.get("environment", {})
    need(isinstance(env, dict), "request.docker.environment must be an object")
    for k, v in env.items():
        need(ENV_NAME.match(k), f"request.docker.environment: {k!r} is not a variable name")
        need(isinstance(v, (str, int, bool)), f"request.docker.environment.{k} must be a string, number or bool")
    need(isinstance(d.get("storage", []), list), "request.docker.storage must be a list")
    pms = d.get("portMappings", [])
    need(isinstance(pms, list), "request.docker.portMappings must be a list")
    for pm in pms:
        if is_int(pm):
            continue
        check_keys(pm, "request.docker.portMappings[]", ["containerPort"], ["hostPort", "hostIp"])
        need(is_int(pm["containerPort"]) and 0 < pm["containerPort"] < 65536, "containerPort must be a port")
        if pm.get("hostPort") is not None:
            need(is_int(pm["hostPort"]), "hostPort must be a port")
    sched = req.get("scheduling", {})
    check_keys(sched, "request.scheduling", [],
               ["interactive", "restartable", "minDuration", "maxDuration", "killableAfter", "reservationIds",
                "maxSimultaneousJobs", "notBefore", "notAfter", "allowHaltWithoutSignal"])
    for k in ("interactive", "restartable"):
        if k in sched:
            need(isinstance(sched[k], bool), f"request.scheduling.{k} must be true or false")
    for k in ("minDuration", "maxDuration"):
        if k in sched:
            need(isinstance(sched[k], str) and DURATION.match(sched[k]),
                 f"request.scheduling.{k} {sched[k]!r} is not a duration like '12 hours'")
    return m.group("name")


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
                                           job_log(job_id), log_event)
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

    def route(self, method):
        # Read the whole body first: the connection is kept alive, so none of it may be left unread.
        body = self.rfile.read(int(self.headers.get("Content-Length", "0") or "0"))
        user = self.caller()
        if user not in ARGS.users:
            log_event(f"403 {method} {self.path} {user}")
            return self.reply(403, {"detail": f"user {user or '?'} is not allowed to use GPULab"})
        prefix = next((p for p in PREFIXES if self.path.startswith(p + "/")), None)
        path = self.path[len(prefix):].split("?")[0] if prefix else ""
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
            with LOCK:
                JOBS[job_id] = dict(job, uuid=job_id, _owner=user, state={
                    "status": "Queued", "eventTimes": {},
                    "scheduling": {"queuedExplanations": ["No worker has a free GPU for this job; project " +
                                                          project + " uses its full GPU quota"]
                                   if ARGS.mode == "never-start" else []}})
                set_status(JOBS[job_id], "Queued")
            threading.Thread(target=run_job, args=(job_id,), daemon=True).start()
            return self.reply(201, {"uuid": job_id})
        if parts == ["jobs"]:
            with LOCK:
                return self.reply(200, [public(j) for j in JOBS.values() if j["_owner"] == user])
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
            if ctype != "text/plain":
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
    p.add_argument("--mode", default="normal", choices=["normal", "never-start"])
    p.add_argument("--image", action="append", default=[], metavar="IMAGE=JSON-LIST",
                   help="an image the registry holds, with its ENTRYPOINT (a JSON list)")
    p.add_argument("--ssh", default="direct", choices=["direct", "proxy"])
    p.add_argument("--proxy-key", default="", help="public key the SSH proxy admits (the users' login key)")
    p.add_argument("--log")
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
