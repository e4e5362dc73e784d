#!/usr/bin/env bash
# Builds the local target's container node image (localhost/ddl-node:bookworm-1) ahead of the e2e suites, the
# way a user's first `local.nodes_as: containers` deploy does: `ddl deploy --only render`, then `--only
# provision`, of a one-node container cluster (debootstrap through the cluster's apt proxy, which also fills
# the apt cache the container suites share), then `ddl destroy -y`. scripts/test.sh runs it in the background while the unit stages run.
# Usage: scripts/node-image.sh DDL_BINARY [WORK_DIR]. Quick when the image is present (provision finds it).
set -euo pipefail
ddl_bin=$1
work=${2:-$(mktemp -d /tmp/ddl-node-image.XXXXXX)}
mkdir -p "$work"
cd "$work"
name=ddl-node-image-$$
cat >"$name.yaml" <<SPEC
apiVersion: ddl/v1
name: $name
target: local
local:
  nodes: 1
  nodes_as: containers
SPEC
ddl() { "$ddl_bin" --state-dir "$work/state" "$@"; }
trap 'ddl destroy "$name" -y >destroy.log 2>&1 || cat destroy.log >&2' EXIT
ddl deploy "$name.yaml" --only render -y
ddl deploy "$name.yaml" --only provision -y
