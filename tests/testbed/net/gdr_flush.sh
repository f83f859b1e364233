#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# In the soft-RoCE guest: iflush through the ABI under every RAILSCOPE_NET_FLUSH setting. Host
# memory on rxe never needs a flush, so auto/off (and NCCL_GDR_FLUSH_DISABLE) must return no request;
# force must run the loopback RDMA read end to end and complete it, also with NCCL_GDR_FLUSH_DISABLE=1.
# Usage: gdr_flush.sh NET_GDR
set -uo pipefail
bin="$1"
fail=0
run() {  # EXPECT ENV...
  local expect="$1"
  shift
  echo "== $* net_gdr flush $expect"
  env "$@" "$bin" flush "$expect" || { echo "FAIL: $* -> expected flush=$expect"; fail=1; }
}
run yes RAILSCOPE_NET_FLUSH=force
run yes RAILSCOPE_NET_FLUSH=force NCCL_GDR_FLUSH_DISABLE=1
run no RAILSCOPE_NET_FLUSH=auto
run no RAILSCOPE_NET_FLUSH=off
run no NCCL_GDR_FLUSH_DISABLE=1
exit "$fail"
