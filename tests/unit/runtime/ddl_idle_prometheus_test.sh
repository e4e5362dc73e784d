#!/usr/bin/env bash
# The idle clock's GPU source where monitoring is on, against a real Prometheus (Debian's prometheus
# package) scraping the DCGM exporter's stand-in (tests/fakes/dcgm_exporter.py, which names what it
# follows): ddl-idle's query reads each GPU's utilisation averaged over the period, a tick records the
# node's source as "dcgm" and a GPU at 90 % as busy; a Prometheus without the series, and one that does
# not answer, leave the node to the ssh probe with a note of why.
set -euo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
command -v prometheus >/dev/null || { echo "prometheus missing (scripts/install-deps.sh installs it)"; exit 1; }
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

printf '90\n0\n' >"$work/gpus"
python3 "$src/tests/fakes/dcgm_exporter.py" --port-file "$work/exporter.port" --gpus "$work/gpus" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/exporter.port" ] && break; sleep 0.1; done
exporter=$(cat "$work/exporter.port")
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: dcgm
    static_configs:
      - targets: ["127.0.0.1:$exporter"]
        labels:
          node: "master"
YAML
promtool check config "$work/prometheus.yml" >/dev/null || fail "promtool refuses the test's configuration"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
url="http://127.0.0.1:$prom_port"
q() { python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import ddl_idle_sources as s, json
print(json.dumps(s.prometheus_gpus(sys.argv[2], int(sys.argv[3]))))' "$src/src/runtime/tools" "$@"; }
ans=""
for _ in $(seq 100); do
  ans=$(q "$url" 5 2>/dev/null) && grep -q '"gpus": \[90.0, 0.0\]' <<<"$ans" && break
  sleep 0.2
done
grep -q '^\[{"127.0.0.1": {"gpus": \[90.0, 0.0\], "node": "master"}}, null\]$' <<<"$ans" || { tail "$work/prometheus.log"; fail "query: $ans"; }
echo "ok - the query reads each GPU's average over the period from Prometheus, per node, in GPU order"

# One tick of the clock on this machine: its GPUs come from Prometheus (the exporter's target is one of
# this machine's addresses), nothing else is probed for them.
export DDL_IDLE_ENV=/nonexistent DDL_IDLE_RECORD="$work/idle.json" DDL_IDLE_PERIOD=5
DDL_IDLE_PROMETHEUS=$url python3 "$src/src/runtime/tools/ddl-idle" tick >"$work/tick.out" ||
  { cat "$work/tick.out"; fail "tick"; }
python3 - "$work/idle.json" "$(hostname)" <<'PY' || { cat "$work/tick.out"; fail "the tick's record"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["source"][sys.argv[2]] == "dcgm", r
assert "%s: GPU utilisation 90%% (above 10%%)" % sys.argv[2] in r["busy"], r
assert "source_note" not in r, r
PY
echo "ok - a tick records the node's source as dcgm and its GPU at 90 % as busy"

# Prometheus without the series (another metric name asked of it), then no Prometheus at all: the probe.
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import ddl_idle_sources as s
s.GPU_UTIL = "DCGM_FI_DEV_NO_SUCH_COUNTER"; g, note = s.prometheus_gpus(sys.argv[2], 5)
assert g == {} and "has no DCGM_FI_DEV_NO_SUCH_COUNTER series" in note, (g, note)' "$src/src/runtime/tools" "$url" ||
  fail "a Prometheus without the series"
DDL_IDLE_PROMETHEUS="http://127.0.0.1:$(free_port)" python3 "$src/src/runtime/tools/ddl-idle" tick >"$work/tick2.out" ||
  { cat "$work/tick2.out"; fail "tick without Prometheus"; }
python3 - "$work/idle.json" "$(hostname)" <<'PY' || { cat "$work/tick2.out"; fail "the fallback's record"; }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["source"][sys.argv[2]] in ("nvidia-smi", "load"), r
assert "does not answer" in r["source_note"], r
PY
echo "ok - without the series or without Prometheus the node is probed (nvidia-smi or load) and the record says why"
