# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for the net-plugin fault tests (guest side). Source after "$TESTBED_LIB".
#   nf_start NAME CMD...        run CMD in the background, output in $TESTBED_SCRATCH/NAME.log; pid in NF_PIDS[NAME]
#   nf_wait_diag REGEX LIMIT LOG...
#                               wait until a plugin WARN line (NCCL WARN) carries one of the diagnosis ids
#                               in REGEX (e.g. 'peer\.closed|progress\.stalled'); prints the line, sets NF_DIAG_AT
#                               (seconds since nf_mark); fails after LIMIT seconds
#   nf_wait_exit NAME LIMIT     wait until NAME exits (status in NF_RC[NAME]); fails (and kills it) after LIMIT s
#   nf_mark                     start the clock for nf_wait_diag / nf_elapsed
#   nf_elapsed                  seconds since nf_mark (one decimal)
#   nf_fail MSG / nf_result     record a failure / exit with the verdict
#   nf_start_bulk PORT LIMIT    netbench server on rxe0 and client on rxe1 (64 MiB messages, bandwidth mode,
#                               netbench --timeout LIMIT), returns once the transfer runs; then nf_mark

declare -gA NF_PIDS=() NF_RC=()
NF_FAILED=0
NF_T0=${EPOCHREALTIME/./}

nf_mark() { NF_T0=${EPOCHREALTIME/./}; }
nf_elapsed() {
    local now=${EPOCHREALTIME/./}
    local d=$(( (now - NF_T0) / 100000 ))
    printf '%d.%d' $((d / 10)) $((d % 10))
}
nf_fail() { echo "FAIL: $*"; NF_FAILED=1; }
nf_result() {
    if (( NF_FAILED )); then echo "RESULT: FAILED"; exit 1; fi
    echo "RESULT: ok"; exit 0
}

nf_start() {
    local name=$1; shift
    "$@" > "$TESTBED_SCRATCH/$name.log" 2>&1 &
    NF_PIDS[$name]=$!
}

nf_log() { echo "$TESTBED_SCRATCH/$1.log"; }

nf_wait_diag() {
    local regex=$1 limit=$2; shift 2
    local line deadline=$(( ${EPOCHREALTIME/./} + limit * 1000000 ))
    while (( ${EPOCHREALTIME/./} < deadline )); do
        line=$(grep -hE "NCCL WARN.*\[($regex)\]" "$@" 2>/dev/null | head -n1)
        if [[ -n $line ]]; then
            NF_DIAG_AT=$(nf_elapsed)
            echo "diagnosis after ${NF_DIAG_AT} s: $line"
            return 0
        fi
        tb_sleep 0.25
    done
    return 1
}

nf_wait_exit() {
    local name=$1 limit=$2 pid=${NF_PIDS[$1]}
    local deadline=$(( ${EPOCHREALTIME/./} + limit * 1000000 ))
    while kill -0 "$pid" 2>/dev/null; do
        if (( ${EPOCHREALTIME/./} >= deadline )); then
            kill -9 "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            NF_RC[$name]=timeout
            return 1
        fi
        tb_sleep 0.2
    done
    wait "$pid"
    NF_RC[$name]=$?
    return 0
}

# nf_show NAME...: print the logs (for the test output)
nf_show() {
    local n
    for n in "$@"; do
        echo "---- $n ----"
        cat "$(nf_log "$n")"
    done
}

nf_start_bulk() {
    local port=$1 limit=$2 i
    nf_start server timeout $((limit + 50)) "$RS" netbench server --dev rxe0 --oob-port "$port" --timeout "$limit" \
        --buffer-bytes 134217728
    tb_wait_tcp_listen "$port" 30 || nf_fail "server did not listen"
    nf_start client timeout $((limit + 50)) stdbuf -oL "$RS" netbench client --dev rxe1 --oob-host 127.0.0.1 \
        --oob-port "$port" --min-size 64M --max-size 64M --iters 40 --mode bw --no-verify --timeout "$limit" \
        --buffer-bytes 134217728
    for ((i = 0; i < 300; i++)); do
        grep -q '^# railscope netbench' "$(nf_log client)" && break
        tb_sleep 0.2
    done
    tb_sleep 2
    nf_mark
}
