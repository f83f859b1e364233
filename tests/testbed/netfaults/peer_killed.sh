#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault: the peer process is killed (SIGKILL) in the middle of a transfer of 64 MiB messages; the survivor
# must end with [peer.closed] or [progress.stalled] within 60 s, no crash, no hang. Both ways: the
# receiver killed (the sender must notice), then the sender killed (the receiver must notice).
# usage: peer_killed.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/faultlib.sh"
RS=$1
ids='peer\.closed|progress\.stalled'

one_case() {  # one_case VICTIM SURVIVOR PORT
    local victim=$1 survivor=$2 port=$3
    echo "== kill the $victim during a transfer"
    nf_start "server$port" timeout 150 "$RS" netbench server --dev rxe0 --oob-port "$port" --timeout 90 --buffer-bytes 134217728
    tb_wait_tcp_listen "$port" 30 || nf_fail "server did not listen"
    nf_start "client$port" timeout 150 stdbuf -oL "$RS" netbench client --dev rxe1 --oob-host 127.0.0.1 \
        --oob-port "$port" --min-size 64M --max-size 64M --iters 40 --mode bw --no-verify --timeout 90 --buffer-bytes 134217728
    # Wait until the comms are up (the client prints its header), then let data flow for 2 s.
    local i
    for ((i = 0; i < 300; i++)); do
        grep -q '^# railscope netbench' "$(nf_log "client$port")" && break
        tb_sleep 0.2
    done
    tb_sleep 2
    kill -0 "${NF_PIDS[$survivor$port]}" 2>/dev/null || nf_fail "$survivor already gone before the kill"
    nf_mark
    # `timeout` is the direct child: kill the netbench process under it.
    pkill -9 -P "${NF_PIDS[$victim$port]}" -f 'railscope netbench' || kill -9 "${NF_PIDS[$victim$port]}"
    nf_wait_diag "$ids" 60 "$(nf_log "$survivor$port")" ||
        nf_fail "$survivor: no [peer.closed]/[progress.stalled] within 60 s of the kill"
    nf_wait_exit "$survivor$port" 100 || nf_fail "$survivor hangs after its peer died (killed after 100 s)"
    nf_wait_exit "$victim$port" 10
    nf_show "server$port" "client$port"
    [[ ${NF_RC[$survivor$port]} == 1 ]] ||
        nf_fail "$survivor ended with status ${NF_RC[$survivor$port]}, expected a clean failure (1)"
}

one_case server client 18610
one_case client server 18611
nf_result
