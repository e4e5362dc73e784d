#!/usr/bin/env bash
# The runtime role's driver and GPU check (roles/runtime/tasks/cuda_check.yml, run by
# tests/gpu/driver_check.yml) against what nvidia-smi answers, on this machine without a GPU: a driver of
# the needed branch passes, an older one and a GPU older than the CUDA major are refused with the role's
# messages. The answers stand in for nvidia-smi's query mode as NVIDIA documents it (nvidia-smi(1),
# "--query-gpu" with "--format=csv,noheader": one line per GPU, fields in the order asked, ", " between);
# tests/gpu/run.sh runs the same playbook against a real one.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/dist"
echo '{"major": 13, "minor": 0, "min_driver": 580, "min_compute_capability": "7.5"}' >"$work/dist/cuda.json"
failed=0

# $1: nvidia-smi's lines; $2: pass or the text the refusal must hold.
case_() {
    printf '#!/bin/sh\nprintf "%s\\n"\n' "$1" >"$work/bin/nvidia-smi"
    chmod 755 "$work/bin/nvidia-smi"
    local log rc
    log=$(PATH="$work/bin:$PATH" ANSIBLE_ROLES_PATH="$root/playbooks/roles" ANSIBLE_NOCOLOR=1 \
        ANSIBLE_LOCALHOST_WARNING=0 ansible-playbook -i localhost, -e ddl_dist_dir="$work/dist" \
        -e ansible_python_interpreter=/usr/bin/python3 "$root/tests/gpu/driver_check.yml" 2>&1)
    rc=$?
    if [ "$2" = pass ]; then
        [ $rc -eq 0 ] || { echo "FAIL: '$1' refused: $log"; failed=1; return; }
    elif [ $rc -eq 0 ]; then
        echo "FAIL: '$1' accepted"; failed=1; return
    elif ! grep -qF -- "$2" <<<"$log"; then
        echo "FAIL: '$1': no \"$2\" in: $log"; failed=1; return
    fi
    echo "ok: '$1' -> $2"
}

case_ '580.65.06, 7.5' pass
case_ '580.159.04, 9.0\n580.159.04, 9.0' pass
case_ '535.247.01, 9.0' 'runs NVIDIA driver 535.247.01, which cannot run CUDA 13 (ddl'"'"'s NCCL backend): it needs branch 580 or newer'
case_ '580.65.06, 7.0' 'has GPUs of compute capability 7.0; CUDA 13 supports 7.5 and newer'
case_ '580.65.06, 9.0\n580.65.06, 6.1' 'has GPUs of compute capability 6.1'
exit $failed
