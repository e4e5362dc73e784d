#!/usr/bin/env bash
# Installs everything ddl needs to build, test and run its local target, from Debian's packages only.
# Both README commands start with this script; it is idempotent and quick when all is present.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libcurl4-openssl-dev libssh-dev libspdlog-dev
  catch2 libpugixml-dev libkainjow-mustache-dev libopenblas-dev libssl-dev
  openssh-server openssh-client iproute2 procps psmisc util-linux ansible-core ansible-mitogen ansible-lint iperf3 python3 python3-aiosmtpd libxml2-utils openssl gnuplot-nox bc clang-format clang-tidy
  clang libclang-rt-14-dev
  slurmctld slurmd slurm-client munge
  openmpi-bin mpich
  python3-torch python3-torchvision python3-sklearn python3-pil python3-numpy
  podman runc netavark debootstrap apt-cacher-ng tar
  rsync python3-yaml python3-pip
  iptables
  prometheus
)
missing=()
sudo_cmd=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
# Node.js runs the Terraform module check (@cdktf/hcl2json). Some images ship NodeSource's nodejs,
# which bundles npm and conflicts with Debian's npm package: install only what is really absent.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y --no-install-recommends nodejs npm
fi
