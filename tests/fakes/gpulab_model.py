"""GPULab's job model as the GPULab stand-in (gpulab_server.py) checks a submitted job: field by field, no
unknown fields, as imec's model refuses them (pydantic, extra="forbid").

Follows: imecilabt-gpulab-common `imecilabt/gpulab/schemas/job2.py` ("GPULab Job Model 2": `NewJobV4`
with name, description, owner (`NewJobOwnerV4`: projectUrn required; userUrn, userEmail, userDetails
accepted for compatibility), deploymentEnvironment, state (absent), restartInfo; `NewJobRequest` with
resources, docker, scheduling, extra (`JobRequestExtra`: sshPubKeys, emailOn*)), as imecilabt-gpulab-cli
3.11.11 submits it; "The Job Request" (https://doc.ilabt.imec.be/ilabt/gpulab/jobdefinition.html) for v3.
Python 3 standard library only.
"""
import re

IMAGE = re.compile(r"^((?P<username>[\w\-+_.]+):(?P<password>[^@ ]+)@)?(?P<repository>[\w.\-_]+(?::\d+|)\/)?"
                   r"(?P<image>[a-z0-9.\-_]+(?:\/[a-z0-9.\-_]+|)+)(:(?P<tag>[\w.\-_]{1,127}))?$")
DURATION = re.compile(r"^\d+ ?(s|sec|seconds?|m|min|minutes?|h|hours?|d|days?|w|weeks?)$")
PROJECT_URN = re.compile(r"^urn:publicid:IDN\+(?P<authority>[^+:]+)(:[^+]+)?\+project\+(?P<name>[^+]+)$")
ENV_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")



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
    check_keys(job, "job", ["name", "request"],
               ["description", "owner", "deploymentEnvironment", "state", "restartInfo"])
    need(job.get("state") is None, "job.state must be absent in a new job")
    need(isinstance(job["name"], str) and job["name"], "job.name must be a non-empty string")
    owner = job.get("owner")
    check_keys(owner, "job.owner", ["projectUrn"], ["userUrn", "userEmail", "userDetails"])
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
    for st in d.get("storage", []):
        if isinstance(st, str):
            continue
        check_keys(st, "request.docker.storage[]", [], ["hostPath", "containerPath", "sizeGb"])
        need(st.get("hostPath") or st.get("containerPath"), "request.docker.storage[]: hostPath or containerPath")
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
    extra = req.get("extra", {})
    check_keys(extra, "request.extra", [], ["sshPubKeys", "emailOnQueue", "emailOnRun", "emailOnEnd", "emailOnHalt",
                                            "emailOnRestart"])
    for k, v in extra.items():
        need(isinstance(v, list) and all(isinstance(x, str) for x in v), f"request.extra.{k} must be a list of strings")
    for key in extra.get("sshPubKeys", []):
        need(re.match(r"^(ssh-(ed25519|rsa)|ecdsa-sha2-nistp\d+) [A-Za-z0-9+/=]+( .*)?$", key),
             f"request.extra.sshPubKeys: {key[:30]!r} is not an OpenSSH public key")
    return m.group("name")


