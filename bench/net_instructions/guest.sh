#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of bench/net_instructions (one test-bed boot): `railscope netbench` server (rxe0) and client (rxe1) as
# two processes, one of them under `valgrind --tool=callgrind`, the other native. Collection only inside the
# plugin's per-message entry points (--collect-atstart=no and --toggle-collect on isend, irecv and test), so the
# callgrind file holds exactly the user-space instructions those calls execute, in the plugin, libibverbs, the rxe
# provider, libc and the vDSO. No verification. The measured side (SIDES):
#   pingpong: the client of `--mode lat` (NCCL's order: receives posted ahead; per round trip one isend, one
#             irecv, and the test()s until each is done): every message finds its receive posted, whatever the
#             timing, so both plugins take the same path in every run;
#   send, recv: the sender (client) or the receiver (server) of `--mode bw`, window 1, one receive per message,
#             no warm-up. Which path a message takes here depends on timing (an eager sender runs ahead of a
#             slow receiver: its messages arrive before their receives), so these rows vary from run to run.
# Each cell runs twice, with few and with many calls that find nothing to do (table.py separates a message's
# work from these idle calls with the two runs):
#   fast: the peer busy-polls on its own vCPU (--poll yield); the measured process sleeps 50 us after an idle
#         pass (--poll sleep);
#   slow: the peer shares its vCPU with a busy loop at nice 10 (it gets about a tenth of it); the measured
#         process busy-polls (--poll spin).
# The measured process has vCPU 0, the peer vCPU 1 (taskset).
# Writes OUT/manifest.txt ("seq who side size messages mode file status"), OUT/<seq>-*.cg (callgrind),
# .json (the client's report).
# usage: guest.sh RAILSCOPE_CLI RAILSCOPE_PLUGIN REF_PLUGIN OUT
#   env: CELLS="8:1000 64K:300" (size:messages or round trips)  MODES="fast slow"  SIDES="pingpong"
#        VARIANTS="nosample:RAILSCOPE_NET_FABRIC_SAMPLING=0" (railscope again with that environment;
#        NAME:VAR=VALUE[,VAR=VALUE], shown as railscope[NAME])  WHO="railscope reference" (plugins measured)
#        CG_OPTS (more callgrind options, e.g. --dump-instr=yes)
set -uo pipefail
# shellcheck source=tests/testbed/guest-lib.sh
. "$TESTBED_LIB"
# shellcheck source=bench/lib/perftest.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/perftest.sh"  # bytes
RS=$1 RS_PLUGIN=$2 REF=$3 OUT=$4
read -r -a cells <<< "${CELLS:-8:1000 64K:300}"
read -r -a modes <<< "${MODES:-fast slow}"
read -r -a sides <<< "${SIDES:-pingpong}"
read -r -a variants <<< "${VARIANTS-nosample:RAILSCOPE_NET_FABRIC_SAMPLING=0}"
read -r -a who_list <<< "${WHO:-railscope reference}"
read -r -a cg_opts <<< "${CG_OPTS-}"
mkdir -p "$OUT"
manifest=$OUT/manifest.txt
: > "$manifest"
seq=0
{ uptime; nproc; valgrind --version; cat /sys/devices/system/clocksource/clocksource0/current_clocksource; } \
    > "$OUT/guest-info.txt" 2>&1

# The entry points NCCL calls per message: railscope's ncclNetPlugin_v12 functions (plugin/net/abi/net_v12.cpp;
# abi::test is shared by every version), the reference's ncclIbIsend/ncclIbIrecv/ncclIbTest (its v11 table).
# Exact names ('?' stands for the '*' of a pointer type): a toggle on a function and on one it calls would
# switch collection off inside.
rs_toggles=(
    '--toggle-collect=railscope::net::(anonymous namespace)::isend(void?, void?, unsigned long, int, void?, void?, void??)'
    '--toggle-collect=railscope::net::(anonymous namespace)::irecv(void?, int, void??, unsigned long?, int?, void??, void??, void??)'
    '--toggle-collect=railscope::net::abi::test(void?, int?, int?)')
ref_toggles=(--toggle-collect=ncclIbIsend --toggle-collect=ncclIbIrecv --toggle-collect=ncclIbTest)

measure() {  # measure WHO SIDE SIZE MESSAGES MODE [VAR=VALUE...]
    local who=$1 side=$2 size=$3 n=$4 mode=$5 plugin port f spid rc hog=
    local poll=sleep peer=(taskset -c 1 nice -n 0) peer_poll=yield
    shift 5
    local toggles=("${rs_toggles[@]}")
    plugin=$RS_PLUGIN
    [[ $who == reference ]] && { plugin=$REF; toggles=("${ref_toggles[@]}"); }
    port=$((19000 + seq))
    f=$OUT/$(printf '%03d' $seq)-$who-$side-$size-$mode
    if [[ $mode == slow ]]; then
        poll=spin peer=(taskset -c 1 nice -n 10)
        taskset -c 1 bash -c 'while :; do :; done' &
        hog=$!
    fi
    local common=(--plugin "$plugin" --min-size "$(bytes "$size")" --max-size "$(bytes "$size")" --min-messages 1
        --min-time 0 --bytes-per-size 1G --buffer-bytes 1M --no-verify --timeout 900)
    if [[ $side == pingpong ]]; then
        common+=(--mode lat --lat-iters "$n")
        n=$((n + (n / 10 < 10 ? n / 10 : 10)))  # netbench adds min(n/10, 10) warm-up round trips (options.cpp)
    else
        common+=(--mode bw --window 1 --recvs 1 --iters "$n" --warmup 0)
    fi
    local cg=(taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$f.cg" --log-file="$f.vg.log"
        --collect-atstart=no "${cg_opts[@]}" "${toggles[@]}")
    local server=(netbench server --dev rxe0 --oob-host 127.0.0.1 --oob-port "$port" "${common[@]}")
    local client=(netbench client --dev rxe1 --oob-host 127.0.0.1 --oob-port "$port" "${common[@]}" --json)
    if [[ $side != recv ]]; then
        timeout 1200 env "$@" "${peer[@]}" "$RS" "${server[@]}" --poll "$peer_poll" > "$f.server" 2>&1 &
        spid=$!
        tb_wait_tcp_listen "$port" 120
        timeout 1200 env "$@" "${cg[@]}" "$RS" "${client[@]}" --poll "$poll" > "$f.json" 2> "$f.err"
    else
        timeout 1200 env "$@" "${cg[@]}" "$RS" "${server[@]}" --poll "$poll" > "$f.server" 2>&1 &
        spid=$!
        tb_wait_tcp_listen "$port" 300
        timeout 1200 env "$@" "${peer[@]}" "$RS" "${client[@]}" --poll "$peer_poll" > "$f.json" 2> "$f.err"
    fi
    rc=$?
    wait "$spid" || rc=$((rc ? rc : 1))
    [[ -z $hog ]] || { kill "$hog"; wait "$hog"; } 2> /dev/null
    echo "$seq $who $side $size $n $mode $f.cg $rc" >> "$manifest"
    echo "$seq $who $side $size n=$n $mode rc=$rc $(date +%T)"
    seq=$((seq + 1))
}

for cell in "${cells[@]}"; do
    size=${cell%%:*} n=${cell#*:}
    for side in "${sides[@]}"; do
        for mode in "${modes[@]}"; do
            for who in "${who_list[@]}"; do
                measure "$who" "$side" "$size" "$n" "$mode"
            done
            for v in "${variants[@]}"; do
                IFS=, read -r -a vars <<< "${v#*:}"
                measure "railscope[${v%%:*}]" "$side" "$size" "$n" "$mode" "${vars[@]}"
            done
        done
    done
done
{ uptime; } >> "$OUT/guest-info.txt" 2>&1
echo "guest: $seq runs, manifest $manifest"
