#!/usr/bin/env bash
# local.nodes_as: containers - every node a podman container running systemd in its own network
# namespace, with a file system of its own: packages installed on one node are on no other node and not
# on the machine; apt goes through the cluster's apt proxy on the bridge; the pipeline (wait-ssh,
# configure, probe, hostfile, run) works as on namespace nodes; destroy removes containers and proxy.
source "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || fail "podman missing (scripts/install-deps.sh installs it)"
spec ctr 3 "  nodes_as: containers"
# SIGKILL right after the first container started (the image is built by then): the next deploy
# converges from there.
rc=0
DDL_TEST_KILL_AT=provision:master:container "$DDL" --state-dir "$STATE" deploy ctr.yaml >k.log 2>&1 || rc=$?
[ $rc = 137 ] || { cat k.log; fail "deploy was not killed after master's container started (exit $rc)"; }
ddl deploy ctr.yaml >d.log 2>&1 || { cat d.log; fail "deploy"; }
ok "deployed 3 container nodes (after a deploy killed half way)"

[ "$(podman ps --filter label=ddl.cluster=ctr --format '{{.Names}}' | sort | tr '\n' ' ')" = \
  "ddl-ctr-master ddl-ctr-worker1 ddl-ctr-worker2 " ] || fail "one running container per node"
[ "$(ddl exec --cluster ctr -- hostname | sort | tr '\n' ' ')" = "[master] master [worker1] worker1 [worker2] worker2 " ] ||
  fail "exec reaches every container"
state=$(ddl exec --cluster ctr --nodes worker2 -- systemctl is-system-running 2>/dev/null || true)
case "$state" in *running*|*degraded*) ;; *) fail "systemd is not PID 1's manager in worker2 ($state)";; esac
[ "$(ddl exec --cluster ctr --nodes worker1 -- cat /proc/1/comm | tail -1)" = "[worker1] systemd" ] ||
  fail "PID 1 in worker1 is not systemd"
ok "systemd runs every node; exec reaches them"

ids=$(ddl exec --cluster ctr -- cat /etc/machine-id | sed 's/^\[[^]]*\] //' | sort -u | wc -l)
[ "$ids" = 3 ] || fail "machine ids are not distinct ($ids)"
keys=$(ddl exec --cluster ctr -- sh -c 'ls /etc/ssh/ssh_host_*' | sed 's/^\[[^]]*\] //' | sort -u | tr '\n' ' ')
[ "$keys" = "/etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_ed25519_key.pub " ] || fail "host keys in the nodes: $keys"
pubs=$(ddl exec --cluster ctr -- cat /etc/ssh/ssh_host_ed25519_key.pub | sed 's/^\[[^]]*\] //' | sort -u | wc -l)
[ "$pubs" = 3 ] || fail "nodes share a host key ($pubs distinct)"
grep -qF "$(ddl exec --cluster ctr --nodes worker1 -- cat /etc/ssh/ssh_host_ed25519_key.pub | sed 's/^\[[^]]*\] //' | cut -d' ' -f2)" \
  "$STATE/ctr/known_hosts" || fail "worker1's host key is not the one ddl pinned"
ok "distinct machine ids; no host key shared through the image"

# A package installed on worker1 through the proxy is on worker1 only.
ddl exec --cluster ctr --nodes worker1 -- sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q hello' \
  >apt.log 2>&1 || { cat apt.log; fail "apt-get install in worker1"; }
[ "$(ddl exec --cluster ctr --nodes worker1 -- hello | tail -1)" = "[worker1] Hello, world!" ] || fail "hello on worker1"
ddl exec --cluster ctr --nodes worker2 -- sh -c 'command -v hello' >/dev/null 2>&1 && fail "hello appeared on worker2"
if command -v hello >/dev/null || [ -e /usr/bin/hello ]; then fail "hello appeared on the machine"; fi
ok "apt install on worker1 only (own file systems, packages through the proxy)"

br=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target_data"]["plan"]["bridge_address"])' "$STATE/ctr/state.json")
code=$(ddl exec --cluster ctr --nodes master -- curl -s -o /dev/null -w '%{http_code}' -x "http://$br:3142" http://deb.debian.org/debian/README | tail -1)
[ "$code" = "[master] 403" ] || fail "the apt proxy forwards more than package archives ($code)"
ok "the apt proxy serves archives only (403 for other URLs)"

ddl run --cluster ctr -- ddl-allreduce-test -b 4 -e 1M -f 4 -n 2 -w 1 >ar.out 2>&1 || { cat ar.out; fail "allreduce"; }
expect_in ar.out "^\[0\] # all results exact" "allreduce result"
ok "ddl run: allreduce across the container nodes exact"

# The launchers a user runs on the master, installed from Debian on every node (through the proxy), read
# the hostfiles ddl wrote there and start over the SSH mesh of the ssh_mesh role.
ddl exec --cluster ctr -- sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openmpi-bin mpich' \
  >mpi.log 2>&1 || { tail -30 mpi.log; fail "installing Open MPI and MPICH on the nodes"; }
launch_from_master ctr openmpi /etc/ddl/hostfile 3 "master worker1 worker2 "
launch_from_master ctr mpich /etc/ddl/hostfile.mpich 3 "master worker1 worker2 "
ok "mpirun --hostfile /etc/ddl/hostfile and mpiexec -f /etc/ddl/hostfile.mpich from the master: one rank per container node"
allreduce_from_master ctr openmpi /etc/ddl/hostfile 3
allreduce_from_master ctr mpich /etc/ddl/hostfile.mpich 3
ok "mpirun and mpiexec with ddl's hostfiles start ddl-allreduce-test as one job of 3 ranks, exact"

# A container that went away comes back when provisioning runs again; the others are left as they are.
podman --runtime runc kill ddl-ctr-worker2 >/dev/null
ddl deploy ctr.yaml --only provision >d2.log 2>&1 || { cat d2.log; fail "provision after a stopped container"; }
[ "$(ddl exec --cluster ctr --nodes worker2 -- hostname | tail -1)" = "[worker2] worker2" ] || fail "worker2 back"
[ "$(ddl exec --cluster ctr --nodes worker1 -- hello | tail -1)" = "[worker1] Hello, world!" ] || fail "worker1 was replaced"
ok "a killed container node is started again by deploy --only provision; the others are kept"

rc=0
DDL_TEST_KILL_AT=destroy:containers-removed "$DDL" --state-dir "$STATE" destroy -y ctr >k.log 2>&1 || rc=$?
[ $rc = 137 ] || { cat k.log; fail "destroy was not killed after removing the containers (exit $rc)"; }
ddl destroy -y ctr >x.log 2>&1 || { cat x.log; fail "destroy"; }
assert_gone ctr
[ -z "$(podman ps -a --filter label=ddl.cluster=ctr --format '{{.Names}}')" ] || fail "containers left"
pgrep -f "$STATE/ctr/apt-proxy" >/dev/null && fail "apt proxy left running"
ok "destroy (also after one killed half way) removes the containers, the proxy, links and namespaces"
