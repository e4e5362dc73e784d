#!/bin/sh
# ddl-train-bench on 4 local nodes with links shaped to RATE: ResNet-50 at per-rank batch 32, 64, 96,
# then --fused-vs-single. Needs root. Nodes as in bench/nodes.sh.
#
# Usage: bench/train_bench.sh [BUILD_DIR]          (default: build; needs BUILD_DIR/dist/bin/ddl-train-bench)
# Environment: RATE (default 1gbit), PROFILE (default resnet50), BATCHES (default "32 64 96"),
#              STEPS (default 5), WARMUP (default 1), OUT_DIR (default build-bench/train).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rate=${RATE:-1gbit}
profile=${PROFILE:-resnet50}
steps=${STEPS:-5}
warmup=${WARMUP:-1}
out=${OUT_DIR:-$root/build-bench/train}
n=4
bench_bin=$build/dist/bin/ddl-train-bench
[ "$(id -u)" = 0 ] || { echo "train_bench.sh: needs root (network namespaces, tc)" >&2; exit 2; }
[ -x "$bench_bin" ] || { echo "train_bench.sh: $bench_bin missing: build ddl first" >&2; exit 2; }

. "$root/bench/nodes.sh"
work=$(mktemp -d /tmp/bb_train.XXXXXX)
cleanup() {
    bb_nodes_down $n
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bb_nodes_up $n "$rate"
mkdir -p "$out"
: >"$out/results.jsonl"

port=29950
for batch in ${BATCHES:-32 64 96}; do
    port=$((port + 1))
    echo "# $profile, batch $batch per rank, $n ranks at $rate"
    bb_ddl_ranks $n $port "$work" "$bench_bin" --profile "$profile" --batch "$batch" --steps "$steps" \
        --warmup "$warmup" --json
    cat "$work/rank.0" | tee -a "$out/results.jsonl"
done
port=$((port + 1))
echo "# $profile, --fused-vs-single"
bb_ddl_ranks $n $port "$work" "$bench_bin" --fused-vs-single --profile "$profile" --steps "$steps" \
    --warmup "$warmup" --json
cat "$work/rank.0" | tee -a "$out/results.jsonl"

python3 - "$out/results.jsonl" <<'PY' | tee "$out/table.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
train = [r for r in rows if "mode" not in r]
print("| profile | ranks | batch/rank | step (s) | compute (s) | comm exposed (s) | exposed share | samples/s | samples/s/rank |")
print("|---|---|---|---|---|---|---|---|---|")
for r in train:
    print(f"| {r['profile']} | {r['ranks']} | {r['batch']} | {r['step_s']:.3f} | {r['compute_s']:.3f} | "
          f"{r['comm_exposed_s']:.3f} | {100 * r['comm_exposed_s'] / r['step_s']:.0f}% | "
          f"{r['samples_per_s']:.1f} | {r['samples_per_s_rank']:.1f} |")
for r in rows:
    if r.get("mode") == "fused-vs-single":
        print(f"\n| {r['profile']}: {r['tensors']} tensors, {r['bytes']} bytes, {r['ranks']} ranks | seconds |\n|---|---|")
        print(f"| fused allreduce of all tensors (FusionQueue) | {r['fused_s']:.4f} |")
        print(f"| one allreduce of the same bytes | {r['single_s']:.4f} |")
        print(f"| ratio fused / single (target ≤ 1.10) | {r['ratio']:.3f} |")
PY
