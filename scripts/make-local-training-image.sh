#!/usr/bin/env bash
# Makes a training image for the local target without a registry: the Debian 12 node image that ddl
# builds for local.nodes_as: containers (localhost/ddl-node:bookworm-1, made by the first container
# deploy) plus OpenBLAS for the example trainer, committed as localhost/ddl-train:bookworm-1 (or $1).
# The bundled runtime is not copied in: the training container mounts the node's /opt/ddl (its NCCL backend
# loads the CUDA runtime and NCCL only when asked for, so a CPU image needs neither).
# For a self-contained GPU image built on an NGC base see docker/Dockerfile.
set -euo pipefail
image=${1:-localhost/ddl-train:bookworm-1}
base=${DDL_NODE_IMAGE:-localhost/ddl-node:bookworm-1}
podman=(podman --runtime runc)
if "${podman[@]}" image exists "$image"; then echo "$image is present"; exit 0; fi
"${podman[@]}" image exists "$base" ||
  { echo "no $base here: deploy any cluster with local.nodes_as: containers once (ddl builds it)" >&2; exit 2; }
tmp=ddl-train-build-$$
trap '"${podman[@]}" rm --force --ignore --time 0 "$tmp" >/dev/null 2>&1 || true' EXIT
# Host network for apt (podman's own networks need iptables here); limits podman may set on this machine.
"${podman[@]}" run --name "$tmp" --network host --ulimit nofile=8192:8192 --ulimit nproc=8192:8192 "$base" \
  sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends libopenblas0 &&
         apt-get clean && rm -rf /var/lib/apt/lists/*' >&2
"${podman[@]}" commit --quiet --change 'CMD ["sleep", "infinity"]' --change 'ENTRYPOINT []' "$tmp" "$image" >/dev/null
echo "$image built from $base"
