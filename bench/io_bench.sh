#!/usr/bin/env bash
# The storage study on 4 local namespace nodes (links shaped to RATE, default 1gbit as configs/local-4nodes.yaml;
# the shared folder on): `ddl bench io` read-and-decode, and read only, from the shared folder and from each
# node's own copy, files and tar shards, on 1, 2 and 4 nodes; then `ddl bench train --data shards`
# (ResNet-18 from the staged shards beside synthetic input). Prints the figures with the issue's goals and
# the limits that decide them on this machine. Needs root (namespaces, drop_caches).
# The shared folder of namespace nodes is a bind mount of the master's folder (no network: this kernel has
# no NFS client). With SHARE=sshfs (the default; Debian's sshfs) the workers mount the master's folder over
# SSH across the shaped links instead, as ddl's local container nodes do where the kernel has no nfsd: a
# real network file system served by the master. SHARE=bind keeps the bind mount.
#
# Usage: sudo bench/io_bench.sh [build-dir]       (default build; needs BUILD/src/ddl and BUILD/dist)
# Environment: IMAGES (default 2000; decode and train), READ_IMAGES (default 8000: the read-only sweep, whose
#              passes are otherwise too short to time), WORKERS (default 2), RATE (default 1gbit),
#              OUT_DIR (default build-bench/io), STEPS (default 6), BATCH (default 16), IMAGE_SIZE (default 224),
#              PARTS (default "decode read train": which sweeps to run; the goals are printed when all ran).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ddl="$PWD/$build/src/ddl"
py=/usr/bin/python3
images=${IMAGES:-2000}
workers=${WORKERS:-2}
rate=${RATE:-1gbit}
out=$(mkdir -p "${OUT_DIR:-build-bench/io}" && cd "${OUT_DIR:-build-bench/io}" && pwd)
[ "$(id -u)" = 0 ] || { echo "io_bench.sh: needs root" >&2; exit 2; }
[ -x "$ddl" ] || { echo "io_bench.sh: $ddl missing: build ddl first" >&2; exit 2; }
work=$(mktemp -d /tmp/ddl-iobench.XXXXXX)
read_images=${READ_IMAGES:-8000}
parts=" ${PARTS:-decode read train} "
cleanup() {
  "$ddl" --state-dir "$work/state" destroy -y iob >/dev/null 2>&1 || true
  rm -rf "$work" "/var/lib/ddl/data/synth-${images}x10-s0" "/var/lib/ddl/data/synth-${read_images}x10-s0"
}
trap cleanup EXIT
printf 'apiVersion: ddl/v1\nname: iob\ntarget: local\nlocal:\n  nodes: 4\n  bandwidth: %s\nruntime:\n  interface: eth0\n' \
  "$rate" >"$work/iob.yaml"
"$ddl" --state-dir "$work/state" deploy "$work/iob.yaml" >"$work/deploy.log" 2>&1 || { cat "$work/deploy.log"; exit 1; }
b() { "$ddl" --state-dir "$work/state" bench "$@"; }
if [ "${SHARE:-sshfs}" = sshfs ]; then
  command -v sshfs >/dev/null || { echo "io_bench.sh: SHARE=sshfs needs sshfs (apt-get install sshfs)" >&2; exit 2; }
  "$ddl" --state-dir "$work/state" exec --cluster iob --nodes worker1,worker2,worker3 -- \
    'umount /shared && sshfs -o reconnect,ServerAliveInterval=15 master:/shared /shared && test -d /shared' >/dev/null
  echo "# shared folder: the master's folder (a bind mount there), sshfs over the $rate links on worker1-3"
else
  echo "# shared folder: a bind mount of the master's folder on every node (no network)"
fi
common=(iob --classes 10 --python "$py" --nodes 1,2,4 --workers "$workers")
if [[ $parts == *" decode "* ]]; then
  echo "# read and decode (RandomResizedCrop 224, flip, normalize), page cache dropped before each run"
  b io "${common[@]}" --images "$images" --out "$out/decode" | tee "$out/decode.txt"
fi
if [[ $parts == *" read "* ]]; then
  echo "# read only (the storage's rate without decoding)"
  b io "${common[@]}" --images "$read_images" --no-decode --out "$out/read" | tee "$out/read.txt"
fi
[[ $parts == *" train "* ]] || exit 0
echo "# ResNet-18, batch ${BATCH:-16} per rank, 4 nodes: staged shards against synthetic input"
b train --cluster iob --framework pytorch --model resnet18 --image-size "${IMAGE_SIZE:-224}" --batch "${BATCH:-16}" \
  --nodes 4 --steps "${STEPS:-6}" --warmup 2 --python "$py" -x OMP_NUM_THREADS=1 --data shards --data-images "$images" \
  --data-workers 1 --out "$out/train" | tee "$out/train.txt"
python3 - "$out/decode/io.json" "$out/read/io.json" "$out/train/train.json" <<'PY'
import json, sys
dec, rd, tr = (json.load(open(p)) for p in sys.argv[1:])
def at(j, source, fmt, n):
    return next(r for r in j["results"] if (r["source"], r["format"], r["nodes"]) == (source, fmt, n))
print("# goals (4 nodes)")
for name, j in (("read and decode", dec), ("read only", rd)):
    loc, nfs = at(j, "local", "shards", 4), at(j, "shared", "shards", 4)
    sh, fi = at(j, "shared", "shards", 4), at(j, "shared", "files", 4)
    print(f"{name}: local/shared (shards) = {loc['images_per_s']:.0f}/{nfs['images_per_s']:.0f} images/s = "
          f"{loc['images_per_s'] / nfs['images_per_s']:.2f}x (goal >= 3x); shards/files on shared = "
          f"{sh['images_per_s']:.0f}/{fi['images_per_s']:.0f} = {sh['images_per_s'] / fi['images_per_s']:.2f}x (goal >= 2x)")
g = max(tr["input_gaps"], key=lambda g: g["nodes"])
print(f"ResNet-18 from staged shards, {g['nodes']} nodes: {g['samples_per_s']:.1f} images/s against {g['synthetic_samples_per_s']:.1f} "
      f"synthetic: {100 * g['gap']:.1f}% slower (goal <= 10%)")
PY
echo "# limits: $(nproc) cores for 4 nodes' decoding, reading and training (load average now:" \
  "$(cut -d' ' -f1-3 /proc/loadavg)); the 4 nodes' local copies are one folder of this machine's disk"
