#!/usr/bin/env bash
# Gradient compression through ddl's DDP hook under `ddl run` on 4 namespace nodes at 1 Gbit/s: one job
# trains scikit-learn's digits (ddl_torch.digits, Debian's python3-sklearn) once uncompressed and once with
# each compressor (fp16, PowerSGD rank 4, top-k 1%), from the same initial parameters. Every rank ends with
# the same parameters, accuracy on held-out images stays far above chance (10%), the bytes libddlcomm counted
# per step shrink as each compressor says, and training resumed from a mid-run checkpoint (model, optimizer
# and the compressor's memory) ends with the same parameters. A bad compression spec fails the job naming why.
# Then `ddl bench train --compression` on 1 and 2 nodes: ddl's PowerSGD and top-k beside PyTorch's PowerSGD hook.
source "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
"$py" -c 'import torch, sklearn' 2>/dev/null || fail "python3-torch/python3-sklearn missing (scripts/install-deps.sh installs them)"
spec cmp 4 "  bandwidth: 1gbit" "services:" "  nfs: {enabled: false}" "runtime:" "  interface: eth0"
ddl deploy cmp.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
ddl exec --cluster cmp -- test -f /opt/ddl/python/ddl_torch/digits.py || fail "ddl_torch.digits not installed with the runtime"

kinds=(none fp16 powersgd:rank=4 topk:ratio=0.01)
args=()
for k in "${kinds[@]}"; do args+=(--compression "$k"); done
ddl run --cluster cmp -x OMP_NUM_THREADS=1 -- "$py" -m ddl_torch.digits --comm ddl "${args[@]}" --steps 200 \
  --check-resume 100 --json >dig.out 2>&1 || { cat dig.out; fail "digits run"; }
for k in "${kinds[@]}"; do
  digests=$(grep -F " $k parameters " dig.out | awk '{print $NF}')
  [ "$(wc -l <<<"$digests")" = 4 ] || { cat dig.out; fail "$k: not 4 ranks reported their parameters"; }
  [ "$(sort -u <<<"$digests" | wc -l)" = 1 ] || { grep -F " $k parameters " dig.out; fail "$k: replicas ended with different parameters"; }
  [ "$(grep -cF " $k resumed from step 100: same parameters" dig.out)" = 4 ] ||
    { grep -F " $k resumed" dig.out; fail "$k: resuming from the checkpoint did not end with the same parameters"; }
done
grep '^\[0\] {' dig.out | sed 's/^\[0\] //' >dig.json
python3 - dig.json <<'PY' || { cat dig.out; fail "digits results"; }
import json, sys
r = {j["compression"]: j for j in map(json.loads, open(sys.argv[1]))}
assert sorted(r) == sorted(["none", "fp16", "powersgd:rank=4", "topk:ratio=0.01"]), r
for k, j in r.items():
    print(f"{k:16} accuracy {j['accuracy']:.4f} loss {j['loss']:.4f} {j['bytes_per_step']:8.0f} bytes/step")
    assert j["ranks"] == 4 and j["accuracy"] > 0.85, j
none = r["none"]["bytes_per_step"]
assert r["fp16"]["bytes_per_step"] * 2 == none, r
assert r["powersgd:rank=4"]["bytes_per_step"] < none / 4, r
assert r["topk:ratio=0.01"]["bytes_per_step"] < none / 10, r
PY
ok "digits on 4 ranks with each compressor: identical replicas, accuracy above 85%, fewer bytes per step, checkpoint resume exact"

ddl run --cluster cmp -x OMP_NUM_THREADS=1 -- "$py" -m ddl_torch.digits --compression powersgd:rank=0 --steps 1 \
  >bad.out 2>&1 && fail "powersgd:rank=0 accepted"
expect_in bad.out "rank must be a whole number from 1 to 64" "powersgd:rank=0: no reason"
ok "a bad compression spec fails the job with the reason"

ddl bench train --cluster cmp --framework pytorch --model resnet18 --image-size 32 --batch 4 --nodes 2 --steps 1 \
  --warmup 2 --comm ddl,gloo --compression powersgd:rank=4 --compression topk:ratio=0.01 --python "$py" \
  -x OMP_NUM_THREADS=1 --out bt >bt.out 2>bt.err || { cat bt.out bt.err; fail "bench train --compression"; }
expect_in bt.err "topk:ratio=0.01 with --comm gloo skipped: PyTorch has no top-k hook" "no skip line"
python3 - bt/train.json <<'PY' || { cat bt.out; fail "bench train --compression results"; }
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
got = sorted((r["comm"], r["compression"], r["nodes"]) for r in rows)
want = sorted((c, k, n) for c, k in [("ddl/tcp", "powersgd:rank=4"), ("ddl/tcp", "topk:ratio=0.01"),
                                     ("gloo", "powersgd:rank=4")] for n in (1, 2))
assert got == want, got
for r in rows:
    assert r["samples_per_s"] > 0 and r["iface_bytes_per_step"] is not None, r
    if r["comm"] == "gloo":
        assert r["bytes_per_step"] is None, r
    elif r["nodes"] == 2:
        # resnet18's 46.8 MB of gradients: compressed far below the ring allreduce's 46.8 MB per rank at 2 ranks.
        assert 0 < r["bytes_per_step"] < 4e6, r
PY
grep -q "set xtics 1" bt/train.gnuplot && grep -q "ideal" bt/train.gnuplot && grep -q "images/s" bt/train.gnuplot ||
  { cat bt/train.gnuplot; fail "chart: whole node ticks, the ideal line, images/s"; }
[ -s bt/train.png ] || fail "no chart"
ok "ddl bench train --compression: ddl's compressors beside PyTorch's PowerSGD hook on Gloo, bytes per step, chart"

ddl destroy -y cmp >x.log 2>&1 || { cat x.log; fail destroy; }
assert_gone cmp
