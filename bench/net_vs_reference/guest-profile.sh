#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of bench/net_vs_reference/profile.sh: ib_write_bw, then railscope, the reference and each of
# VARIANTS per --poll, then ib_write_bw again, each under `perf record -a -e cpu-clock -D 2000`; writes each
# run's output, its profile and summary.txt (rate, share of samples by vCPU and task, hottest symbols) into OUT.
# usage: guest-profile.sh RAILSCOPE_CLI RAILSCOPE_PLUGIN REF_PLUGIN OUT
set -uo pipefail
. "$TESTBED_LIB"
# shellcheck source=bench/lib/perftest.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/perftest.sh"
# shellcheck source=bench/lib/netbench_stream.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/netbench_stream.sh"
RS=$1 RS_PLUGIN=$2 REF=$3 OUT=$4
size=${SIZE:-1M} iters=${ITERS:-96} window=${WINDOW:-8} pin=${PIN_CPUS:-0,1}
read -r -a polls <<< "${POLLS:-spin yield sleep}"
read -r -a variants <<< "${VARIANTS:-}"  # NAME:VAR=VALUE[,VAR=VALUE]: railscope again with that environment
export PERFTEST_PIN=$pin
mkdir -p "$OUT"
tb_gid_index_v4 rxe0 g0
tb_gid_index_v4 rxe1 g1
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
summary=$OUT/summary.txt
echo "size $size, $iters messages, window $window, pinned (server,client) $pin; shares of all samples of both vCPUs" > "$summary"

profiled() {  # profiled NAME CMD...: the command under perf, from 2 s in (past connection set-up)
    local name=$1
    shift
    perf record -D 2000 -a -e cpu-clock -F 1000 -o "$OUT/$name.perf" -- "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
}
summarise() {  # summarise NAME RATE
    {
        echo "== $1: $2 MB/s"
        perf report -i "$OUT/$1.perf" --no-children --sort cpu,comm --stdio 2> /dev/null | grep -E '^ +[0-9]' | head -6
        echo "   hottest symbols:"
        perf report -i "$OUT/$1.perf" --no-children --sort cpu,sym --stdio 2> /dev/null | grep -E '^ +[0-9]' | head -8
    } >> "$summary"
}
perftest_run() {  # perftest_run NAME
    profiled "$1" bash -c '. "$TESTBED_LIB"; source "$0"; perftest_pair ib_write_bw "$1" "$2" 18600 "$3" "$4" "$5"' \
        "$(dirname "${BASH_SOURCE[0]}")/../lib/perftest.sh" "$size" "$iters" "$OUT/$1.txt" "$g0" "$g1"
    summarise "$1" "$(awk -v s="$(bytes "$size")" '$1 == s {print $4}' "$OUT/$1.txt")"
}
netbench_run() {  # netbench_run NAME PLUGIN POLL [VAR=VALUE...]
    local vars=("${@:4}")
    netbench_stream "$RS" "$2" "$size" "$window" "$iters" 4 "$3" "$pin"
    profiled "$1" timeout 300 env "${vars[@]}" "${stream[@]}"
    summarise "$1" "$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["results"][0]["bytes_per_s"] / 1e6, 2))' "$OUT/$1.out" 2> /dev/null)"
}
perftest_run ib_write_bw-1
for poll in "${polls[@]}"; do
    netbench_run "railscope-$poll" "$RS_PLUGIN" "$poll"
    netbench_run "reference-$poll" "$REF" "$poll"
    for v in "${variants[@]}"; do
        IFS=, read -r -a vars <<< "${v#*:}"
        netbench_run "railscope[${v%%:*}]-$poll" "$RS_PLUGIN" "$poll" "${vars[@]}"
    done
done
perftest_run ib_write_bw-2
echo "softirq ticks by vCPU since boot: $(softirq_ticks)" >> "$summary"
