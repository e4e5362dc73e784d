#!/usr/bin/env bash
# `ddl sync` of an unchanged workdir: 1 GiB in 10 000 files (100 folders of 100 files of 100 KiB, plus one
# 24 MiB file), sent once at deploy to a 2-node local cluster, then synced again; prints the second sync's
# wall seconds (rsync's quick check: sizes and times only, nothing sent). Needs root.
#
# Usage: bench/sync_unchanged.sh [DDL]   (default: build-dev/src/ddl, else build/src/ddl)
set -euo pipefail
# shellcheck source=ddl_local.sh
. "$(dirname "$0")/ddl_local.sh" ddl-sync-bench "${1:-}"
trap 'ddl destroy -y syncb >/dev/null 2>&1 || true; rm -rf "$work" /var/lib/ddl/jobs/syncb /var/lib/ddl/sync/syncb.done' EXIT
mkdir -p "$work/tree"
python3 - "$work/tree" <<'PY'
import os, sys
root = sys.argv[1]
block = os.urandom(100 * 1024)
for d in range(100):
    os.makedirs(os.path.join(root, "d%03d" % d))
    for f in range(100 if d < 99 else 99):
        with open(os.path.join(root, "d%03d" % d, "f%03d.bin" % f), "wb") as out:
            out.write(block)
with open(os.path.join(root, "big.bin"), "wb") as out:
    out.write(os.urandom(24 * 1024 * 1024))
PY
printf 'apiVersion: ddl/v1\nname: syncb\ntarget: local\nlocal: {nodes: 2}\nworkdir: tree\n' >"$work/syncb.yaml"
echo "tree: $(find "$work/tree" -type f | wc -l) files, $(du -sm "$work/tree" | cut -f1) MiB"
start=$(date +%s.%N)
ddl deploy "$work/syncb.yaml" >"$work/deploy.log" 2>&1 || { cat "$work/deploy.log"; exit 1; }
echo "deploy (with the first sync): $(echo "$(date +%s.%N) - $start" | bc) s; $(grep 'workdir synced' "$work/deploy.log" | sed 's/^[0-9:]* //')"
for i in 1 2 3; do
  start=$(date +%s.%N)
  ddl sync syncb >"$work/sync.log" 2>&1 || { cat "$work/sync.log"; exit 1; }
  echo "second sync #$i: $(echo "$(date +%s.%N) - $start" | bc) s wall; $(sed 's/^[0-9:]* //' "$work/sync.log")"
done
