"""Where the idle clock (ddl-idle, beside this file) reads GPU use from, besides nvidia-smi over ssh:

- Prometheus, where the spec's monitoring is on: the master's Prometheus scrapes NVIDIA's DCGM exporter on
  every GPU node (playbooks/roles/monitoring). Asked with an instant query of its HTTP API (Prometheus
  documentation, "HTTP API", "Instant queries": GET /api/v1/query?query=..., the answer
  {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {...}, "value": [t, "v"]}]}})
  for avg_over_time of DCGM_FI_DEV_GPU_UTIL (dcgm-exporter's etc/default-counters.csv: "DCGM_FI_DEV_GPU_UTIL,
  gauge, GPU utilization (in %)", one series per GPU labelled gpu, UUID, Hostname, ...) over the last period.
  Each series is the node's by the scrape target ddl's prometheus.yml gives it (`instance`, the node's
  cluster address and the exporter's port).
- Slurm, where the clock runs inside the allocation (the batch script ddl submits): the job's steps
  (`squeue --steps`), and every node's probe through one `srun --overlap` step.
Python 3 standard library only.
"""
import json
import os
import subprocess
import urllib.error
import urllib.parse
import urllib.request

GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"


def gpu_query(period):
    """The PromQL expression: each GPU's utilisation averaged over the last `period` seconds."""
    return "avg_over_time(%s[%ds])" % (GPU_UTIL, max(1, int(period)))


def host_of(instance):
    """The host of a scrape target "10.0.0.2:9400" or "[fd00::2]:9400"."""
    if instance.startswith("["):
        return instance[1:].split("]", 1)[0]
    return instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance


def parse_gpu_answer(text):
    """An instant query's answer -> {host: {"gpus": [percent per GPU, by the gpu label], "node": its node
    label (ddl's scrape config names each target's node)}}; raises ValueError with the reason where the
    answer is not a successful vector of numbers."""
    try:
        answer = json.loads(text)
    except ValueError as e:
        raise ValueError("not JSON: %s" % e)
    if not isinstance(answer, dict) or answer.get("status") != "success":
        what = answer if isinstance(answer, dict) else {}
        raise ValueError("status %s: %s" % (what.get("status", "?"), what.get("error", str(text)[:80])))
    data = answer.get("data") or {}
    if data.get("resultType") != "vector":
        raise ValueError("resultType %r, not a vector" % data.get("resultType"))
    by_host = {}
    for series in data.get("result") or []:
        labels, value = series.get("metric") or {}, series.get("value") or []
        if len(value) != 2 or not labels.get("instance"):
            raise ValueError("a series without instance or value: %r" % series)
        percent = float(value[1])  # "NaN" parses; a GPU that reports nothing is not busy
        host = by_host.setdefault(host_of(labels["instance"]), {"gpus": [], "node": labels.get("node", "")})
        if percent == percent:
            host["gpus"].append((labels.get("gpu", ""), percent))
    for host in by_host.values():
        host["gpus"] = [p for _, p in sorted(host["gpus"], key=lambda g: (len(g[0]), g[0]))]
    return by_host


def prometheus_gpus(url, period, timeout=10):
    """({host: {"gpus": [percent...], "node": name}}, None) from the Prometheus at `url`, or ({}, why) where
    it did not answer or answered with something else than GPU series."""
    q = urllib.parse.urlencode({"query": gpu_query(period)})
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/api/v1/query?" + q, timeout=timeout) as r:
            text = r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:  # 400/422/503 carry the reason in the same JSON form
        text = e.read().decode("utf-8", "replace")
    except (OSError, ValueError) as e:
        return {}, "Prometheus at %s does not answer: %s" % (url, e)
    try:
        gpus = parse_gpu_answer(text)
    except ValueError as e:
        return {}, "Prometheus at %s: %s" % (url, e)
    if not gpus:
        return {}, "Prometheus at %s has no %s series" % (url, GPU_UTIL)
    return gpus, None


def slurm_steps(job_id):
    """The job's steps other than its own batch and extern steps ("1234.0", ...), running or about to."""
    r = subprocess.run(["squeue", "-h", "--steps", "-j", job_id, "-o", "%i"], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0:
        raise OSError("squeue --steps: " + (r.stderr.strip() or "exit %d" % r.returncode))
    steps = [s.strip() for s in r.stdout.split()]
    return [s for s in steps if s.split(".", 1)[-1] not in ("batch", "extern", "interactive")]


def slurm_probe(job_id, nodes, probe):
    """Every node's probe output through one srun step inside the job: {node: text}, or raises OSError."""
    r = subprocess.run(["srun", "--jobid=" + job_id, "--overlap", "--nodes=%d" % nodes, "--ntasks=%d" % nodes,
                        "--ntasks-per-node=1", "--label", "/bin/sh", "-c", 'echo "@node $SLURMD_NODENAME"; ' + probe],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, SLURM_JOB_ID=job_id))
    if r.returncode != 0:
        raise OSError("srun probe: " + (r.stderr.strip()[-200:] or "exit %d" % r.returncode))
    by_task, names = {}, {}
    for line in r.stdout.splitlines():
        task, _, text = line.partition(": ")
        if text.startswith("@node "):
            names[task.strip()] = text[6:].strip()
        else:
            by_task[task.strip()] = by_task.get(task.strip(), "") + text + "\n"
    return {names.get(t, "task " + t): by_task.get(t, "") for t in set(names) | set(by_task)}
