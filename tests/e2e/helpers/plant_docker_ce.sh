#!/bin/sh
# Run on a container node by test_roles_containers.sh: makes it look as a cloud GPU image with Docker CE
# does to apt and to the roles (AWS's Deep Learning Base AMI): dpkg knows docker-ce and containerd.io (as
# Docker's repository names them, https://docs.docker.com/engine/install/debian/), a docker.service unit
# exists, and /etc/docker/daemon.json has the nvidia runtime (as `nvidia-ctk runtime configure
# --runtime=docker` writes it). The packages are empty stand-ins built here; `remove` takes it all away.
set -eu
case "${1:-plant}" in
remove)
    dpkg --purge docker-ce containerd.io >/dev/null
    rm -f /etc/docker/daemon.json
    exit 0
    ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in "docker-ce 5:27.5.1-1~debian.12~bookworm" "containerd.io 1.7.25-1"; do
    name=${p% *} version=${p#* }
    mkdir -p "$work/$name/DEBIAN"
    printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: ddl tests <ddl@localhost>\nDescription: stand-in of Docker CE'"'"'s %s for test_roles_containers\n' \
        "$name" "$version" "$name" >"$work/$name/DEBIAN/control"
done
mkdir -p "$work/docker-ce/lib/systemd/system"
printf '[Unit]\nDescription=stand-in of Docker CE\n\n[Service]\nExecStart=/bin/sleep infinity\n' \
    >"$work/docker-ce/lib/systemd/system/docker.service"
for name in docker-ce containerd.io; do
    dpkg-deb --build --root-owner-group "$work/$name" "$work/$name.deb" >/dev/null
    dpkg -i "$work/$name.deb" >/dev/null
done
mkdir -p /etc/docker
printf '{\n    "runtimes": {\n        "nvidia": {\n            "args": [],\n            "path": "nvidia-container-runtime"\n        }\n    }\n}\n' \
    >/etc/docker/daemon.json
systemctl daemon-reload
