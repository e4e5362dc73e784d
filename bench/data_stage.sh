#!/usr/bin/env bash
# `ddl data stage` of 200 MB in 2000 files (20 folders of 100 files of 100 kB, random bytes) to a 4-node
# local cluster (namespace nodes, each with its own /var/lib/ddl/data): to: local (4 copies, one rsync per
# node at once) and to: shared (one copy), staged the first time, again with nothing changed, and with
# --verify (every file of the source and of every copy hashed again). Prints each stage's wall seconds and
# what it sent and hashed. Needs root.
#
# Usage: bench/data_stage.sh [DDL]   (default: build-dev/src/ddl, else build/src/ddl)
set -euo pipefail
# shellcheck source=ddl_local.sh
. "$(dirname "$0")/ddl_local.sh" ddl-data-bench "${1:-}"
trap 'ddl destroy -y datab >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
python3 - "$work/set" <<'PY'
import os, sys
for d in range(20):
    os.makedirs(os.path.join(sys.argv[1], "c%02d" % d))
    for f in range(100):
        with open(os.path.join(sys.argv[1], "c%02d" % d, "%03d.jpg" % f), "wb") as out:
            out.write(os.urandom(100 * 1000))
PY
printf 'apiVersion: ddl/v1\nname: datab\ntarget: local\nlocal: {nodes: 4}\ndatasets:\n  - {name: set, source: set, to: local}\n  - {name: set_shared, source: set, to: shared}\n' >"$work/datab.yaml"
echo "set: $(find "$work/set" -type f | wc -l) files, $(du -sm "$work/set" | cut -f1) MiB; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
ddl deploy "$work/datab.yaml" >"$work/deploy.log" 2>&1 || { cat "$work/deploy.log"; exit 1; }
stage() { # NAME LABEL [--verify]
  local start
  start=$(date +%s.%N)
  ddl --output json data stage datab "$1" ${3:-} >"$work/s.json" 2>"$work/s.log" || { cat "$work/s.log"; exit 1; }
  python3 - "$work/s.json" "$2" "$(echo "$(date +%s.%N) - $start" | bc)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["datasets"][0]
n = d["nodes"]
print("%-28s %6.2f s wall  %d node(s)  sent %5d files %7.1f MB  hashed %5d (source %d)  sent again %d" % (
    sys.argv[2], float(sys.argv[3]), len(n), sum(x["sent_files"] for x in n),
    sum(x["sent_bytes"] for x in n) / 1e6, sum(x["hashed"] for x in n), d["source_hashed"],
    sum(x["resent"] for x in n)))
PY
}
stage set "to: local, first"
stage set "to: local, again"
stage set "to: local, --verify" --verify
stage set_shared "to: shared, first"
stage set_shared "to: shared, again"
