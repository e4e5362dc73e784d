#!/usr/bin/env bash
# What a queue of waiting jobs costs the master: one job runs (sleep), 50 more are queued behind it with
# ddl-run, and the supervisors' CPU time (utime + stime from /proc/PID/stat) is read over 10 s while they
# wait; prints the cores they use together and their summed resident memory, against the limit. Runs
# ddl-run on this machine with its queue in a temporary folder (no cluster, no root).
#
# Usage: bench/job_queue_idle.sh [DDL_RUN] [JOBS] [SECONDS]
#        (default: src/runtime/tools/ddl-run, 50 jobs, 10 s; exit 1 above the limit)
set -euo pipefail
ddl_run=${1:-$(cd "$(dirname "$0")/.." && pwd)/src/runtime/tools/ddl-run}
jobs=${2:-50}
seconds=${3:-10}
limit=0.05 # cores, for the whole queue
work=$(mktemp -d /tmp/ddl-queue-bench.XXXXXX)
export DDL_JOBS_DIR=$work/jobs
# The supervisors cancelled (each ends on TERM), then their folder removed once they are gone.
cleanup() {
  local pids p
  pids=$(cat "$work/pids" 2>/dev/null || true)
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  for p in $pids; do
    for _ in $(seq 50); do [ -e "/proc/$p" ] || break; sleep 0.1; done
  done
  rm -rf "$work" || true
}
trap cleanup EXIT
mkdir -p "$work/wd" "$DDL_JOBS_DIR"
echo "localhost slots=1" >"$work/hostfile"
q() { python3 "$ddl_run" --hostfile "$work/hostfile" --workdir "$work/wd" "$@" >/dev/null; }
q --name head -- sleep $((seconds * 3 + 30))
for i in $(seq "$jobs"); do q --name "q$i" -- true; done
# Every supervisor has started and recorded its pid.
for _ in $(seq 100); do
  python3 - "$DDL_JOBS_DIR" "$jobs" <<'PY' >"$work/pids" && break
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
pids = [json.load(open(os.path.join(d, j, "meta.json"))).get("pid") for j in os.listdir(d) if j.isdigit()]
sys.exit(1) if len([p for p in pids if p]) < n + 1 else print(" ".join(str(p) for p in pids))
PY
  sleep 0.2
done
sleep 2 # past their start-up
python3 - "$seconds" "$limit" "$jobs" $(cat "$work/pids") <<'PY'
import os, sys, time
seconds, limit, jobs, pids = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
tick = os.sysconf("SC_CLK_TCK")

def cpu():
    total = 0
    for p in pids:
        try:
            fields = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (proc(5), fields 14 and 15)
        except OSError:
            pass
    return total

def rss_kib():
    total = 0
    for p in pids:
        try:
            for line in open("/proc/%s/status" % p):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total

before, t0 = cpu(), time.time()
time.sleep(seconds)
used = (cpu() - before) / tick / (time.time() - t0)
print("%d queued jobs behind a running one, %d supervisors: %.3f cores while waiting (limit %.2f), "
      "%d MiB resident together" % (jobs, len(pids), used, limit, rss_kib() // 1024))
sys.exit(0 if used <= limit else 1)
PY
