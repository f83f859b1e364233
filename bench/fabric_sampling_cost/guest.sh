#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of bench/fabric_sampling_cost: OFF ON OFF ON ... OFF for each row, ROUNDS pairs per row
# (bench/lib/alternate.sh; the variable alternated is RAILSCOPE_NET_FABRIC_SAMPLING).
# Written in bench/net_vs_build's manifest format (base = sampling off, new = sampling on).
# usage: guest.sh BUILD OUT ROUNDS
set -uo pipefail
BUILD=$1 OUT=$2 ROUNDS=$3
# shellcheck source=bench/lib/alternate.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/alternate.sh"
netbench() {  # RAILSCOPE_NET_FABRIC_SAMPLING is exported for this run
  timeout 300 "$BUILD/tools/railscope" netbench --pair rxe0,rxe1 \
    --plugin "$BUILD/plugin/net/libnccl-net-railscope.so" --no-verify --json --timeout 60 "$@"
}
alternate_init "$OUT" "$ROUNDS" RAILSCOPE_NET_FABRIC_SAMPLING 0 1 netbench
alternate_row bw-1M --mode bw --min-size 1M --max-size 1M --iters 64 --warmup 4
alternate_row lat-8-spin --mode lat --min-size 8 --max-size 8 --lat-iters 2000 --poll spin
alternate_done
# The CPU time of one fabric-watch tick per port (tick_cost.cpp), on the guest's real rxe sysfs.
"$BUILD/bench/fabric_sampling_cost/tick_cost" --ticks 500 rxe0:1:vethA rxe1:1:vethB > "$OUT/tick_cost.txt" 2>&1
