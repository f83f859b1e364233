#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of bench/net_vs_perftest (runs inside one test-bed boot): alternates perftest and
# `railscope netbench --pair rxe0,rxe1` on the same pair and direction (rxe1 sends to rxe0), writing
# each tool's raw output and a manifest (order, tool, size, file) into OUT. ratios.py reads them.
# usage: guest.sh RAILSCOPE_CLI OUT [SIZES...]     SIZES default: 1M 4M
set -uo pipefail
. "$TESTBED_LIB"
# shellcheck source=bench/lib/perftest.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/perftest.sh"
RS=$1 OUT=$2; shift 2
SIZES=("${@:-1M 4M}")
[[ $# -eq 0 ]] && SIZES=(1M 4M)
mkdir -p "$OUT"
manifest=$OUT/manifest.txt
: > "$manifest"
tb_gid_index_v4 rxe0 g0
tb_gid_index_v4 rxe1 g1
seq=0

perftest() {  # perftest TOOL SIZE ITERS
    local tool=$1 size=$2 iters=$3 f
    f=$OUT/$(printf '%02d' $seq)-$tool-$size.txt
    perftest_pair "$tool" "$size" "$iters" $((18515 + seq)) "$f" "$g0" "$g1"
    echo "$seq $tool $size $f" >> "$manifest"
    seq=$((seq + 1))
}

netbench() {  # netbench MODE SIZE ITERS [NETBENCH ARGS]
    local mode=$1 size=$2 iters=$3 f tool=netbench_$1
    shift 3
    [[ $# -gt 0 ]] && tool=netbench_$mode-$2  # MODE SIZE ITERS --poll sleep: netbench_bw-sleep
    f=$OUT/$(printf '%02d' $seq)-$tool-$size.json
    if [[ $mode == bw ]]; then
        timeout 300 "$RS" netbench --pair rxe0,rxe1 --mode bw --min-size "$size" --max-size "$size" \
            --iters "$iters" --warmup 4 --no-verify --json --timeout 60 "$@" > "$f" 2> "$f.err"
    else
        timeout 300 "$RS" netbench --pair rxe0,rxe1 --mode lat --min-size "$size" --max-size "$size" \
            --lat-iters "$iters" --no-verify --json --timeout 60 "$@" > "$f" 2> "$f.err"
    fi
    echo "$seq $tool $size $f" >> "$manifest"
    seq=$((seq + 1))
}

for size in "${SIZES[@]}"; do
    n=$(( (64 << 20) / $(bytes "$size") )); (( n < 10 )) && n=10
    # P N P N P for each reference: every netbench run sits between two perftest runs.
    perftest ib_write_bw "$size" $n
    perftest ib_send_bw "$size" $n
    netbench bw "$size" $n
    perftest ib_write_bw "$size" $n
    perftest ib_send_bw "$size" $n
    netbench bw "$size" $n
    perftest ib_write_bw "$size" $n
    perftest ib_send_bw "$size" $n
    # For information: netbench's processes sleeping when idle, as ib_write_bw's receiving side does.
    netbench bw "$size" $n --poll sleep
    perftest ib_write_bw "$size" $n
done
# Latency: ib_write_lat busy-polls, so the compared runs poll the same way (--poll spin); the runs with
# netbench's default (sched_yield when idle, as NCCL's proxy thread) are for information.
for rep in 1 2 3; do
    perftest ib_write_lat 8 2000
    netbench lat 8 2000 --poll spin
    perftest ib_write_lat 8 2000
    netbench lat 8 2000 --poll yield
done
perftest ib_write_lat 8 2000
echo "guest: $seq runs, manifest $manifest"
