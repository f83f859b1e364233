#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `railscope doctor --watch 3 --json` during a netbench transfer over soft-RoCE (rxe0@vethA <-> rxe1@vethB),
# twice in one boot: first the healthy twin (no fabric finding, traffic non-zero), then (5 s) with
# `tc qdisc add dev vethB root netem loss 2%`: the loss category rises on the port behind
# vethB and doctor shows it (and names [fabric.packet_loss] once past its floor). Checked by check_watch.py.
# usage: watch_loss.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/../netfaults/faultlib.sh"
RS=$1
CHECK="$(dirname "$0")/check_watch.py"

# A 1 MiB bandwidth stream from rxe1 to rxe0 that outlasts the watch (killed afterwards). --bytes-per-size
# lifts netbench's default 32 MiB budget per size, which a quiet host moves in ~1.5 s, before the watch.
start_stream() {
    local port=$1
    # --poll sleep: netbench leaves the guest's two vCPUs to rxe, whose retransmission timer otherwise
    # fires now and then on a starved guest (ACK timeouts that are the emulation's, not the fabric's).
    nf_start server timeout 200 "$RS" netbench server --dev rxe0 --oob-port "$port" --timeout 150 --poll sleep
    tb_wait_tcp_listen "$port" 30 || nf_fail "server did not listen"
    nf_start client timeout 200 stdbuf -oL "$RS" netbench client --dev rxe1 --oob-host 127.0.0.1 \
        --oob-port "$port" --min-size 1M --max-size 1M --iters 100000 --bytes-per-size 200G --mode bw \
        --no-verify --timeout 150 --poll sleep
    for ((i = 0; i < 300; i++)); do
        grep -q '^# railscope netbench' "$(nf_log client)" && break
        tb_sleep 0.2
    done
    tb_sleep 1
}

stop_stream() {
    kill "${NF_PIDS[client]}" "${NF_PIDS[server]}" 2>/dev/null
    wait "${NF_PIDS[client]}" "${NF_PIDS[server]}" 2>/dev/null
}

watch() {  # watch NAME [SECONDS]: doctor --watch SECONDS (3) --json into $TESTBED_SCRATCH/NAME.json, status in WATCH_RC
    local t0=${EPOCHREALTIME/./} s=${2:-3}
    "$RS" doctor --watch "$s" --json > "$TESTBED_SCRATCH/$1.json" 2> "$TESTBED_SCRATCH/$1.err"
    WATCH_RC=$?
    echo "$1: doctor --watch $s took $(( (${EPOCHREALTIME/./} - t0) / 1000 )) ms, exit $WATCH_RC"
}

start_stream 18640
watch healthy
stop_stream
python3 "$CHECK" healthy "$TESTBED_SCRATCH/healthy.json" "$WATCH_RC" || nf_fail "healthy twin"

tc qdisc add dev vethB root netem loss 2% || nf_fail "tc netem"
start_stream 18641
watch lossy 5
stop_stream
tc qdisc del dev vethB root 2>/dev/null
python3 "$CHECK" lossy "$TESTBED_SCRATCH/lossy.json" "$WATCH_RC" || nf_fail "lossy run"
(( NF_FAILED )) && nf_show server client
nf_result
