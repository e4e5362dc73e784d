#!/usr/bin/env bash
# Installs everything ddl needs to build, test and run its local target, from Debian's packages only.
# Both README commands start with this script; it is idempotent and quick when all is present.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libcurl4-openssl-dev libssh-dev libspdlog-dev
  catch2 libpugixml-dev libkainjow-mustache-dev libopenblas-dev
  openssh-server openssh-client iproute2 procps psmisc util-linux ansible-core iperf3 python3 bc clang-format
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
