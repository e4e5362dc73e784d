#!/usr/bin/env bash
# PyTorch DDP with ddl's communication hook (gradients over libddlcomm's TCP ring) against DDP on Gloo,
# side by side on the same local cluster: for each node count, one cluster of that many namespace nodes
# with links shaped to RATE, then ROUNDS rounds alternating Gloo and the hook (so a drift on the machine
# hits both), the same model, batch and steps. Prints images/s and ms/step per run, and per node count the
# medians and the hook's ratio to Gloo. Needs root and Debian's python3-torch + python3-torchvision.
#
#   bench/pytorch_ddp.sh            (NODES="2 3 4" ROUNDS=3 RATE=1gbit MODEL=resnet18 BATCH=16 STEPS=12)
# DDL: the ddl binary (default build-ci/src/ddl, else build/src/ddl).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ddl_bin=${DDL:-}
[ -n "$ddl_bin" ] || for b in "$root/build-ci/src/ddl" "$root/build/src/ddl"; do [ -x "$b" ] && { ddl_bin=$b; break; }; done
[ -x "${ddl_bin:-}" ] || { echo "pytorch_ddp.sh: no ddl binary (build first or set DDL)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "pytorch_ddp.sh: needs root (the local target)" >&2; exit 2; }
/usr/bin/python3 -c 'import torch, torchvision' || { echo "pytorch_ddp.sh: install python3-torch python3-torchvision" >&2; exit 2; }
nodes_list=${NODES:-2 3 4}
rounds=${ROUNDS:-3}
rate=${RATE:-1gbit}
model=${MODEL:-resnet18}
batch=${BATCH:-16}
steps=${STEPS:-12}
work=$(mktemp -d /tmp/ddl-bench-pt.XXXXXX)
state=$work/state
name=
cleanup() { [ -n "$name" ] && "$ddl_bin" --state-dir "$state" destroy -y "$name" >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
results=$work/results.txt
echo "# PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), $model, batch $batch per rank, $steps steps (2 warm-up), links $rate, $(nproc) cores"
printf '%-6s %-5s %-6s %12s %10s %s\n' nodes round comm images/s ms/step load
for n in $nodes_list; do
  name=bpt$n
  printf 'apiVersion: ddl/v1\nname: %s\ntarget: local\nlocal:\n  nodes: %s\n  bandwidth: %s\nservices:\n  nfs: {enabled: false}\nruntime:\n  interface: eth0\n' \
    "$name" "$n" "$rate" >"$work/$name.yaml"
  "$ddl_bin" --state-dir "$state" deploy "$work/$name.yaml" >"$work/deploy.log" 2>&1 || { cat "$work/deploy.log"; exit 1; }
  for r in $(seq 1 "$rounds"); do
    for comm in gloo ddl; do
      hook=none
      [ $comm = ddl ] && hook=ddl
      out=$work/run.out
      "$ddl_bin" --state-dir "$state" run --cluster "$name" -x OMP_NUM_THREADS=1 -- /usr/bin/python3 \
        "$root/examples/pytorch_ddp.py" --model "$model" --batch "$batch" --steps "$steps" --lr 0.01 --hook $hook \
        >"$out" 2>&1 || { cat "$out"; exit 1; }
      line=$(grep '^\[0\] throughput ' "$out")
      ips=$(echo "$line" | awk '{print $3}')
      ms=$(echo "$line" | awk '{print $5}')
      printf '%-6s %-5s %-6s %12s %10s %s\n' "$n" "$r" "$comm" "$ips" "$ms" "$(cut -d' ' -f1 /proc/loadavg)"
      echo "$n $comm $ips $ms" >>"$results"
    done
  done
  "$ddl_bin" --state-dir "$state" destroy -y "$name" >/dev/null 2>&1
  name=
done
echo
echo "# medians: nodes, Gloo images/s, hook images/s, hook/Gloo"
python3 - "$results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for n in sorted({int(r[0]) for r in rows}):
    g = statistics.median(float(r[2]) for r in rows if int(r[0]) == n and r[1] == "gloo")
    d = statistics.median(float(r[2]) for r in rows if int(r[0]) == n and r[1] == "ddl")
    print(f"{n:<6} {g:10.1f} {d:10.1f} {d / g:6.2f}")
PY
