#!/usr/bin/env bash
# Every host:port (and host:path) the monitoring and nfs_client roles write names an IPv6 address in
# brackets, as its reader requires (RFC 3986, section 3.2.2, for the listen addresses and scrape targets;
# Docker's `-p [address]:port:port`; nfs(5) and sshfs for server:path), and an IPv4 one as it is:
# tests/ansible/hostport.yml renders the templates for one node of each. Prometheus's own parser
# (promtool check config) reads the scrape configuration where it is installed.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/inventory.yml" <<'END'
all:
  children:
    master:
      hosts:
        n6: {ddl_cluster_address: "fdd1:0:0:1::2", ddl_nvidia_gpus: ["0000:17:00.0"], ddl_share_master: n6, ddl_shared_fs_used: nfs}
    workers:
      hosts:
        n4: {ddl_cluster_address: "10.1.0.3", ddl_nvidia_gpus: ["0000:17:00.0"], ddl_share_master: n6}
END
ANSIBLE_ROLES_PATH="$root/playbooks/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_STDOUT_CALLBACK=default \
    ansible-playbook -i "$work/inventory.yml" -e ansible_python_interpreter=/usr/bin/python3 -e "ddl_out=$work" \
    "$root/tests/ansible/hostport.yml" >"$work/log" 2>&1 || { cat "$work/log"; exit 1; }
failed=0
expect() { # FILE TEXT
    if grep -qF -- "$2" "$work/$1"; then echo "ok: $1 has $2"; else echo "FAIL: $1 lacks $2:"; cat "$work/$1"; failed=1; fi
}
expect n6.prometheus-node-exporter.default 'ARGS="--web.listen-address=[fdd1:0:0:1::2]:9100"'
expect n4.prometheus-node-exporter.default 'ARGS="--web.listen-address=10.1.0.3:9100"'
expect n6.ddl-dcgm-exporter.service ' -p [fdd1:0:0:1::2]:9400:9400 '
expect n4.ddl-dcgm-exporter.service ' -p 10.1.0.3:9400:9400 '
for t in '"[fdd1:0:0:1::2]:9100"' '"10.1.0.3:9100"' '"[fdd1:0:0:1::2]:9400"' '"10.1.0.3:9400"'; do
    expect n6.prometheus.yml "- targets: [$t]"
done
expect n4.nfs.mount 'What=[fdd1:0:0:1::2]:/srv/ddl'
expect n4.sshfs.mount 'What=root@[fdd1:0:0:1::2]:/srv/ddl'
if command -v promtool >/dev/null; then
    promtool check config "$work/n6.prometheus.yml" >"$work/promtool.log" 2>&1 ||
        { echo "FAIL: promtool refuses the scrape configuration:"; cat "$work/promtool.log"; failed=1; }
fi
exit $failed
