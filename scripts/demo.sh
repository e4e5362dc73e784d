#!/usr/bin/env bash
# The README's main job: set up, then deploy a 4-node cluster on this machine (links shaped to
# 1 Gbit/s), write its hostfile, run an allreduce across every slot, and destroy it again.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# ddl and the runtime it installs on the nodes, nothing else (no test programs), as one unity build like the
# CI presets: the demo preset (CMakePresets.json). DDL_BUILD_DIR=DIR uses the ddl already built there as it
# is (e.g. build-ci), without building.
if [ -z "${DDL_BUILD_DIR:-}" ]; then
  echo "== building ddl and its runtime first (build-demo/): up to a quarter of an hour on 2 cores the first time, seconds after"
  cmake --preset demo >/dev/null
  t0=$SECONDS
  cmake --build build-demo -j "$(nproc)"
  echo "   built in $((SECONDS - t0)) s"
  ddl=./build-demo/src/ddl
else
  ddl=$DDL_BUILD_DIR/src/ddl
  [ -x "$ddl" ] || { echo "DDL_BUILD_DIR=$DDL_BUILD_DIR: no ddl built there ($ddl)" >&2; exit 2; }
  echo "== using $ddl"
fi
spec=configs/local-4nodes.yaml
trap '"$ddl" destroy -y local-demo' EXIT  # destroy runs also when a step fails
"$ddl" deploy "$spec"
"$ddl" status local-demo
echo "== hostfile"
"$ddl" hostfile --cluster local-demo
echo "== every node"
"$ddl" exec --cluster local-demo -- 'hostname; grep DDL_NODE /etc/ddl/node.env'
echo "== data-parallel training (MLP, gradients averaged with libddlcomm): the loss from the first step to the last"
"$ddl" run --cluster local-demo -- mlp_trainer --steps 20 | grep '^\[0\]' | sed -n '1p;5p;10p;15p;$p'
echo "== allreduce across every slot"
"$ddl" bench allreduce --cluster local-demo --sizes 1MiB:64MiB --iters 5
