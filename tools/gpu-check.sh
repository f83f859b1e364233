#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU-machine check for railscope's GPUDirect decisions. On a host with an NVIDIA GPU and
# driver (e.g. one H200, no RDMA NIC) it builds railscope there and runs the GPUDirect report, which
# must read the real CUDA driver through dlopen (device, PCI bus id, DMA-BUF attribute) and say
# "no RDMA NIC" cleanly. Exit 0 = the report is what a GPU host must produce.
#
#   tools/gpu-check.sh [--build-dir DIR] [--jobs N]   build + run + verify (on the GPU host)
#   tools/gpu-check.sh --dry-run                      print the steps without running them
#   tools/gpu-check.sh --verify FILE [--expect-nic]   only verify a saved report (used by the tests)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-gpu-check"
jobs="$(nproc 2>/dev/null || echo 2)"
dry=0
verify_file=""
expect_nic=0

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="${2:?--build-dir needs a value}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a value}"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --verify) verify_file="${2:?--verify needs a file}"; shift 2 ;;
    --expect-nic) expect_nic=1; shift ;;
    -h|--help) usage ;;
    *) echo "gpu-check: unknown argument '$1'" >&2; usage ;;
  esac
done

fail() { echo "gpu-check: FAIL: $*" >&2; exit 1; }

# The checks a GPU host's report must pass (see docs/gpudirect.md).
verify() {
  local report="$1"
  [ -s "$report" ] || fail "empty report $report"
  grep -qE '^  CUDA driver : [0-9]+\.[0-9]+ via ([^ ]*/)?libcuda\.so[^ ]*, [1-9][0-9]* GPU\(s\)$' "$report" ||
    fail "the CUDA driver was not read through dlopen (expected 'CUDA driver : X.Y via libcuda.so.1, N GPU(s)')"
  grep -qE '^  GPU[0-9]+ +[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] NUMA [0-9?]+ cc [0-9]+\.[0-9]+, gdr attr -?[0-9]+, dma-buf attr -?[0-9]+' "$report" ||
    fail "no GPU line with PCI bus id, compute capability and DMA-BUF attribute"
  if grep -q '(not in topology)' "$report"; then
    # Containers often hide /sys/bus/pci from hwloc: the CUDA facts above still count.
    echo "gpu-check: note: a CUDA GPU is not in the hwloc topology (no PCI view?); no path matrix for it" >&2
  fi
  if [ "$expect_nic" = 1 ]; then
    grep -qE '^ +\| ' "$report" || fail "expected a GPU x NIC matrix"
  else
    grep -qx '  no RDMA NIC: GPUDirect RDMA does not apply' "$report" || fail "expected 'no RDMA NIC' on this host"
    grep -qE '^  ([A-Za-z]+ +)?\[gdr\.no_rdma_nic\] ' "$report" || fail "expected the gdr.no_rdma_nic finding"
  fi
  if grep -qE '^  ([A-Za-z]+ +)?\[gdr\.no_cuda_driver\]' "$report"; then fail "gdr.no_cuda_driver reported on a GPU host"; fi
  echo "gpu-check: report OK ($report)"
}

if [ -n "$verify_file" ]; then
  verify "$verify_file"
  exit 0
fi

run() {
  echo "+ $*"
  if [ "$dry" = 0 ]; then "$@"; fi
}

echo "== host"
run uname -r
if command -v nvidia-smi >/dev/null 2>&1; then
  run nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv
elif [ "$dry" = 0 ]; then
  echo "(no nvidia-smi on PATH; relying on libcuda alone)"
fi

echo "== build ($build)"
for tool in cmake ninja c++; do
  command -v "$tool" >/dev/null 2>&1 || [ "$dry" = 1 ] || fail "$tool missing: run scripts/install-deps.sh first"
done
run cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAILSCOPE_BUILD_BENCH=OFF ||
  fail "configure failed (missing packages? scripts/install-deps.sh lists them)"
run cmake --build "$build" -j "$jobs" --target railscope gpudirect_probe || fail "build failed"

out="$build/gpu-check"
run mkdir -p "$out"
echo "== railscope doctor"
if [ "$dry" = 1 ]; then
  echo "+ $build/tools/railscope doctor > $out/doctor.txt   (if the doctor subcommand exists)"
elif "$build/tools/railscope" doctor --help >/dev/null 2>&1; then
  # doctor exits non-zero when it finds problems (there is no RDMA NIC here): keep going.
  "$build/tools/railscope" doctor | tee "$out/doctor.txt" || true
else
  echo "(this build has no doctor subcommand yet; the gpudirect report below is what its section prints)"
fi

echo "== GPUDirect report"
if [ "$dry" = 1 ]; then
  echo "+ $build/tests/unit/gpu/gpudirect_probe > $out/gpudirect.txt"
  echo "+ $build/tests/unit/gpu/gpudirect_probe --json > $out/gpudirect.json"
  echo "+ verify $out/gpudirect.txt"
  exit 0
fi
"$build/tests/unit/gpu/gpudirect_probe" | tee "$out/gpudirect.txt" || true
"$build/tests/unit/gpu/gpudirect_probe" --json > "$out/gpudirect.json" || true
verify "$out/gpudirect.txt"
if [ -s "$out/doctor.txt" ] && grep -q 'GPUDirect RDMA (topology:' "$out/doctor.txt"; then
  sed -n '/GPUDirect RDMA (topology:/,$p' "$out/doctor.txt" > "$out/doctor-gpudirect.txt"
  verify "$out/doctor-gpudirect.txt"
fi
