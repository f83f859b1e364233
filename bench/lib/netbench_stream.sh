# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# What the guest sides of bench/net_vs_reference share (sourced): the netbench command line of one bandwidth
# stream between two RDMA ports (DEVS=RECEIVER,SENDER, default the test bed's rxe0,rxe1), and where the
# guest's softirq time went.
# usage: source bench/lib/netbench_stream.sh
#        netbench_stream CLI PLUGIN SIZE WINDOW ITERS WARMUP POLL [PIN] [RECVS]
#            sets the array `stream` to `CLI netbench --pair $DEVS ... --mode bw` (RECVS buffers per
#            receive, default 1: one receive per message; no data check, JSON; PIN: --pin-cpus PIN), to run
#            as "${stream[@]}" under whatever wraps it
#        softirq_ticks: each vCPU's softirq ticks so far (/proc/stat), space-separated, vCPU 0 first
netbench_stream() {
    local cli=$1 plugin=$2 size=$3 window=$4 iters=$5 warmup=$6 poll=$7 pin=${8:-} recvs=${9:-1}
    stream=("$cli" netbench --pair "${DEVS:-rxe0,rxe1}" --plugin "$plugin" --mode bw --min-size "$size"
            --max-size "$size"
            --window "$window" --recvs "$recvs" --iters "$iters" --warmup "$warmup" --bytes-per-size 1G --poll "$poll"
            --no-verify --json --timeout 60)
    [[ -z $pin ]] || stream+=(--pin-cpus "$pin")
}

softirq_ticks() { awk '/^cpu[0-9]/ {printf "%s ", $8}' /proc/stat; }
