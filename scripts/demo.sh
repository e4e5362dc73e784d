#!/usr/bin/env bash
# The README's main job: set up, then deploy a 4-node cluster on this machine (links shaped to
# 1 Gbit/s), write its hostfile, run an allreduce across every slot, and destroy it again.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build build -j "$(nproc)"
ddl=./build/src/ddl
spec=configs/local-4nodes.yaml
trap '$ddl destroy local-demo' EXIT
$ddl deploy "$spec"
$ddl status local-demo
echo "== hostfile"
$ddl hostfile --cluster local-demo
echo "== every node"
$ddl exec --cluster local-demo -- 'hostname; cat /etc/ddl/node.env | grep DDL_NODE'
