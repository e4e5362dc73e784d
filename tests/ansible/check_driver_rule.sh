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
# dist/cuda.json as the build writes it (src/runtime/CMakeLists.txt, from cmake/cuda_compat.cmake).
cat >"$work/dist/cuda.json" <<'END'
{"major": 13, "minor": 0, "min_driver": 580, "min_compute_capability": "7.5",
 "majors": [{"major": 13, "min_driver": 580, "min_compute_capability": "7.5"},
             {"major": 12, "min_driver": 525, "min_compute_capability": "5.0"},
             {"major": 11, "min_driver": 450, "min_compute_capability": "3.5"}]}
END
failed=0

# $1: nvidia-smi's lines; $2: the CUDA major chosen ("runs CUDA N (...)") or the text the refusal must hold.
case_() {
    printf '#!/bin/sh\nprintf "%s\\n"\n' "$1" >"$work/bin/nvidia-smi"
    chmod 755 "$work/bin/nvidia-smi"
    local log rc
    log=$(PATH="$work/bin:$PATH" ANSIBLE_ROLES_PATH="$root/playbooks/roles" ANSIBLE_NOCOLOR=1 \
        ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_STDOUT_CALLBACK=default ansible-playbook -i localhost, \
        -e ddl_dist_dir="$work/dist" -e ansible_python_interpreter=/usr/bin/python3 "$root/tests/gpu/driver_check.yml" 2>&1)
    rc=$?
    case "$2" in
    "runs CUDA "*)
        [ $rc -eq 0 ] || { echo "FAIL: '$1' refused: $log"; failed=1; return; }
        grep -qF -- "\"msg\": \"localhost $2" <<<"$log" || { echo "FAIL: '$1': not \"$2\" in: $log"; failed=1; return; } ;;
    *)
        [ $rc -ne 0 ] || { echo "FAIL: '$1' accepted"; failed=1; return; }
        grep -qF -- "$2" <<<"$log" || { echo "FAIL: '$1': no \"$2\" in: $log"; failed=1; return; } ;;
    esac
    echo "ok: '$1' -> $2"
}

case_ '580.65.06, 7.5' 'runs CUDA 13 (driver 580.65.06, GPUs of compute capability 7.5)'
case_ '580.159.04, 9.0\n580.159.04, 9.0' 'runs CUDA 13 (driver 580.159.04, GPUs of compute capability 9.0)'
# A V100 vGPU guest on R535 (Debian 12's branch, and the guest drivers of vGPU 16): CUDA 12.
case_ '535.247.01, 7.0' 'runs CUDA 12 (driver 535.247.01, GPUs of compute capability 7.0; CUDA 13 needs driver branch 580)'
# A V100 on R580: the driver runs CUDA 13, the GPU does not.
case_ '580.65.06, 7.0' 'runs CUDA 12 (driver 580.65.06, GPUs of compute capability 7.0; CUDA 13 needs compute capability 7.5 or newer)'
case_ '580.65.06, 9.0\n580.65.06, 6.1' 'runs CUDA 12 (driver 580.65.06, GPUs of compute capability 9.0, 6.1; CUDA 13 needs compute capability 7.5 or newer)'
case_ '470.256.02, 8.0' 'runs CUDA 11 (driver 470.256.02, GPUs of compute capability 8.0; CUDA 13 needs driver branch 580; CUDA 12 needs driver branch 525)'
case_ '440.118.02, 7.0' 'runs NVIDIA driver 440.118.02, which runs none of the CUDA majors ddl'"'"'s NCCL backend loads (13, 12, 11): the oldest, CUDA 11, needs branch 450 or newer'
case_ '580.65.06, 3.0' 'has GPUs of compute capability 3.0; the oldest CUDA ddl'"'"'s NCCL backend loads, CUDA 11, supports 3.5 and newer'
exit $failed
