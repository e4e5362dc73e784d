#!/usr/bin/env bash
# The kernel-module flavour the nvidia_driver role picks (roles/nvidia_driver/tasks/flavour.yml) from the
# GPUs gpu_facts reads off the PCI bus, on this machine: each case builds a PCI tree the way the kernel
# lists devices (Documentation/ABI/testing/sysfs-bus-pci: one folder per device with its `vendor`,
# `device` and `class` as 0x-prefixed hex) and runs tests/ansible/kernel_modules.yml against it.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# $1: the devices, "vendor:device:class" separated by spaces; $2: branch; $3: gpu.kernel_modules;
# $4: architecture; $5: the flavour line the role must print, or the text its refusal must hold.
case_() {
    local tree="$work/pci.$RANDOM" i=0 log rc
    mkdir -p "$tree"
    for d in $1; do
        IFS=: read -r vendor device class <<<"$d"
        mkdir -p "$tree/0000:$(printf '%02x' $((0x17 + i))):00.0"
        echo "$vendor" >"$tree/0000:$(printf '%02x' $((0x17 + i))):00.0/vendor"
        echo "$device" >"$tree/0000:$(printf '%02x' $((0x17 + i))):00.0/device"
        echo "$class" >"$tree/0000:$(printf '%02x' $((0x17 + i))):00.0/class"
        i=$((i + 1))
    done
    log=$(ANSIBLE_ROLES_PATH="$root/playbooks/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0 \
        ANSIBLE_STDOUT_CALLBACK=default ansible-playbook -i localhost, -e ansible_python_interpreter=/usr/bin/python3 \
        -e "ddl_pci_devices_dir=$tree ddl_nvidia_branch=$2 ddl_gpu_kernel_modules=$3 ddl_nvidia_arch=$4" \
        "$root/tests/ansible/kernel_modules.yml" 2>&1)
    rc=$?
    case "$5" in
    "localhost gets "*)
        [ $rc -eq 0 ] || { echo "FAIL: $1 ($2, $3, $4) refused: $log"; failed=1; return; }
        grep -qF -- "\"msg\": \"$5\"" <<<"$log" || { echo "FAIL: $1 ($2, $3, $4): not \"$5\" in: $log"; failed=1; return; } ;;
    *)
        [ $rc -ne 0 ] || { echo "FAIL: $1 ($2, $3, $4) accepted"; failed=1; return; }
        grep -qF -- "$5" <<<"$log" || { echo "FAIL: $1 ($2, $3, $4): no \"$5\" in: $log"; failed=1; return; } ;;
    esac
    echo "ok: $1 ($2, $3, $4) -> $5"
}

v100=0x10de:0x1db4:0x030200 t4=0x10de:0x1eb8:0x030200 h100=0x10de:0x2330:0x030200 gh200=0x10de:0x2342:0x030200
b200=0x10de:0x2901:0x030200 gtx1080ti=0x10de:0x1b06:0x030000 rtx3090=0x10de:0x2204:0x030000
# Not GPUs: a GPU's audio function (class 0x0403) and another vendor's display controller.
others="0x10de:0x10ef:0x040300 0x8086:0x4680:0x030000"

case_ "$v100 $others" 580 auto x86_64 \
    "localhost gets the proprietary kernel modules of branch 580: GPUs 0x1db4 (Maxwell, Pascal or Volta) need it"
case_ "$h100 $h100 $others" 580 auto x86_64 \
    "localhost gets the open kernel modules of branch 580: every GPU (0x2330, 0x2330) is Turing or newer and branch 580 defaults to it"
case_ "$t4" 535 auto x86_64 \
    "localhost gets the proprietary kernel modules of branch 535: every GPU (0x1eb8) is Turing or newer and branch 535 (before 560) defaults to the proprietary one"
case_ "$b200" 580 auto x86_64 \
    "localhost gets the open kernel modules of branch 580: GPUs 0x2901 (Grace Hopper or Blackwell) run only with it"
case_ "$gh200" 580 auto aarch64 \
    "localhost gets the open kernel modules of branch 580: GPUs 0x2342 (Grace Hopper or Blackwell) run only with it"
case_ "$gtx1080ti $rtx3090" 580 auto x86_64 \
    "localhost gets the proprietary kernel modules of branch 580: GPUs 0x1b06 (Maxwell, Pascal or Volta) need it"
case_ "$h100" 580 proprietary x86_64 \
    "localhost gets the proprietary kernel modules of branch 580: gpu.kernel_modules: proprietary"
case_ "$v100 $b200" 580 auto x86_64 \
    "localhost: GPUs 0x1db4 (Maxwell, Pascal or Volta) need the proprietary kernel modules and GPUs 0x2901 (Grace Hopper or Blackwell) need the open ones, and open was chosen"
case_ "$v100" 580 open x86_64 \
    "localhost: GPUs 0x1db4 (Maxwell, Pascal or Volta) need the proprietary kernel modules, and open was chosen (gpu.kernel_modules: open)"
case_ "$b200" 580 proprietary x86_64 \
    "localhost: GPUs 0x2901 (Grace Hopper or Blackwell) need the open ones, and proprietary was chosen (gpu.kernel_modules: proprietary)"
exit $failed
