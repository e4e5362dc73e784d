#!/usr/bin/env bash
# PyTorch DDP (Debian's python3-torch and python3-torchvision) under `ddl run` on 3 namespace nodes at
# 1 Gbit/s: examples/pytorch_ddp.py as it is (Gloo), then a torchvision resnet18 with Gloo and with ddl's
# DDP hook (gradients averaged by libddlcomm's TCP ring; also fp16-compressed). Every rank ends with the
# same parameters, the loss falls, and the hook's averaged gradients equal Gloo's within float tolerance.
source "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
"$py" -c 'import torch, torchvision' 2>/dev/null || fail "python3-torch/python3-torchvision missing (scripts/install-deps.sh installs them)"
spec pt 3 "  bandwidth: 1gbit" "services:" "  nfs: {enabled: false}" "runtime:" "  interface: eth0"
ddl deploy pt.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
ddl exec --cluster pt -- test -f /opt/ddl/python/ddl_torch/__init__.py || fail "ddl_torch not installed with the runtime"
example=$DDL_SOURCE_DIR/examples/pytorch_ddp.py

# run_ddp TAG ARGS...: the example over every slot; TAG.out holds its output.
run_ddp() {
  local tag=$1
  shift
  ddl run --cluster pt -x OMP_NUM_THREADS=1 -- "$py" "$example" "$@" >"$tag.out" 2>&1 || { cat "$tag.out"; fail "$tag run"; }
}
# same_parameters TAG: every rank printed the same parameter digest, three ranks in all.
same_parameters() {
  local n
  n=$(grep -c '\] rank [0-9] parameters ' "$1.out")
  [ "$n" = 3 ] || { cat "$1.out"; fail "$1: $n ranks reported their parameters"; }
  [ "$(grep '\] rank [0-9] parameters ' "$1.out" | awk '{print $NF}' | sort -u | wc -l)" = 1 ] ||
    { grep parameters "$1.out"; fail "$1: replicas ended with different parameters"; }
}
# loss_falls TAG: rank 0's last loss is below its first.
loss_falls() {
  local first last
  first=$(grep '^\[0\] step ' "$1.out" | head -1 | awk '{print $5}')
  last=$(grep '^\[0\] step ' "$1.out" | tail -1 | awk '{print $5}')
  python3 -c "import sys; sys.exit(0 if float('$last') < float('$first') * 0.8 else 1)" ||
    { cat "$1.out"; fail "$1: the loss did not fall ($first -> $last)"; }
  echo "$1: loss $first -> $last"
}

run_ddp mlp-gloo --steps 30
same_parameters mlp-gloo
loss_falls mlp-gloo
ok "examples/pytorch_ddp.py unchanged under ddl run: 3 ranks over Gloo, identical replicas, the loss falls"

common=(--model resnet18 --batch 8 --lr 0.02 --steps 6 --fixed-batch)
run_ddp resnet-gloo "${common[@]}" --save-grads "$WORK/gloo.pt"
run_ddp resnet-ddl "${common[@]}" --hook ddl --save-grads "$WORK/ddl.pt"
expect_in resnet-ddl.out '^\[0\] gradients through libddlcomm (tcp backend)' "the hook did not take over"
for t in resnet-gloo resnet-ddl; do
  same_parameters $t
  loss_falls $t
done
"$py" - "$WORK/gloo.pt" "$WORK/ddl.pt" <<'PY' || fail "the hook's averaged gradients differ from Gloo's beyond float tolerance"
import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
assert len(a) == len(b)
worst = max(((x - y).abs().max() / (x.abs().max() + 1e-12)).item() for x, y in zip(a, b))
print(f"resnet18's averaged gradients, ddl hook against Gloo: largest difference {worst:.2e} of the tensor's largest")
assert all(torch.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(a, b)), worst
PY
ok "resnet18 with ddl's DDP hook (libddlcomm, TCP ring): identical replicas, the loss falls, averaged gradients equal Gloo's within float tolerance"

run_ddp resnet-fp16 "${common[@]}" --hook ddl-fp16
same_parameters resnet-fp16
loss_falls resnet-fp16
ok "fp16-compressed gradients through the hook: identical replicas, the loss falls"

ddl bench train --cluster pt --framework pytorch --model resnet18 --image-size 32 --batch 8 --nodes 1..3 \
  --steps 3 --warmup 1 --comm ddl,gloo --python "$py" -x OMP_NUM_THREADS=1 --dataset-images 50000 --epochs 2 \
  --out bt >bt.out 2>bt.err || { cat bt.out bt.err; fail "bench train --framework pytorch"; }
[ "$(tail -n +2 bt/train.csv | wc -l)" = 6 ] || { cat bt/train.csv; fail "bench train rows"; }
python3 - bt/train.json <<'PY' || { cat bt.out; fail "bench train --framework pytorch results"; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["framework"] == "pytorch" and j["profile"] == "resnet18" and j["image_size"] == 32, j
rows = j["results"]
assert sorted({r["comm"] for r in rows}) == ["ddl/tcp", "gloo"], rows
assert sorted(r["nodes"] for r in rows) == [1, 1, 2, 2, 3, 3], rows
for r in rows:
    assert r["ranks"] == r["nodes"] and r["samples_per_s"] > 0, r
    assert abs(r["epoch_s"] - 50000 / r["samples_per_s"]) < 0.01 * r["epoch_s"] + 0.1, r
    assert abs(r["train_s"] - 2 * r["epoch_s"]) < 0.2, r
    assert r["efficiency"] == 1.0 if r["nodes"] == 1 else r["efficiency"] > 0, r
PY
expect_in bt.out "time-to-train: 50000 images per epoch x 2 epochs" "no time-to-train line"
[ -s bt/train.png ] || fail "no chart"
ddl bench train --cluster pt --framework pytorch --comm mpi >bad.out 2>&1 && fail "--comm mpi accepted"
expect_in bad.out "each must be ddl, gloo or nccl" "--comm mpi: no reason"
ddl bench train --cluster pt --model resnet18 >bad.out 2>&1 && fail "--model without --framework pytorch accepted"
expect_in bad.out "apply to --framework pytorch" "--model without pytorch: no reason"
ok "ddl bench train --framework pytorch: images/s per node count and communication (ddl hook, Gloo), efficiency, time-to-train, CSV, JSON, PNG"

ddl destroy -y pt >x.log 2>&1 || { cat x.log; fail destroy; }
assert_gone pt
