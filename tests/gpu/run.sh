#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, run on a machine that has one (CI has none; docs/gpus.md says when
# these ran last and what they gave). Reads the runtime folder a build made (bin/, lib/, python/, cuda.json)
# and writes one log per step to OUTDIR:
#   1 driver.txt    nvidia-smi and the runtime's CUDA needs (dist/cuda.json), compared
#   2 role.txt      the runtime role's driver check (roles/runtime/tasks/cuda_check.yml) through Ansible,
#                   then the same check against a cuda.json no driver satisfies, which must fail
#   3 load.txt      where the CUDA runtime and NCCL are found; what ddl says when they are not
#   4 exact.txt     ddl-allreduce-test with DDL_BACKEND=nccl: float and half, sum and average, checked exactly,
#                   on device buffers, then float sum on host buffers (copied to the GPU and back per call)
#   5 ranks.txt     more ranks on a host than it has GPUs: the one-line error
#   6 torch.txt     PyTorch DDP on the GPU through ddl_torch's hook (device pointers, no staging) beside
#                   DDP on NCCL
#   7 capi.txt      libddlcomm's C API on CUDA tensors: out-of-place allreduce, allgather, broadcast, fusion
#   8 majors.txt    every CUDA runtime major found on the machine (the system's, those frameworks bundle):
#                   the runtime loaded against each (DDL_CUDART_LIBRARY), exact for float/half sum/avg; the
#                   major the runtime picks by itself; DDL_CUDA_MAJOR for a major not installed (its one-line
#                   error); backend auto falling back to TCP, with its line, where NCCL cannot start
# usage: tests/gpu/run.sh DIST OUTDIR   (ANSIBLE_PY: a folder holding the `ansible` package, when the
#        machine has no Ansible; DDL_CUDART_LIBRARY/DDL_NCCL_LIBRARY: the libraries, when ld.so has neither)
set -uo pipefail
dist=$(realpath "${1:?usage: tests/gpu/run.sh DIST OUTDIR}")
out=${2:?usage: tests/gpu/run.sh DIST OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$dist/bin
failed=0
step() { echo "== $*"; }
bad() {
    echo "FAILED: $*"
    failed=1
}

# 1. The driver and GPUs against what the runtime's CUDA needs.
{
    step "nvidia-smi"
    nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
    step "runtime built against: $(cat "$dist/cuda.json")"
    python3 - "$dist/cuda.json" <<'EOF' || failed=1
import json, subprocess, sys
need = json.load(open(sys.argv[1]))
rows = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,compute_cap", "--format=csv,noheader"],
                      capture_output=True, text=True, check=True).stdout.split("\n")
for row in filter(None, rows):
    driver, cc = (x.strip() for x in row.split(","))
    ok = int(driver.split(".")[0]) >= need["min_driver"] and \
        tuple(map(int, cc.split("."))) >= tuple(map(int, need["min_compute_capability"].split(".")))
    print(f"driver {driver} (needs branch {need['min_driver']}+), compute capability {cc} "
          f"(needs {need['min_compute_capability']}+): {'runs' if ok else 'CANNOT RUN'} CUDA {need['major']}")
    sys.exit(0 if ok else 1)
EOF
} >"$out/driver.txt" 2>&1

# 2. The role's own check through Ansible: passes here, and fails with its message where the driver is older
# than what the runtime needs (a cuda.json asking for branch 999).
{
    if [ -n "${ANSIBLE_PY:-}" ]; then export PYTHONPATH=$ANSIBLE_PY${PYTHONPATH:+:$PYTHONPATH}; fi
    py=$(command -v python3)
    playbook() {
        ANSIBLE_ROLES_PATH=$root/playbooks/roles ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0 \
            python3 -m ansible.cli.playbook -i localhost, -e ansible_python_interpreter="$py" "$@" \
            "$here/driver_check.yml"
    }
    step "role check, runtime $dist"
    playbook -e ddl_dist_dir="$dist" || bad "the role's check refused this machine"
    newer=$(mktemp -d)
    sed 's/"min_driver": [0-9]*/"min_driver": 999/g' "$dist/cuda.json" >"$newer/cuda.json"
    step "role check, a runtime that needs driver branch 999 (must fail)"
    if playbook -e ddl_dist_dir="$newer" >"$newer/log" 2>&1; then bad "the role accepted a driver older than needed"; fi
    grep -o 'runs NVIDIA driver.*docs/gpus.md)' "$newer/log" || { cat "$newer/log"; bad "no driver message"; }
} >"$out/role.txt" 2>&1

# 3. Loading: what ld.so finds by itself, then the libraries named.
{
    step "ldd"
    ldd "$bin/ddl-allreduce-test" "$dist/lib/libddlcomm.so.0"
    step "ld.so alone (no DDL_*_LIBRARY)"
    env -u DDL_CUDART_LIBRARY -u DDL_NCCL_LIBRARY DDL_BACKEND=nccl timeout 60 "$bin/ddl-allreduce-test" --size 1M -n 1
    echo "exit $?"
    step "libraries: ${DDL_CUDART_LIBRARY:-found by ld.so} ${DDL_NCCL_LIBRARY:-found by ld.so}"
    NCCL_DEBUG=VERSION DDL_BACKEND=auto timeout 60 "$bin/ddl-allreduce-test" --size 1M -n 1 || bad "backend auto"
} >"$out/load.txt" 2>&1

# 4. Exactness and time on one rank with each type and operation, on device buffers, then on host buffers
# (the staging path); the bus bandwidth of a ring needs two GPUs or more.
{
    for t in float half; do
        for op in sum avg; do
            step "1 rank, $t $op"
            DDL_BACKEND=nccl timeout 120 "$bin/ddl-allreduce-test" -b 4K -e 256M -f 4 -n 5 --type $t --op $op ||
                bad "allreduce $t $op"
        done
    done
    step "1 rank, float sum, host buffers"
    DDL_BACKEND=nccl timeout 120 "$bin/ddl-allreduce-test" -b 4K -e 256M -f 4 -n 5 --host-buffers ||
        bad "allreduce on host buffers"
} >"$out/exact.txt" 2>&1

# 5. Two ranks on a one-GPU host: NCCL cannot put two ranks of a communicator on one device.
{
    gpus=$(nvidia-smi -L | grep -c '^GPU')
    step "$((gpus + 1)) ranks, $gpus GPU(s)"
    DDL_BACKEND=nccl DDL_BOOTSTRAP_TIMEOUT_S=30 timeout 90 "$bin/ddl-launch-local" -np $((gpus + 1)) -- \
        "$bin/ddl-allreduce-test" --size 1M -n 1
    echo "exit $?"
} >"$out/ranks.txt" 2>&1

# 6. PyTorch DDP on the GPU: ddl's hook (CUDA tensors go to NCCL without staging) and DDP's own NCCL group.
{
    export PYTHONPATH=$dist/python${PYTHONPATH:+:$PYTHONPATH} DDL_LIBDDLCOMM=$dist/lib/libddlcomm.so.0
    export RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511
    for comm in ddl nccl; do
        step "resnet50, 1 rank, --comm $comm"
        timeout 240 python3 -m ddl_torch.bench --model resnet50 --batch 64 --steps 20 --warmup 5 --comm $comm \
            --json || bad "torch $comm"
    done
} >"$out/torch.txt" 2>&1

# 7. The C API's pointer paths on CUDA tensors.
{
    PYTHONPATH=$dist/python${PYTHONPATH:+:$PYTHONPATH} DDL_LIBDDLCOMM=$dist/lib/libddlcomm.so.0 \
        timeout 120 python3 "$here/ddlcomm_cuda.py" || bad "C API on CUDA tensors"
} >"$out/capi.txt" 2>&1

# 8. One runtime for every CUDA major: each libcudart.so.<major> on this machine, loaded explicitly.
{
    step "CUDA runtimes on this machine"
    mapfile -t cudarts < <(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libcudart.so.[0-9]*' -print 2>/dev/null |
        grep -E 'libcudart\.so\.(1[2-9]|11\.0)$' | sort)
    printf '%s\n' "${cudarts[@]}"
    [ "${#cudarts[@]}" -gt 0 ] || bad "no libcudart.so.<major> found"
    for lib in "${cudarts[@]}"; do
        for t in float half; do
            for op in sum avg; do
                step "$lib: 1 rank, $t $op"
                DDL_CUDART_LIBRARY=$lib DDL_BACKEND=nccl timeout 60 "$bin/ddl-allreduce-test" -b 4K -e 64M -f 16 -n 3 \
                    --type $t --op $op || bad "allreduce with $lib ($t $op)"
            done
        done
    done
    step "the major the runtime picks by itself (driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1))"
    env -u DDL_CUDART_LIBRARY DDL_BACKEND=nccl timeout 60 "$bin/ddl-allreduce-test" --size 1M -n 1 | grep '^#' ||
        bad "allreduce with the runtime's own choice"
    for m in 13 12 11; do
        so=libcudart.so.$m
        [ $m = 11 ] && so=libcudart.so.11.0
        ls /usr/local/cuda/lib64/$so >/dev/null 2>&1 && continue
        ldconfig -p | grep -q "$so " && continue
        step "DDL_CUDA_MAJOR=$m, not installed here (must fail with one line)"
        if env -u DDL_CUDART_LIBRARY DDL_CUDA_MAJOR=$m DDL_BACKEND=nccl timeout 60 "$bin/ddl-allreduce-test" --size 1M -n 1; then
            bad "DDL_CUDA_MAJOR=$m loaded a runtime that is not there"
        fi
        break
    done
    step "backend auto where NCCL cannot start (no NCCL library): falls back to tcp with one line"
    DDL_NCCL_LIBRARY=/nonexistent/libnccl.so.2 DDL_BACKEND=auto timeout 60 "$bin/ddl-allreduce-test" --size 1M -n 1 \
        >"$out/auto.log" 2>&1 || bad "backend auto did not fall back"
    cat "$out/auto.log"
    grep -q "backend auto: tcp, since NCCL cannot start" "$out/auto.log" || bad "no fallback line"
    gpus=$(nvidia-smi -L | grep -c '^GPU')
    step "backend auto, $((gpus + 1)) ranks on $gpus GPU(s): one rank has no GPU of its own, so tcp"
    DDL_BACKEND=auto DDL_BOOTSTRAP_TIMEOUT_S=30 timeout 90 "$bin/ddl-launch-local" -np $((gpus + 1)) -- \
        "$bin/ddl-allreduce-test" -b 4K -e 1M -f 16 -n 3 || bad "backend auto with more ranks than GPUs"
} >"$out/majors.txt" 2>&1

for f in driver role load exact ranks torch capi majors; do
    echo "######## $f"
    cat "$out/$f.txt"
done
exit $failed
