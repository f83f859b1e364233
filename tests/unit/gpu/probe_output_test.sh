#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpudirect_probe output on the fixture topologies (the text doctor's gpudirect section prints), and
# tools/gpu-check.sh's verification (a GPU-host report passes, a GPU-less one fails) and dry run.
# Usage: probe_output_test.sh PROBE FIXTURES FAKE_LIBCUDA GPU_CHECK
set -euo pipefail
probe="$1" fixtures="$2" fake_cuda="$3" gpu_check="$4"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
expect_line() {  # FILE LINE: the exact line must be in the file
  if ! grep -qxF -- "$2" "$1"; then
    echo "FAIL: missing line in $1:"; echo "  '$2'"; echo "--- got:"; cat "$1"; failures=$((failures + 1))
  fi
}

sys="$tmp/sys"
mkdir -p "$sys/sys/module/nvidia_peermem" "$sys/proc/sys/kernel"
echo 550.54.15 > "$sys/sys/module/nvidia_peermem/version"
echo 6.1.0-18-amd64 > "$sys/proc/sys/kernel/osrelease"

# 1. DGX-like topology, no CUDA driver: the matrix still shows every path and decision.
"$probe" --topo "$fixtures/dgx.xml" --sysfs "$sys/sys" --no-cuda > "$tmp/dgx.txt"
expect_line "$tmp/dgx.txt" "GPUDirect RDMA (topology: $fixtures/dgx.xml)"
expect_line "$tmp/dgx.txt" "  peer memory : loaded (nvidia_peermem loaded; version 550.54.15)"
expect_line "$tmp/dgx.txt" "         | mlx5_0             | mlx5_1"
expect_line "$tmp/dgx.txt" "  GPU0   | PIX gdr cuda       | SYS off (distance)"
expect_line "$tmp/dgx.txt" "  GPU1   | PXB gdr cuda       | SYS off (distance)"
expect_line "$tmp/dgx.txt" "  GPU2   | PHB off (distance) | SYS off (distance)"
expect_line "$tmp/dgx.txt" "  GPU3   | SYS off (distance) | PIX gdr cuda"

# 2. NCCL_NET_GDR_LEVEL from the environment changes the decision.
NCCL_NET_GDR_LEVEL=SYS "$probe" --topo "$fixtures/dgx.xml" --sysfs "$sys/sys" --no-cuda > "$tmp/sys.txt"
expect_line "$tmp/sys.txt" "  GPU2   | PHB gdr cuda | SYS gdr cuda"
NCCL_NET_GDR_LEVEL=0 "$probe" --topo "$fixtures/dgx.xml" --sysfs "$sys/sys" --no-cuda > "$tmp/loc.txt"
expect_line "$tmp/loc.txt" "  GPU0   | PIX off (distance) | SYS off (distance)"

# 3. The topology file from RAILSCOPE_TOPO_FILE, the sysfs root from RAILSCOPE_SYSFS_ROOT.
RAILSCOPE_TOPO_FILE="$fixtures/bcm_gen4.xml" RAILSCOPE_SYSFS_ROOT="$sys/sys" "$probe" --no-cuda > "$tmp/bcm.txt"
expect_line "$tmp/bcm.txt" "  GPU0   | PIX gdr cuda"

# 4. A GPU host like the H200 check machine (fake driver): passes gpu-check's verification.
FAKE_CUDA_BUSIDS=0000:01:00.0 "$probe" --topo "$fixtures/single_gpu.xml" --sysfs "$sys/sys" --cuda "$fake_cuda" \
  > "$tmp/h200.txt"
expect_line "$tmp/h200.txt" "  GPU0   0000:01:00.0 NUMA 0 cc 9.0, gdr attr 1, dma-buf attr 1"
expect_line "$tmp/h200.txt" "  no RDMA NIC: GPUDirect RDMA does not apply"
"$gpu_check" --verify "$tmp/h200.txt" > /dev/null || { echo "FAIL: gpu-check rejected a GPU host report"; failures=$((failures + 1)); }

# 5. ... and rejects a report without the CUDA driver.
if "$gpu_check" --verify "$tmp/dgx.txt" 2> "$tmp/verify.err"; then
  echo "FAIL: gpu-check accepted a report without CUDA"; failures=$((failures + 1))
fi
grep -q "the CUDA driver was not read through dlopen" "$tmp/verify.err" || { echo "FAIL: wrong rejection:"; cat "$tmp/verify.err"; failures=$((failures + 1)); }

# 6. A bad topology file: clear error, exit 1.
if "$probe" --topo "$tmp/missing.xml" --sysfs "$sys/sys" --no-cuda > "$tmp/bad.txt"; then
  echo "FAIL: a missing topology file exited 0"; failures=$((failures + 1))
fi
expect_line "$tmp/bad.txt" "  no matrix: cannot use topology file '$tmp/missing.xml' (missing or not hwloc XML)"

# 7. gpu-check's dry run lists the steps and runs nothing.
"$gpu_check" --dry-run --build-dir "$tmp/never" > "$tmp/dry.txt"
expect_line "$tmp/dry.txt" "+ cmake --build $tmp/never -j $(nproc 2>/dev/null || echo 2) --target railscope gpudirect_probe"
[ ! -e "$tmp/never" ] || { echo "FAIL: dry run created the build dir"; failures=$((failures + 1)); }

[ "$failures" = 0 ] && echo "probe output: ok"
exit "$failures"
