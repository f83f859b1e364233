#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# In the soft-RoCE guest: the GPUDirect report with real libibverbs on rxe0/rxe1. The DMA-BUF probe
# really calls ibv_reg_dmabuf_mr on a PD of each device; rxe is not a PCI device, so it must be
# reported host-memory-only, and NCCL_NET_GDR_LEVEL (set by the test) must show in the decision.
# Usage: gdr_on_rxe.sh GPUDIRECT_PROBE
set -euo pipefail
probe="$1"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$probe" --probe-verbs > "$out"
cat "$out"
fail=0
expect() { grep -qxF -- "$1" "$out" || { echo "FAIL: missing line: '$1'"; fail=1; }; }
expect "  policy      : NCCL_NET_GDR_LEVEL=${NCCL_NET_GDR_LEVEL:?} NCCL_NET_GDR_READ=-2 NCCL_DMABUF_ENABLE=1"
for dev in rxe0 rxe1; do
  expect "  $dev   not a PCI device (virtual): host memory only, dma-buf probe unsupported"
done
grep -qF "(only virtual RDMA devices: rxe0, rxe1): GPUDirect RDMA does not apply" "$out" ||
  { echo "FAIL: no gdr.no_rdma_nic finding naming rxe0, rxe1"; fail=1; }
"$probe" --probe-verbs --json > "$out"
grep -q '"name": "rxe0"' "$out" && grep -q '"dmabuf_probe": "unsupported"' "$out" ||
  { echo "FAIL: JSON output lacks the rxe0 probe"; cat "$out"; fail=1; }
exit "$fail"
