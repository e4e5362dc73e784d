#!/usr/bin/env bash
# The configure phase's roles applied for real on nodes that each have their own file system: a 3-node
# local cluster with `local.nodes_as: containers` (systemd in rootful podman containers, apt through the
# cluster's apt-cacher-ng). Checks: ssh_mesh, the shared folder over sshfs (this kernel has no nfsd: the
# auto transport falls back), Jupyter from apt with the cluster token, node exporters + Prometheus; the GPU
# roles' skip path; a second configure run with changed=0 on every node; `ddl smoke-test --cluster` passing its
# NFS, Jupyter and Prometheus checks; a check-mode rehearsal of the GPU roles, the DCGM exporter and Grafana
# (stand-in nvidia-smi: a V100 vGPU guest on R535 and an H100 on R580 pick CUDA 12 and 13; a planted
# Docker CE is kept); a real reboot of a node through the driver role's reboot task; `ddl gc` of the
# cluster once its state folder is thrown away.
source "$(dirname "$0")/lib.sh"
command -v podman >/dev/null || fail "podman missing (scripts/install-deps.sh installs it)"
name=rolesct
spec "$name" 3 "  nodes_as: containers" "services:" "  nfs: {enabled: true}" "  jupyter: {enabled: true}" \
  "  monitoring: {enabled: true}" "runtime:" "  backend: tcp"
events="$STATE/$name/logs/ansible.jsonl"
# stats_of FILE: "host:changed:failures ..." from the callback's final line.
stats_of() { python3 -c 'import json,sys
s=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
assert s["event"]=="stats", s
print(" ".join("%s:%d:%d" % (h, v["changed"], v["failures"]) for h, v in sorted(s["hosts"].items())))' "$1"; }

t0=$SECONDS
ddl deploy "$name.yaml" >d1.log 2>&1 || { cat d1.log; grep '"failed"' "$events" | head -5; fail "first deploy"; }
echo "first deploy: $((SECONDS - t0)) s; $(stats_of "$events")"
for h in master worker1 worker2; do
  grep -q "\"msg\": \"nvidia_driver skipped on $h: no NVIDIA GPU on its PCI bus" "$events" || fail "no GPU skip message for $h"
  grep -q "\"msg\": \"container_toolkit skipped on $h: no NVIDIA GPU" "$events" || fail "no container_toolkit skip message for $h"
done
grep -q "served over sshfs (this kernel has no nfsd)" "$events" || fail "the shared folder does not fall back to sshfs"
ok "first deploy applies every role; GPU roles skip with a message on GPU-less nodes"

ddl exec --cluster "$name" -- 'ssh worker2 hostname && ssh master hostname' >mesh.out 2>&1 || { cat mesh.out; fail "node-to-node ssh"; }
ddl exec --cluster "$name" -- 'ssh -o BatchMode=yes -o HostKeyAlias=not-pinned master true' >strict.out 2>&1 && fail "an unpinned host key was accepted"
expect_in strict.out "Host key verification failed" "strict host key checking"
ddl exec --cluster "$name" -- "findmnt -n -o FSTYPE /shared" >fs.out 2>&1 || { cat fs.out; fail "shared folder"; }
[ "$(grep -c 'fuse.sshfs' fs.out)" = 2 ] || { cat fs.out; fail "workers do not mount the master's folder over sshfs"; }
ok "node-to-node SSH with pinned host keys (an unknown key is refused); workers mount /shared over sshfs"

# Clean nodes: nothing of this machine's /usr is in them, and what the runtime links is what the roles
# installed (OpenBLAS from Debian); the CUDA runtime and NCCL are loaded only when the NCCL backend is asked for.
ddl exec --cluster "$name" -- 'test ! -e /usr/local/cuda && for f in /opt/ddl/bin/* /opt/ddl/lib/*.so; do ldd "$f" | sed "s|^|$f: |"; done' \
  >ldd.out 2>&1 || { cat ldd.out; fail "ldd over the runtime on the nodes"; }
! grep "not found" ldd.out || fail "a runtime program or library misses a library on a clean node"
for h in master worker1 worker2; do
  expect_in ldd.out "^\[$h\] /opt/ddl/bin/mlp_trainer: .*libopenblas.so.0 => /" "OpenBLAS not installed on $h"
  ! grep "^\[$h\] .*lib\(cudart\|nccl\)" ldd.out || fail "a runtime program links CUDA or NCCL"
done
ddl run --cluster "$name" -- mlp_trainer --steps 15 --batch 48 --checksum >tr.out 2>&1 || { cat tr.out; fail "trainer on clean nodes"; }
check_trainer tr.out "$(grep -c '^\[[0-9]*\] step 0 ' tr.out)"
ddl run --cluster "$name" -x DDL_BACKEND=nccl -- ddl-allreduce-test -b 4 -e 4 -n 1 -w 0 >nccl.out 2>&1 &&
  { cat nccl.out; fail "the NCCL backend started on nodes without CUDA"; }
expect_in nccl.out "backend nccl on [a-z0-9]*: libcudart.so.13, libcudart.so.12, libcudart.so.11.0 not found .*cuda-cudart-.*libnccl2.*runtime.backend: tcp" \
  "no one-line reason for the missing CUDA runtime"
ok "clean nodes: every runtime program resolves its libraries (OpenBLAS from the role, no CUDA linked); the trainer trains; backend nccl without CUDA names what to install"

t0=$SECONDS
ddl deploy "$name.yaml" --only configure --force-configure >d2.log 2>&1 || { cat d2.log; fail "second configure"; }
s2=$(stats_of "$events")
echo "second configure: $((SECONDS - t0)) s; $s2"
[ "$s2" = "master:0:0 worker1:0:0 worker2:0:0" ] || { grep '"changed": true' "$events" | head; fail "second run changed something: $s2"; }
ok "second configure run: changed=0 on every node"

# Check mode: the GPU roles (a GPU assumed), the DCGM exporter and Grafana, whose repositories are not
# reachable here, rehearsed against the same nodes with ddl's inventory, variables and callback.
pb="$DDL_SOURCE_DIR/playbooks"
# Two nodes play GPU machines with the stand-in nvidia-smi (tests/fakes/nvidia-smi), removed after the
# rehearsal: worker2 an NVIDIA vGPU guest of a V100 whose licensed guest driver (R535, compute capability
# 7.0) is in place, worker1 an H100 on R580 (9.0). The master has none: its branch is the spec's.
plant_gpu() { # NODE, then the stand-in's settings
  ddl exec --cluster "$name" --nodes "$1" -- "cat >/usr/local/bin/nvidia-smi <<'STANDIN'
$(cat "$DDL_SOURCE_DIR/tests/fakes/nvidia-smi")
STANDIN
chmod 755 /usr/local/bin/nvidia-smi && printf '%s\n' $(printf '%q ' "${@:2}") >/etc/nvidia-smi-standin" >/dev/null ||
    fail "planting the nvidia-smi stand-in on $1"
}
plant_gpu worker2 'PRODUCT="GRID V100-16C"' DRIVER=535.247.01 CUDA=12.2 CC=7.0 VIRT=VGPU
plant_gpu worker1 'PRODUCT="NVIDIA H100 80GB HBM3"' DRIVER=580.65.06 CUDA=13.0 CC=9.0 VIRT=None
# worker1 also has Docker CE as a cloud GPU image ships it (tests/e2e/helpers/plant_docker_ce.sh): the
# container toolkit must keep and configure it, never install the distribution's docker.io over it.
docker_ce() { # plant | remove
  ddl exec --cluster "$name" --nodes worker1 -- "cat >/tmp/plant_docker_ce.sh <<'PLANT'
$(cat "$DDL_SOURCE_DIR/tests/e2e/helpers/plant_docker_ce.sh")
PLANT
sh /tmp/plant_docker_ce.sh $1 && rm -f /tmp/plant_docker_ce.sh" >dce.out 2>&1 || { cat dce.out; fail "docker_ce $1 on worker1"; }
}
docker_ce plant
ddl exec --cluster "$name" --nodes worker2 -- nvidia-smi --query-gpu=driver_version,compute_cap --format=csv,noheader \
  >smi.out 2>&1 && grep -q '^\[worker2\] 535.247.01, 7.0$' smi.out || { cat smi.out; fail "the stand-in does not answer"; }
ANSIBLE_CONFIG="$pb/ansible.cfg" ANSIBLE_HOST_KEY_CHECKING=True ANSIBLE_PIPELINING=True ANSIBLE_FORKS=4 \
  ansible-playbook -i "$STATE/$name/ansible/inventory.yml" "$pb/site.yml" --check \
  -e "@$STATE/$name/rendered/ansible/vars.json" -e "@$STATE/$name/ansible/secrets.json" \
  -e "{\"ddl_dist_dir\": \"$DDL_BINARY_DIR/dist\", \"ddl_nvidia_assume_gpu\": true, \"ddl_grafana\": true, \"ddl_kernel_headers_package\": \"linux-headers-amd64\", \"ddl_runtime_backend\": \"nccl\"}" \
  >check.jsonl 2>check.err || { tail check.err; grep '"failed"' check.jsonl | head; fail "check-mode rehearsal"; }
ddl exec --cluster "$name" --nodes worker1,worker2 -- rm -f /usr/local/bin/nvidia-smi /etc/nvidia-smi-standin >/dev/null ||
  fail "removing the nvidia-smi stand-ins"
docker_ce remove
# task HOST TASK: the rehearsal's events of one task on one host.
task() { grep "\"host\": \"$1\"" check.jsonl | grep -F "\"task\": \"$2\""; }
task worker1 "container_toolkit : The node's Docker CE is kept" |
  grep -qF '"msg": "worker1 keeps its Docker CE (docker-ce 5:27.5.1-1~debian.12~bookworm, containerd.io 1.7.25-1): docker.io is not installed over it"' ||
  fail "check mode: worker1's Docker CE was not recognised"
# Skipped by its condition on worker1; on worker2 the command module says it would run (check mode).
task worker1 "container_toolkit : Docker engine package is installed" | grep -q '"status": "skipped"' ||
  fail "check mode: docker.io would replace worker1's Docker CE"
task worker1 "container_toolkit : Docker has the nvidia runtime" | grep -q '"msg": "Conditional result was False"' ||
  fail "check mode: worker1's Docker, which has the nvidia runtime, would be configured again"
task worker2 "container_toolkit : Docker has the nvidia runtime" | grep -q '"msg": "Command would have run if not in check mode"' ||
  fail "check mode: worker2's Docker would not get the nvidia runtime"
ok "check mode: Docker CE with the nvidia runtime is kept as it is (no docker.io over it, no second nvidia-ctk configure)"
# The DCGM exporter by driver branch (the monitoring role's table) and the kernel-module flavour.
for hw in "worker2 runs nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04 (driver branch 535)" \
          "worker1 runs nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2-4.7.1-ubuntu22.04 (driver branch 580)" \
          "master runs nvcr.io/nvidia/k8s/dcgm-exporter:4.4.2-4.7.1-ubuntu22.04 (driver branch 580)"; do
  task "${hw%% *}" "monitoring : The DCGM exporter image and why" | grep -qF "\"msg\": \"$hw\"" ||
    { grep '"task": "monitoring : The DCGM exporter image and why"' check.jsonl; fail "check mode: not chosen: $hw"; }
done
for h in master worker1; do
  task $h "nvidia_driver : The kernel-module flavour and why" |
    grep -qF "\"msg\": \"$h gets the proprietary kernel modules of branch 535: no GPU device ID is known" ||
    { task $h "nvidia_driver : The kernel-module flavour and why"; fail "check mode: no kernel-module flavour on $h"; }
done
grep '"host": "worker2"' check.jsonl | grep '"task": "nvidia_driver : A vGPU guest keeps its licensed guest driver"' |
  grep -q '"status": "ok"' || fail "check mode: the vGPU guest was not recognised"
! grep '"host": "worker2"' check.jsonl | grep -q '"task": "nvidia_driver : Nouveau is blacklisted"' ||
  fail "check mode: the driver would be installed over a vGPU guest's"
# The CUDA major each node runs: 12 on the V100 guest (R535 runs 12; CUDA 13 needs R580 and compute
# capability 7.5), 13 on the H100, and on the master (no driver yet) 13 from the spec's branch.
for want in "worker2 runs CUDA 12 (driver 535.247.01, GPUs of compute capability 7.0; CUDA 13 needs driver branch 580)" \
            "worker1 runs CUDA 13 (driver 580.65.06, GPUs of compute capability 9.0)" \
            "master runs CUDA 13 (nvidia-smi does not answer: the branch the driver role installs (gpu.driver_branch 580), GPUs not read)"; do
  grep '"task": "runtime : The CUDA major this node runs"' check.jsonl | grep -qF "\"msg\": \"$want\"" ||
    { grep '"task": "runtime : The CUDA major this node runs"' check.jsonl; fail "check mode: not chosen: $want"; }
done
for h in master worker1; do
  grep "\"host\": \"$h\"" check.jsonl | grep '"task": "nvidia_driver : Driver packages would come from a repository added in this run"' |
    grep '"msg": "check mode: nvidia-kernel-dkms, nvidia-smi, libcuda1' | grep -qv xserver ||
    fail "check mode: Debian's headless driver packages would not be installed on $h"
  grep "\"host\": \"$h\"" check.jsonl | grep '"task": "nvidia_driver : An unsigned module would not load under Secure Boot"' |
    grep -q '"status": "ok"' || fail "check mode: Secure Boot was not checked on $h"
done
for h in master worker1 worker2; do
  for t in "nvidia_driver : Nouveau is blacklisted" "container_toolkit : NVIDIA's repository is configured for its key only" \
           "container_toolkit : Docker engine package is installed" "monitoring : DCGM exporter service is defined"; do
    [ "$h/$t" = "worker2/nvidia_driver : Nouveau is blacklisted" ] && continue # the vGPU guest keeps its driver
    [ "$h/$t" = "worker1/container_toolkit : Docker engine package is installed" ] && continue # Docker CE kept
    grep "\"host\": \"$h\"" check.jsonl | grep "\"task\": \"$t\"" | grep -q '"changed": true' || fail "check mode: '$t' would not change $h"
  done
done
for h in master worker1 worker2; do
  grep "\"host\": \"$h\"" check.jsonl | grep '"task": "runtime : Packages from a repository added in this run are not simulated"' |
    grep -q '"status": "ok"' || fail "check mode: the CUDA runtime and NCCL would not be installed on GPU node $h"
done
grep '"host": "master"' check.jsonl | grep '"task": "monitoring : Cluster dashboard is present"' | grep -q '"changed": true' \
  || fail "check mode: Grafana's dashboard would not be provisioned"
ddl exec --cluster "$name" -- 'test ! -e /etc/modprobe.d/ddl-blacklist-nouveau.conf && test ! -e /etc/apt/sources.list.d/grafana.list' \
  >/dev/null || fail "check mode changed a node"
ok "check mode rehearses the driver, container toolkit, CUDA runtime + NCCL (CUDA 12 on the V100 vGPU guest on R535, 13 on the H100 on R580), DCGM exporter by branch and Grafana on every node without changing them"

t0=$SECONDS
# Every check passes, the allreduce too: the checks alone (--cluster), on the nodes as configured above (a
# whole smoke-test's deploy and destroy are test_smoke's).
ddl smoke-test --cluster "$name" --junit smoke.xml >smoke.out 2>&1 || { cat smoke.out; fail "smoke test"; }
echo "smoke test (checks only): $((SECONDS - t0)) s"
for c in "nfs read (worker1)" "nfs read (worker2)" "jupyter (master) .*answers with the token, refuses without" "prometheus (master)" \
         "allreduce (all slots).*exact"; do
  expect_in smoke.out "ok   checks   $c" "smoke check $c"
done
python3 -c 'import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
assert [s.get("name") for s in r] == ["checks"] and r.get("failures") == "0", (r.attrib, [s.get("name") for s in r])' smoke.xml ||
  fail "smoke-test --cluster: JUnit holds more than the checks, or a failure"
ddl exec --cluster "$name" -- true >/dev/null || fail "smoke-test --cluster left the cluster unusable"
ok "ddl smoke-test --cluster passes the shared-folder, Jupyter, Prometheus and allreduce checks on the configured nodes and leaves them up"

# A node that really reboots: worker2 through the driver role's reboot task, in a play like site.yml's
# driver play (strategy linear) under the environment configure gives Ansible (mitogen's strategy where
# installed). Its container's systemd stops (sshd goes away) and this machine starts the container
# again, as a machine comes back; the task must see the new boot (PID 1's start time: a container shares
# the kernel's boot id) and the node come back with its shared folder.
node_ct=ddl-$name-worker2
boot0=$(ddl exec --cluster "$name" --nodes worker2 -- 'cut -d" " -f22 /proc/1/stat' | sed 's/^\[worker2\] //')
( for _ in $(seq 1500); do
    [ "$(podman container inspect --format '{{.State.Running}}' "$node_ct")" = false ] && { podman start "$node_ct" >/dev/null; exit 0; }
    sleep 0.2
  done; exit 1 ) &
watcher=$!
mitogen=/usr/lib/python3/dist-packages/ansible_mitogen/plugins/strategy strategy=()
[ -d "$mitogen" ] && strategy=(ANSIBLE_STRATEGY_PLUGINS="$mitogen" ANSIBLE_STRATEGY=mitogen_linear)
t0=$SECONDS
env ANSIBLE_CONFIG="$pb/ansible.cfg" ANSIBLE_HOST_KEY_CHECKING=True ANSIBLE_ROLES_PATH="$pb/roles" "${strategy[@]}" \
  ansible-playbook -i "$STATE/$name/ansible/inventory.yml" "$DDL_SOURCE_DIR/tests/e2e/helpers/reboot.yml" \
  -e '{"ddl_reboot_node": "worker2", "ddl_nvidia_reboot_timeout": 180, "ddl_boot_time_command": "cut -d\" \" -f22 /proc/1/stat"}' \
  >reboot.jsonl 2>reboot.err || { tail reboot.err; cat reboot.jsonl; kill $watcher 2>/dev/null; fail "the reboot play"; }
wait $watcher || fail "worker2's container never stopped: the node did not reboot"
echo "reboot: $((SECONDS - t0)) s"
grep '"task": "nvidia_driver : Node reboots"' reboot.jsonl | grep -q '"changed": true' || { cat reboot.jsonl; fail "the reboot task did not report the reboot"; }
boot1=$(ddl exec --cluster "$name" --nodes worker2 -- 'cut -d" " -f22 /proc/1/stat' | sed 's/^\[worker2\] //')
[ -n "$boot1" ] && [ "$boot1" != "$boot0" ] || fail "worker2's PID 1 started at $boot0 and $boot1: no new boot"
ddl exec --cluster "$name" --nodes worker2 -- 'for i in $(seq 60); do findmnt -n -o FSTYPE /shared && exit 0; sleep 1; done; exit 1' \
  >after.out 2>&1 && grep -q fuse.sshfs after.out || { cat after.out; fail "worker2 came back without its shared folder"; }
ok "a node really reboots through the driver role's reboot task (linear play): sshd gone, back with a new PID 1 and its shared folder"

# The state folder thrown away (a CI job's container gone): gc from another state folder finds the cluster
# in this machine's records and removes its containers, namespaces and its own apt proxy, which it finds by
# its command line now that its pid file is gone.
pgrep -f "apt-cacher-ng -c $STATE/$name/apt-proxy" >/dev/null || fail "the cluster's apt proxy is not running"
rm -rf "${STATE:?}/$name"
"$DDL" --state-dir "$WORK/other-state" gc -y --older-than 0s --prefix "$name" >gc.log 2>&1 || { cat gc.log; fail "gc of a container-node cluster"; }
expect_in gc.log "^gc: 1 destroyed, 0 failed" "gc did not remove $name"
assert_gone "$name"
ok "gc of a container-node cluster whose state folder is gone: containers, namespaces and its apt proxy removed"
