#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of bench/net_vs_reference (one test-bed boot, or one pass of host.sh on a host with two RDMA ports):
# the same driver, `railscope netbench --pair rxe0,rxe1` (rxe1 sends to rxe0, one process per end), loads
# railscope's net plugin and the reference plugin by path through NCCL's net ABI, alternating railscope /
# reference / railscope / reference per size and window; perftest of the same boot and direction before and
# after each block. Writes each run's raw output and a manifest
# (order, tool, size, window, file) into OUT; ratios.py reads them.
# Each netbench run also records the packets both ports sent before and after (rxe: hw_counters/sent_pkts, RoCE
# packets; other devices: counters/port_xmit_packets, which counts whatever else the port sends too; neither:
# no packet figures).
# usage: guest.sh RAILSCOPE_CLI RAILSCOPE_PLUGIN REF_PLUGIN OUT        env: SIZES="64K 1M 4M" WINDOWS="8 32" REPS=2
#   DEVS=rxe0,rxe1: the receiving end's device and the sending end's (host.sh: a host's own), for netbench --pair
#   and perftest -d; PERFTEST_SERVER=10.0.0.1: where perftest's client reaches its server's socket
#   VARIANTS="rd:RAILSCOPE_NET_EAGER_MAX=0 ...": railscope again with that environment, after the reference run
#   of each pair (NAME:VAR=VALUE[,VAR=VALUE]); shown as railscope[NAME] in the table.
#   LAT_REPS=4 (railscope/reference pairs per latency cell)  LAT_SIZES="8" (ping-pong sizes)
#   LAT_POLLS="spin yield": netbench's --poll for the 8 B latency runs (ib_write_lat busy-polls; NCCL's proxy
#   yields), recorded in the manifest's window column.
#   PIN_CPUS=0,1: each end on one vCPU, the receiving end (server) on the first, the sender on the second:
#   netbench --pin-cpus, and taskset for perftest. Unpinned, where the scheduler puts the two processes
#   decides a run's rate more than the plugin does (README.md, "Pin the ends"). Recorded in guest-info.txt.
#   rxe does its packet work in softirqs, on vCPU 0 in this test bed whatever the pinning
#   (README.md, "Which end shares vCPU 0"): the end on vCPU 0 shares it with the emulated NIC.
#   PIN_CPUS=1,0 puts the sender there, the end that spins in netbench and in ib_write_bw alike;
#   PIN_CPUS=0,1 puts the receiver there, which netbench spins and ib_write_bw's server does not.
#   The softirq ticks of each vCPU over the boot's runs are recorded in guest-info.txt.
#   WIRE_CPUS=A,B: the vCPU whose receive backlog takes vethA's (rxe0's) and vethB's (rxe1's) packets: receive
#   packet steering, rps_cpus of each veth's rx-0. The test bed puts both on vCPU 0 (one CPU per veth keeps a
#   flow in order, guest/run-job.sh), and rxe's receive work, with the tasklets it schedules, follows the
#   packets. Default: the test bed's. Recorded in guest-info.txt.
#   RECVS=1: buffers per receive in the bandwidth runs of both plugins (netbench --recvs: NCCL's grouped
#   receives, n = 1..8; the sender keeps WINDOW x RECVS sends in flight), recorded in guest-info.txt.
#   BW_POLL=spin: netbench's --poll for the bandwidth runs of both plugins (spin, as NCCL's proxy; sleep: both
#   ends sleep after a pass that found nothing, as ib_write_bw's receiver does), recorded in guest-info.txt.
set -uo pipefail
. "$TESTBED_LIB"
# shellcheck source=bench/lib/perftest.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/perftest.sh"
# shellcheck source=bench/lib/netbench_stream.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/netbench_stream.sh"
RS=$1 RS_PLUGIN=$2 REF=$3 OUT=$4
read -r -a sizes <<< "${SIZES:-64K 1M 4M}"
read -r -a windows <<< "${WINDOWS:-8 32}"
read -r -a variants <<< "${VARIANTS:-}"
read -r -a lat_polls <<< "${LAT_POLLS:-spin}"
read -r -a lat_sizes <<< "${LAT_SIZES:-8}"
reps=${REPS:-2}
bw_poll=${BW_POLL:-spin}
recvs=${RECVS:-1}
[[ $recvs =~ ^[1-8]$ ]] || { echo "guest.sh: RECVS=$recvs is not 1..8" >&2; exit 2; }
pin=${PIN_CPUS:-}
pin_args=()
[[ -n $pin ]] && pin_args=(--pin-cpus "$pin")
export PERFTEST_PIN=$pin  # perftest_pair (bench/lib/perftest.sh)
case $bw_poll in spin | yield | sleep) ;; *) echo "guest.sh: BW_POLL=$bw_poll is not spin, yield or sleep" >&2; exit 2 ;; esac
lat_reps=${LAT_REPS:-4}  # single latency runs are bimodal on a loaded host (a scheduler tick or not)
wire=${WIRE_CPUS:-}
if [[ -n $wire ]]; then
    [[ $wire =~ ^([0-9]+),([0-9]+)$ ]] || { echo "guest.sh: WIRE_CPUS=$wire is not A,B (vCPU numbers)" >&2; exit 2; }
    [[ -d /sys/class/net/vethA && -d /sys/class/net/vethB ]] ||
        { echo "guest.sh: WIRE_CPUS steers the test bed's vethA and vethB; this machine has none" >&2; exit 2; }
    cpu_a=${BASH_REMATCH[1]} cpu_b=${BASH_REMATCH[2]}  # (tb_steer_rx's own match resets BASH_REMATCH)
    tb_steer_rx vethA "$cpu_a" && tb_steer_rx vethB "$cpu_b" || exit 2
fi
export DEVS=${DEVS:-rxe0,rxe1}  # netbench_stream and perftest_pair read it
[[ $DEVS =~ ^[^,]+,[^,]+$ ]] || { echo "guest.sh: DEVS=$DEVS is not RECEIVER_DEV,SENDER_DEV" >&2; exit 2; }
dev_server=${DEVS%,*} dev_client=${DEVS#*,}
perftest_gid "$dev_server" g0 && perftest_gid "$dev_client" g1 || exit 2
mkdir -p "$OUT"
manifest=$OUT/manifest.txt
: > "$manifest"
seq=0
{
    uptime; nproc; cat /sys/devices/system/clocksource/clocksource0/current_clocksource
    echo "devices (server,client): $DEVS; perftest GID indices: ${g0:-none},${g1:-none}"
    echo "bandwidth runs: --poll $bw_poll"; echo "buffers per receive (netbench --recvs): $recvs"
    echo "ends pinned to CPUs (server,client): ${pin:-none}"
    if [[ -d /sys/class/net/vethA ]]; then
        echo "receive steering (rps_cpus of vethA, vethB): $(cat /sys/class/net/veth{A,B}/queues/rx-0/rps_cpus | paste -sd,)"
    fi
} > "$OUT/guest-info.txt" 2>&1
# rxe's kernel work (its tasklets, packet processing) runs as softirqs: on which vCPU, over all runs.
read -r -a softirq_start <<< "$(softirq_ticks)"

perftest() {  # perftest TOOL SIZE ITERS
    local tool=$1 size=$2 iters=$3 f
    f=$OUT/$(printf '%03d' $seq)-$tool-$size.txt
    perftest_pair "$tool" "$size" "$iters" $((18515 + seq)) "$f" "$g0" "$g1"
    echo "$seq $tool $size - $f" >> "$manifest"
    seq=$((seq + 1))
}

sent_pkts() {  # the packets each end's port has sent so far: "SERVER CLIENT"
    local d p n out=()
    for d in "$dev_server" "$dev_client"; do
        p=/sys/class/infiniband/$d/ports/1
        n=
        read -r n < "$p/hw_counters/sent_pkts" 2> /dev/null || read -r n < "$p/counters/port_xmit_packets" 2> /dev/null
        [[ -z $n ]] || out+=("$n")
    done
    echo "${out[*]}"
}

netbench() {  # netbench WHO(railscope|reference|railscope[NAME]) MODE SIZE WINDOW|POLL ITERS [VAR=VALUE...]
    local who=$1 mode=$2 size=$3 window=$4 iters=$5 plugin f
    shift 5
    [[ $who == railscope* ]] && plugin=$RS_PLUGIN || plugin=$REF
    f=$OUT/$(printf '%03d' $seq)-$who-$mode-$size-$window.json
    sent_pkts > "$f.pkts"
    if [[ $mode == bw ]]; then
        netbench_stream "$RS" "$plugin" "$size" "$window" "$iters" 16 "$bw_poll" "$pin" "$recvs"
        timeout 300 env "$@" "${stream[@]}" > "$f" 2> "$f.err"
    else
        timeout 300 env "$@" "$RS" netbench --pair "$DEVS" --plugin "$plugin" --mode lat --min-size "$size" \
            --max-size "$size" --lat-iters "$iters" --bytes-per-size 1G --poll "$window" --no-verify --json \
            --timeout 60 "${pin_args[@]}" > "$f" 2> "$f.err"
    fi
    sent_pkts >> "$f.pkts"
    echo "$seq $who-$mode $size $window $f" >> "$manifest"
    seq=$((seq + 1))
}

for size in "${sizes[@]}"; do
    # 24 MiB per run, at least 40 messages (window 32 needs more than 32 to mean anything), and at least
    # 20 receives (RECVS=8 keeps up to 8 x WINDOW messages in flight: 40 would be mostly ramp-up).
    n=$(( (24 << 20) / $(bytes "$size") )); (( n < 40 )) && n=40; (( n < 20 * recvs )) && n=$((20 * recvs))
    perftest ib_write_bw "$size" "$n"
    perftest ib_send_bw "$size" "$n"
    for w in "${windows[@]}"; do
        for ((r = 0; r < reps; r++)); do
            netbench railscope bw "$size" "$w" "$n"
            netbench reference bw "$size" "$w" "$n"
            for v in "${variants[@]}"; do
                IFS=, read -r -a vars <<< "${v#*:}"
                netbench "railscope[${v%%:*}]" bw "$size" "$w" "$n" "${vars[@]}"
            done
        done
    done
    perftest ib_write_bw "$size" "$n"
    perftest ib_send_bw "$size" "$n"
done
# Latency (ib_write_lat busy-polls at both ends).
for size in "${lat_sizes[@]}"; do
    n=2000; (( $(bytes "$size") > 4096 )) && n=400
    perftest ib_write_lat "$size" $n
    for poll in "${lat_polls[@]}"; do
        for ((r = 0; r < lat_reps; r++)); do
            netbench railscope lat "$size" "$poll" $n
            netbench reference lat "$size" "$poll" $n
            for v in "${variants[@]}"; do
                IFS=, read -r -a vars <<< "${v#*:}"
                netbench "railscope[${v%%:*}]" lat "$size" "$poll" $n "${vars[@]}"
            done
        done
    done
    perftest ib_write_lat "$size" $n
done
read -r -a softirq_end <<< "$(softirq_ticks)"
{
    uptime
    printf 'softirq ticks by vCPU during the runs:'
    for i in "${!softirq_end[@]}"; do printf ' %s' $((softirq_end[i] - softirq_start[i])); done
    echo
} >> "$OUT/guest-info.txt" 2>&1
echo "guest: $seq runs, manifest $manifest"
