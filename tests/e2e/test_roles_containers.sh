#!/usr/bin/env bash
# The configure phase's roles applied for real on nodes that each have their own file system: three
# systemd containers (rootful podman, runc) in their own network namespaces on a private bridge, with
# apt through an apt-cacher-ng on the bridge, deployed by ddl as an `ssh` cluster (until the local
# target's `nodes_as: containers` makes the nodes itself). Checks: ssh_mesh, the shared folder over sshfs
# (this kernel has no nfsd), Jupyter from apt with the cluster token, node exporters + Prometheus; the GPU
# roles' skip path; a second configure run with changed=0 on every node; `ddl smoke-test` passing its
# NFS, Jupyter and Prometheus checks; a check-mode rehearsal of the GPU roles, the DCGM exporter and Grafana.
# Needs: podman, apt-cacher-ng, /dev/fuse, internet for Debian's archive, and a Debian 12 systemd image
# with openssh-server and python3 (DDL_NODE_IMAGE, default localhost/ddl-try:bookworm).
source "$(dirname "$0")/lib.sh"
image=${DDL_NODE_IMAGE:-localhost/ddl-try:bookworm}
podman image exists "$image" || fail "no node image $image (set DDL_NODE_IMAGE to a Debian 12 image with systemd, openssh-server, python3)"
br=ddlrolesbr0 net=10.199.42 name=rolesct
ip -o addr show | grep -q " $net\." && fail "$net.0/24 is in use on this machine"
podman() { command podman --runtime runc "$@"; }
teardown() {
  for i in 1 2 3; do podman rm -f -t 2 "$name-n$i" >/dev/null 2>&1 || true; ip netns del "$name-n$i" 2>/dev/null || true; done
  [ -f "$WORK/acng/pid" ] && kill "$(cat "$WORK/acng/pid")" 2>/dev/null || true
  ip link del "$br" 2>/dev/null || true
}
trap 'rc=$?; teardown; (exit $rc); cleanup' EXIT

ip link add "$br" type bridge && ip addr add "$net.1/24" dev "$br" && ip link set "$br" up
proxy=${DDL_APT_PROXY:-}
if [ -z "$proxy" ]; then
  # Debian's default remaps to mirrors that may not resolve here: pass every request through as asked.
  mkdir -p "$WORK/acng" /var/tmp/ddl-e2e-acng
  printf 'CacheDir: /var/tmp/ddl-e2e-acng\nLogDir: %s\nSupportDir: /usr/lib/apt-cacher-ng\nPort: 3142\nBindAddress: %s\nPidFile: %s\nSocketPath: %s\nPassThroughPattern: .*\n' \
    "$WORK/acng" "$net.1" "$WORK/acng/pid" "$WORK/acng/socket" >"$WORK/acng/acng.conf"
  apt-cacher-ng -c "$WORK/acng" ForeGround=0
  proxy="http://$net.1:3142"
fi
ssh-keygen -q -t ed25519 -N '' -f "$WORK/id"
hosts=""
for i in 1 2 3; do
  ip netns add "$name-n$i" && ip -n "$name-n$i" link set lo up
  ip link add "rolesct$i" type veth peer name eth0 netns "$name-n$i"
  ip link set "rolesct$i" master "$br" up
  ip -n "$name-n$i" addr add "$net.1$i/24" dev eth0 && ip -n "$name-n$i" link set eth0 up
  ip -n "$name-n$i" route add default via "$net.1"
  # FUSE for sshfs: the device and the right to mount it.
  podman run -d --name "$name-n$i" --hostname "n$i" --systemd=always --network "ns:/run/netns/$name-n$i" \
    --device /dev/fuse --cap-add SYS_ADMIN --ulimit nofile=8192:8192 --ulimit nproc=8192:8192 "$image" /sbin/init >/dev/null
  hosts+="    - {name: $([ $i = 1 ] && echo master || echo worker$((i - 1))), address: $net.1$i, user: root}"$'\n'
done
for i in 1 2 3; do
  for _ in $(seq 60); do podman exec "$name-n$i" systemctl is-system-running >/dev/null 2>&1 && break
    [ "$(podman exec "$name-n$i" systemctl is-system-running 2>/dev/null)" = degraded ] && break; sleep 1; done
  # One host key per node (an image carries one set), the test's key for root, apt through the proxy.
  podman exec -i "$name-n$i" sh -c 'rm -f /etc/ssh/ssh_host_*; ssh-keygen -A >/dev/null; mkdir -p -m 700 /root/.ssh
    cat >/root/.ssh/authorized_keys; chmod 600 /root/.ssh/authorized_keys
    echo "Acquire::http::Proxy \"'"$proxy"'\";" >/etc/apt/apt.conf.d/01proxy; systemctl restart ssh' <"$WORK/id.pub"
done
cat >roles.yaml <<YAML
apiVersion: ddl/v1
name: $name
target: ssh
access:
  user: root
  private_key: $WORK/id
ssh:
  hosts:
$hosts
services:
  nfs: {enabled: true, transport: sshfs}
  jupyter: {enabled: true, install: apt}
  monitoring: {enabled: true, grafana: false}
runtime:
  backend: tcp
YAML
CLUSTERS+=("$name")
events="$STATE/$name/logs/ansible.jsonl"
# stats_of FILE: "host:changed:failures ..." from the callback's final line.
stats_of() { python3 -c 'import json,sys
s=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
assert s["event"]=="stats", s
print(" ".join("%s:%d:%d" % (h, v["changed"], v["failures"]) for h, v in sorted(s["hosts"].items())))' "$1"; }

t0=$SECONDS
ddl deploy roles.yaml >d1.log 2>&1 || { cat d1.log; grep '"failed"' "$events" | head -5; fail "first deploy"; }
echo "first deploy: $((SECONDS - t0)) s; $(stats_of "$events")"
for h in master worker1 worker2; do
  grep -q "\"msg\": \"nvidia_driver skipped on $h: no NVIDIA GPU on its PCI bus" "$events" || fail "no GPU skip message for $h"
  grep -q "\"msg\": \"container_toolkit skipped on $h: no NVIDIA GPU" "$events" || fail "no container_toolkit skip message for $h"
done
grep -q "served over sshfs" "$events" || fail "the shared folder is not served over sshfs"
ok "first deploy applies every role; GPU roles skip with a message on GPU-less nodes"

ddl exec --cluster "$name" -- 'ssh worker2 hostname && ssh master hostname' >mesh.out 2>&1 || { cat mesh.out; fail "node-to-node ssh"; }
ddl exec --cluster "$name" -- 'ssh -o BatchMode=yes 127.0.0.1 true' >strict.out 2>&1 && fail "an unpinned host key was accepted"
grep -q "Host key verification failed" strict.out || { cat strict.out; fail "strict host key checking"; }
ddl exec --cluster "$name" -- "findmnt -n -o FSTYPE /shared" >fs.out 2>&1 || { cat fs.out; fail "shared folder"; }
[ "$(grep -c 'fuse.sshfs' fs.out)" = 2 ] || { cat fs.out; fail "workers do not mount the master's folder over sshfs"; }
ok "node-to-node SSH with pinned host keys (an unknown key is refused); workers mount /shared over sshfs"

t0=$SECONDS
ddl deploy roles.yaml --only configure >d2.log 2>&1 || { cat d2.log; fail "second configure"; }
s2=$(stats_of "$events")
echo "second configure: $((SECONDS - t0)) s; $s2"
[ "$s2" = "master:0:0 worker1:0:0 worker2:0:0" ] || { grep '"changed": true' "$events" | head; fail "second run changed something: $s2"; }
ok "second configure run: changed=0 on every node"

# Check mode: the GPU roles (a GPU assumed), the DCGM exporter and Grafana, whose repositories are not
# reachable here, rehearsed against the same nodes with ddl's inventory, variables and callback.
pb="$DDL_SOURCE_DIR/playbooks"
ANSIBLE_CONFIG="$pb/ansible.cfg" ANSIBLE_HOST_KEY_CHECKING=True ANSIBLE_PIPELINING=True ANSIBLE_FORKS=4 \
  ansible-playbook -i "$STATE/$name/ansible/inventory.yml" "$pb/site.yml" --check \
  -e "@$STATE/$name/rendered/ansible/vars.json" -e "@$STATE/$name/ansible/secrets.json" \
  -e "{\"ddl_dist_dir\": \"$DDL_BINARY_DIR/dist\", \"ddl_nvidia_assume_gpu\": true, \"ddl_grafana\": true, \"ddl_kernel_headers_package\": \"linux-headers-amd64\"}" \
  >check.jsonl 2>check.err || { tail check.err; grep '"failed"' check.jsonl | head; fail "check-mode rehearsal"; }
for h in master worker1 worker2; do
  for t in "nvidia_driver : Nouveau is blacklisted" "container_toolkit : NVIDIA's repository is configured for its key only" \
           "container_toolkit : Docker engine package is installed" "monitoring : DCGM exporter service is defined"; do
    grep "\"host\": \"$h\"" check.jsonl | grep "\"task\": \"$t\"" | grep -q '"changed": true' || fail "check mode: '$t' would not change $h"
  done
done
grep '"host": "master"' check.jsonl | grep '"task": "monitoring : Cluster dashboard is present"' | grep -q '"changed": true' \
  || fail "check mode: Grafana's dashboard would not be provisioned"
ddl exec --cluster "$name" -- 'test ! -e /etc/modprobe.d/ddl-blacklist-nouveau.conf && test ! -e /etc/apt/sources.list.d/grafana.list' \
  >/dev/null || fail "check mode changed a node"
ok "check mode rehearses the driver, container toolkit, DCGM exporter and Grafana on every node without changing them"

ddl destroy "$name" >x.log 2>&1 || { cat x.log; fail destroy; }
t0=$SECONDS
ddl smoke-test roles.yaml --junit smoke.xml >smoke.out 2>&1 || { cat smoke.out; fail "smoke test"; }
echo "smoke test: $((SECONDS - t0)) s"
for c in "nfs read (worker1)" "nfs read (worker2)" "jupyter (master) .*answers with the token, refuses without" "prometheus (master)"; do
  grep -q "ok   checks   $c" smoke.out || { cat smoke.out; fail "smoke check $c"; }
done
ok "ddl smoke-test passes the shared-folder, Jupyter and Prometheus checks on the configured nodes"
