#!/usr/bin/env bash
# The data path on 2 namespace nodes at 1 Gbit/s with the shared folder on: `ddl bench io` makes the
# bench dataset once on the master in the shared folder (python3 -m ddl_data), copies it to each node's
# /var/lib/ddl/data, reads it from both places in both forms (files, tar shards) through a PyTorch
# DataLoader on 1 and 2 nodes at once, and reports a table, CSV, JSON and a chart; `ddl bench train --data`
# trains resnet18 from the shards beside synthetic input and reports the gap. Tiny sizes: this checks the
# path, not the figures (bench/io_bench.sh measures them). On namespace nodes the shared folder is a bind
# mount of the master's folder and each node's /var/lib/ddl/data a folder of the cluster's state: both
# reads hit this machine's disk.
source "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
"$py" -c 'import torch, torchvision, PIL' 2>/dev/null || fail "python3-torch/python3-torchvision/python3-pil missing (scripts/install-deps.sh installs them)"
seed=$(($$ % 100000))
ds="synth-48x4-s$seed"
# Each namespace node's /var/lib/ddl/data is a folder of the cluster's state (removed with the cluster);
# earlier layouts kept it in this machine's /var/lib/ddl/data.
remove_copies() { rm -rf "/var/lib/ddl/data/$ds" /var/lib/ddl/data/"$ds".part.*; }
trap 'rc=$?; remove_copies; set +e; (exit $rc); cleanup' EXIT
spec bio 2 "  bandwidth: 1gbit" "runtime:" "  interface: eth0" "datasets:" \
  "  - {name: imgs, source: \"shared:ddl-data/$ds\", to: local, format: shards}" \
  "  - {name: raw, source: \"shared:ddl-data/$ds\", to: local}"
ddl deploy bio.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
ddl exec --cluster bio -- test -f /opt/ddl/python/ddl_data/loaders.py || fail "ddl_data not installed with the runtime"

io=(--images 48 --classes 4 --seed "$seed" --shards 4 --batch 8 --image-size 32 --python "$py")
ddl --output json bench io bio "${io[@]}" --workers 2 --nodes 2 --out bi --chart bi/chart.png >bi.json 2>bi.err ||
  { cat bi.json bi.err; fail "bench io"; }
expect_in bi.err "^bench io: 8 run(s) (2 source(s) x 2 format(s) x 1 worker count(s) x 2 node count(s)) over 48 images" "bench io did not say its plan"
[ "$(head -1 bi.err | cut -c1-10)" = "bench io: " ] || { cat bi.err; fail "bench io's plan is not its first line"; }
expect_in bi.err "nodes  2: .* images/s .* MB/s  \[8/8, about 0m00s left\]" "bench io's last run line has no progress"
expect_in bi.err "dataset $ds: generated on the master" "the dataset was not generated on the master"
expect_in bi.err "dataset $ds: copied from the shared folder on" "the dataset was not copied to the nodes"
[ -f "$WORK/state/bio/shared/ddl-data/$ds/ddl-data.json" ] || fail "no dataset in the shared folder"
[ "$(ddl exec --cluster bio --nodes worker1 -- sh -c "ls /var/lib/ddl/data/$ds/shards | wc -l")" = "[worker1] 4" ] ||
  fail "worker1's local copy lacks its 4 shards"
python3 - bi.json bi/io.json <<'PY' || { cat bi.json; fail "bench io results"; }
import json, sys
out, saved = (json.load(open(p)) for p in sys.argv[1:])
assert out == saved, "stdout and io.json differ"
rows = out["results"]
assert out["images"] == 48 and out["decode"] and "page cache dropped on every node" in out["cache"], out
assert sorted((r["source"], r["format"], r["nodes"]) for r in rows) == sorted(
    (s, f, n) for s in ("shared", "local") for f in ("files", "shards") for n in (1, 2)), rows
for r in rows:
    assert r["workers"] == 2 and r["images"] == 48 and r["images_per_s"] > 0 and r["mb_per_s"] > 0, r
    assert len(r["per_node"]) == r["nodes"] and all(p["images_per_s"] > 0 for p in r["per_node"]), r
    assert r["efficiency"] == 1.0 if r["nodes"] == 1 else r["efficiency"] > 0, r
PY
[ "$(tail -n +2 bi/io.csv | wc -l)" = 8 ] || { cat bi/io.csv; fail "io.csv rows"; }
[ -s bi/chart.png ] || fail "no chart at --chart"
ok "bench io: its plan first and each run's progress; dataset made once on the master and copied to the nodes; shared and local, files and shards, 1 and 2 nodes; JSON, CSV, chart"

ddl bench io bio "${io[@]}" --source local --format files --workers 0 --nodes 1 --no-decode --keep-cache \
  --out bt1 >bt1.out 2>bt1.err || { cat bt1.out bt1.err; fail "bench io text"; }
expect_in bt1.err "dataset $ds: present on the master" "the dataset was made again"
expect_in bt1.err "copied from the shared folder on 0 of 2" "the dataset was copied again"
expect_in bt1.out "^# read only (no decode)" "no read-only header"
expect_in bt1.out "page cache kept (--keep-cache)" "the table does not say the cache was kept"
expect_in bt1.out "^local   files          0      1 " "no table row"
ddl bench io bio "${io[@]}" --source local --format shards --workers 0 --nodes 1 --output csv >bc.csv 2>/dev/null ||
  fail "bench io --output csv"
[ "$(head -1 bc.csv | cut -d, -f1-4)" = "source,format,workers,nodes" ] && [ "$(wc -l <bc.csv)" = 2 ] ||
  { cat bc.csv; fail "bench io --output csv"; }
ok "bench io: the table (read only, cache kept), CSV on stdout; a second run finds the dataset in place"

ddl bench train --cluster bio --framework pytorch --model resnet18 --image-size 32 --batch 4 --nodes 1 --steps 2 \
  --warmup 1 --python "$py" -x OMP_NUM_THREADS=1 --data shards --data-images 48 --data-classes 4 --data-seed "$seed" --data-workers 1 --out tr \
  >tr.out 2>tr.err || { cat tr.out tr.err; fail "bench train --data"; }
python3 - tr/train.json <<'PY' || { cat tr.out; fail "bench train --data results"; }
import json, sys
j = json.load(open(sys.argv[1]))
inputs = sorted(r["input"] for r in j["results"])
assert inputs == ["shards, 1 workers", "synthetic"], inputs
assert j["data"]["format"] == "shards" and j["data"]["source"] == "local", j["data"]
assert len(j["input_gaps"]) == 1 and j["input_gaps"][0]["samples_per_s"] > 0, j["input_gaps"]
PY
expect_in tr.out "^# input pipeline, 1 node(s), batch 4" "no gap line"
expect_in tr.err "^bench train: 2 run(s) (1 rate(s) x 1 batch size(s) x 1 node count(s) x 1 round(s) x 2 series)" "no plan line up front"
expect_in tr.err "\[2/2, about 0m00s left\]" "no progress line per run"
ok "bench train --data shards: resnet18 from the staged shards beside synthetic input, the gap reported; its plan and progress said"

# Ctrl-C in a long bench (issue 52): its plan is said at once, and SIGINT ends it with 130, its ranks
# stopped. (A background job of a script starts with SIGINT ignored: the wrapper puts the default back.)
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
  "$DDL" --state-dir "$STATE" bench train --cluster bio --framework pytorch \
  --nodes 1 --steps 100000 --warmup 1 --python "$py" -x OMP_NUM_THREADS=1 --progress-every 1 --out ti \
  >ti.out 2>ti.err &
bench_pid=$!
# No GPU on this cluster: the defaults are sized for CPUs, and said.
wait_for 10 "the bench's plan line" grep -q "^bench train: 3 run(s)" ti.err
expect_in ti.err "^bench train: no GPU on cluster bio: sized for CPUs, resnet18 at 64 px, batch 8,16,32 (--model, --image-size, --batch choose others)$" "no CPU-sized defaults"
wait_for 120 "the bench's ranks" pgrep -f "[d]dl_torch.bench.*--steps 100000"
# A long run says its step (every second here with --progress-every 1), its images/s and the time left in it.
wait_for 120 "the run's step line" \
  grep -q "^    1 node(s), batch 8, ddl, none: step [0-9]*/100004, [0-9.]* images/s, about [0-9]*m[0-9][0-9]s left in this run" ti.err
kill -INT "$bench_pid"
rc=0
wait "$bench_pid" || rc=$?
[ "$rc" = 130 ] || { cat ti.out ti.err; fail "Ctrl-C in bench train exited $rc, not 130"; }
wait_for 30 "the interrupted bench's ranks to stop" sh -c '! pgrep -f "[d]dl_torch.bench.*--steps 100000"'
ok "bench train: CPU-sized defaults said, its plan line at once, a long run's step with images/s; Ctrl-C ends it with 130 and stops its ranks"

# A dataset of the spec, staged from the bench dataset in the shared folder: --data names it.
ddl data stage --cluster bio imgs >st.log 2>&1 || { cat st.log; fail "data stage imgs"; }
ddl bench train --cluster bio --framework pytorch --model resnet18 --image-size 32 --batch 4 --nodes 1 --steps 2 \
  --warmup 1 --python "$py" -x OMP_NUM_THREADS=1 --data imgs --data-workers 1 --out tn \
  >tn.out 2>tn.err || { cat tn.out tn.err; fail "bench train --data imgs"; }
python3 - tn/train.json <<'PY' || { cat tn.out; fail "bench train --data imgs results"; }
import json, sys
j = json.load(open(sys.argv[1]))
d = j["data"]
assert d["dataset"] == "imgs" and d["format"] == "shards" and d["path"] == "/var/lib/ddl/data/imgs", d
assert sorted(r["input"] for r in j["results"]) == ["shards, 1 workers", "synthetic"], j["results"]
PY
ddl bench train --cluster bio --framework pytorch --data raw >bad.out 2>&1 && fail "--data raw (no format) accepted"
expect_in bad.out "the dataset sets no format; add format: files" "--data raw: no reason"
ddl bench train --cluster bio --framework pytorch --data nosuch >bad.out 2>&1 && fail "--data nosuch accepted"
expect_in bad.out "neither files, shards nor a dataset of cluster bio (it has: imgs, raw)" "--data nosuch: no reason"
ok "bench train --data NAME trains from the spec's dataset staged by ddl data stage; no format or no such dataset refused"

ddl bench io bio --format tfrecord >bad.out 2>&1 && fail "--format tfrecord accepted"
expect_in bad.out "each must be files or shards" "--format tfrecord: no reason"
ddl bench train --cluster bio --data shards >bad.out 2>&1 && fail "--data without pytorch accepted"
expect_in bad.out "apply to --framework pytorch" "--data without pytorch: no reason"
ok "bench io and bench train --data refuse bad options, naming them"

ddl destroy -y bio >x.log 2>&1 || { cat x.log; fail destroy; }
assert_gone bio
