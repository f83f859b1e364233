#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of monitoring.net_plugin_e2e (net_prom_e2e.py starts it with testbed run --rails 2): two jobs
# of one netbench pair each write the net plugin's Prometheus textfiles (RAILSCOPE_NET_PROM) into
# $TESTBED_SCRATCH/textfiles, which the host's node_exporter reads while they run:
#   sick     rail 0 (server rxe0, client rxe1), 2 % packet loss on vethB0 (netem);
#   healthy  rail 1 (server rxe2, client rxe3), as it is.
# They stream until the host creates $TESTBED_SCRATCH/stop (it has seen Prometheus's alerts settle) or
# LIMIT seconds pass, then end as a job killed by its scheduler does. Checks here: each job's file names
# the ports it drives, and the healthy job's logs carry no warning.
# usage: two_jobs.sh RAILSCOPE_CLI LIMIT
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/../netfaults/faultlib.sh"
RS=$1 LIMIT=$2
[[ ${TESTBED_RAILS:-1} -ge 2 ]] || { echo "FAIL: needs testbed run --rails 2"; exit 1; }
folder=$TESTBED_SCRATCH/textfiles
mkdir -p "$folder"
export NCCL_DEBUG=WARN RAILSCOPE_NET_PROM=$folder

tc qdisc add dev vethB0 root netem loss 2% || nf_fail "netem: tc qdisc add failed"
# job NAME RAIL IB_TIMEOUT: netbench server on rxe<2 RAIL>, client on rxe<2 RAIL + 1>, 64 KiB
# messages, 4 in flight.
job() {
    local name=$1 rail=$2 port=$((18900 + $2)) timeout=$3
    NCCL_IB_TIMEOUT=$timeout RAILSCOPE_PROFILE_TAG=$name nf_start "$name-server" timeout $((LIMIT + 20)) \
        "$RS" netbench server --dev "rxe$((2 * rail))" --oob-port "$port" --timeout "$LIMIT"
    tb_wait_tcp_listen "$port" 30 || nf_fail "$name: server did not listen"
    NCCL_IB_TIMEOUT=$timeout RAILSCOPE_PROFILE_TAG=$name nf_start "$name-client" timeout $((LIMIT + 20)) \
        "$RS" netbench client --dev "rxe$((2 * rail + 1))" --oob-host "10.0.$rail.1" --oob-port "$port" --min-size 64K \
        --max-size 64K --iters 100000000 --bytes-per-size 1T --window 4 --warmup 1 --mode bw --timeout "$LIMIT"
}
# The sick job's retransmission timeout is 0.5 s (as netfabric.health's lossy case: a lost packet costs
# little time); the healthy job keeps NCCL's default (4 s): at 0.5 s, an ACK late on the emulated CPUs that
# run both jobs' traffic was once counted as a loss.
job sick 0 17
job healthy 1 20

deadline=$(( ${EPOCHREALTIME/./} + LIMIT * 1000000 ))
until [[ -e $TESTBED_SCRATCH/stop ]] || (( ${EPOCHREALTIME/./} >= deadline )); do tb_sleep 0.5; done
[[ -e $TESTBED_SCRATCH/stop ]] || nf_fail "the host did not say stop within $LIMIT s"

# Each process's file names the ports its connections use.
for name in sick healthy; do
    rail=$([[ $name == sick ]] && echo 0 || echo 1)
    grep -qE "railscope_net_process_ports_info\{job=\"$name\".*ports=\"rxe$((2 * rail + 1)):1\"" \
        "$folder"/*.prom || nf_fail "no file of job $name names rxe$((2 * rail + 1)):1"
done
for end in client server; do
    for name in sick healthy; do kill -TERM "${NF_PIDS[$name-$end]}" 2>/dev/null; done
done
for end in client server; do
    for name in sick healthy; do nf_wait_exit "$name-$end" 30 || nf_fail "$name-$end did not end"; done
done
line=$(grep -hE 'NCCL WARN' "$(nf_log healthy-client)" "$(nf_log healthy-server)" | head -n3)
[[ -z $line ]] || nf_fail "the healthy job logged: $line"
if (( NF_FAILED )); then
    for log in healthy-client healthy-server sick-client sick-server; do
        echo "--- $log"; tail -c 1500 "$(nf_log $log)"
    done
fi
nf_result
