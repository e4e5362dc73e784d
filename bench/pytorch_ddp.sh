#!/usr/bin/env bash
# PyTorch DDP with ddl's communication hook (gradients over libddlcomm's TCP ring, plain or compressed)
# against DDP on Gloo with PyTorch's own hooks, side by side on one local cluster of namespace nodes: for each
# link rate, `ddl bench train --framework pytorch` over the node counts, ROUNDS rounds per point running every
# (comm, compression) pair in turn (so a drift on the machine hits all), the same model, batch and steps; the
# median run is kept. Prints images/s, MB sent per step (libddlcomm's counter; the interface's for Gloo) and
# efficiency, and writes train.csv/json/png per rate under OUT. Then the convergence check: scikit-learn's
# digits trained the same steps on all nodes with each hook (ddl_torch.digits), accuracy and loss side by side.
# Needs root and Debian's python3-torch, python3-torchvision, python3-sklearn.
#
#   bench/pytorch_ddp.sh    (NODES=1,2,4 RATES="1gbit 100mbit" ROUNDS=2 MODEL=resnet18 BATCH=16 IMAGE=64
#                            STEPS=5 WARMUP=2 COMPRESSIONS="none fp16 powersgd:rank=4 topk:ratio=0.01"
#                            DIGITS_STEPS=300 (0: no digits check) OUT=bench-pytorch)
# DDL: the ddl binary (default build-ci/src/ddl, else build/src/ddl).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ddl_bin=${DDL:-}
[ -n "$ddl_bin" ] || for b in "$root/build-ci/src/ddl" "$root/build/src/ddl"; do [ -x "$b" ] && { ddl_bin=$b; break; }; done
[ -x "${ddl_bin:-}" ] || { echo "pytorch_ddp.sh: no ddl binary (build first or set DDL)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "pytorch_ddp.sh: needs root (the local target)" >&2; exit 2; }
/usr/bin/python3 -c 'import torch, torchvision, sklearn' ||
  { echo "pytorch_ddp.sh: install python3-torch python3-torchvision python3-sklearn" >&2; exit 2; }
nodes=${NODES:-1,2,4}
rates=${RATES:-1gbit 100mbit}
rounds=${ROUNDS:-2}
model=${MODEL:-resnet18}
batch=${BATCH:-16}
image=${IMAGE:-64}
steps=${STEPS:-5}
warmup=${WARMUP:-2}
compressions=${COMPRESSIONS:-none fp16 powersgd:rank=4 topk:ratio=0.01}
digits_steps=${DIGITS_STEPS:-300}
out=${OUT:-bench-pytorch}
max_nodes=$(tr ',' '\n' <<<"$nodes" | sort -n | tail -1)
work=$(mktemp -d /tmp/ddl-bench-pt.XXXXXX)
state=$work/state
name=bpt
cleanup() { "$ddl_bin" --state-dir "$state" destroy -y "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
first_rate=${rates%% *}
printf 'apiVersion: ddl/v1\nname: %s\ntarget: local\nlocal:\n  nodes: %s\n  bandwidth: %s\nservices:\n  nfs: {enabled: false}\nruntime:\n  interface: eth0\n' \
  "$name" "$max_nodes" "$first_rate" >"$work/$name.yaml"
"$ddl_bin" --state-dir "$state" deploy "$work/$name.yaml" >"$work/deploy.log" 2>&1 || { cat "$work/deploy.log"; exit 1; }
echo "# PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__version__)'), $model ${image}x$image, batch $batch per rank," \
  "$steps steps (+$warmup warm-up), median of $rounds alternating rounds, $(nproc) cores shared by all ranks"
comp_args=()
for c in $compressions; do comp_args+=(--compression "$c"); done
mkdir -p "$out"
for rate in $rates; do
  "$ddl_bin" --state-dir "$state" bench train --cluster "$name" --framework pytorch --python /usr/bin/python3 \
    --model "$model" --image-size "$image" --batch "$batch" --steps "$steps" --warmup "$warmup" --nodes "$nodes" \
    --bandwidths "$rate" --rounds "$rounds" --comm ddl,gloo "${comp_args[@]}" -x OMP_NUM_THREADS=1 \
    --out "$out/$rate" 2>"$work/bench.err" || { cat "$work/bench.err"; exit 1; }
done

[ "$digits_steps" -gt 0 ] || exit 0
echo
echo "# digits (scikit-learn), $max_nodes ranks, $digits_steps steps, batch 32 per rank: ddl's hooks, then Gloo with PyTorch's"
ddl_args=()
for c in $compressions; do ddl_args+=(--compression "$c"); done
"$ddl_bin" --state-dir "$state" run --cluster "$name" -x OMP_NUM_THREADS=1 -- /usr/bin/python3 -m ddl_torch.digits \
  --comm ddl "${ddl_args[@]}" --steps "$digits_steps" >"$work/digits.out" 2>&1 || { cat "$work/digits.out"; exit 1; }
"$ddl_bin" --state-dir "$state" run --cluster "$name" -x OMP_NUM_THREADS=1 -- /usr/bin/python3 -m ddl_torch.digits \
  --comm gloo --compression none --compression fp16 --compression powersgd:rank=4 \
  --steps "$digits_steps" >>"$work/digits.out" 2>&1 || { cat "$work/digits.out"; exit 1; }
grep '^\[0\] digits on' "$work/digits.out" | sed 's/^\[0\] //'
