#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `railscope doctor --topo FILE` on the fixture topologies: the gpudirect section's matrix and
# findings. Skips (77) while the doctor has no gpudirect section / --topo option (before the
# integration described in docs/gpudirect.md).
# Usage: doctor_topo_test.sh RAILSCOPE FIXTURES
set -euo pipefail
railscope="$1" fixtures="$2"
if ! "$railscope" doctor --help 2>/dev/null | grep -q -- '--topo'; then
  echo "railscope doctor has no --topo option yet: skipped"; exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sys/module/nvidia_peermem" "$tmp/proc/sys/kernel" "$tmp/sys/class/infiniband"
echo 550.54.15 > "$tmp/sys/module/nvidia_peermem/version"
echo 6.1.0-18-amd64 > "$tmp/proc/sys/kernel/osrelease"
failures=0
expect_line() {
  grep -qxF -- "$2" "$1" || { echo "FAIL: missing line '$2'"; failures=$((failures + 1)); }
}
run_doctor() {  # OUT ARGS...: doctor exits 0/1/2 by severity; only its output matters here
  local out="$1"; shift
  "$railscope" doctor --sysfs-root "$tmp/sys" --no-verbs "$@" > "$out" || true
}

run_doctor "$tmp/dgx.txt" --topo "$fixtures/dgx.xml"
expect_line "$tmp/dgx.txt" "GPUDirect RDMA"
expect_line "$tmp/dgx.txt" "  GPUDirect RDMA (topology: $fixtures/dgx.xml)"
expect_line "$tmp/dgx.txt" "  GPU0   | PIX gdr cuda       | SYS off (distance)"
expect_line "$tmp/dgx.txt" "  GPU1   | PXB gdr cuda       | SYS off (distance)"
expect_line "$tmp/dgx.txt" "  GPU2   | PHB off (distance) | SYS off (distance)"
expect_line "$tmp/dgx.txt" "  GPU3   | SYS off (distance) | PIX gdr cuda"
grep -q '\[gdr.distance\] GPU2 (0000:10:00.0) and mlx5_0 (0000:04:00.0) are PHB apart' "$tmp/dgx.txt" ||
  { echo "FAIL: no gdr.distance finding for GPU2"; failures=$((failures + 1)); }

NCCL_NET_GDR_LEVEL=PHB run_doctor "$tmp/phb.txt" --topo "$fixtures/dgx.xml"
expect_line "$tmp/phb.txt" "  GPU2   | PHB gdr cuda       | SYS off (distance)"

run_doctor "$tmp/bcm.txt" --topo "$fixtures/bcm_gen4.xml"
expect_line "$tmp/bcm.txt" "  GPU0   | PIX gdr cuda"

run_doctor "$tmp/one.txt" --topo "$fixtures/single_gpu.xml"
expect_line "$tmp/one.txt" "  no RDMA NIC: GPUDirect RDMA does not apply"

"$railscope" doctor --sysfs-root "$tmp/sys" --no-verbs --topo "$fixtures/dgx.xml" --json > "$tmp/dgx.json" || true
grep -q '"gpudirect"' "$tmp/dgx.json" || { echo "FAIL: no gpudirect section in JSON"; failures=$((failures + 1)); }

[ "$failures" = 0 ] || cat "$tmp/dgx.txt"
exit "$failures"
