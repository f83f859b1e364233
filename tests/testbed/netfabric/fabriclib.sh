# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for the fabric-health cases of the net plugin (guest side). Source after "$TESTBED_LIB" and
# ../netfaults/faultlib.sh.
#   fb_transfer NAME PORT SIZE ITERS WINDOW LIMIT
#                                            netbench server on rxe0 and client on rxe1 (bandwidth mode,
#                                            payload verified), in the background; logs NAME-server/-client
#   fb_wait NAME LIMIT                       wait for both ends; fails unless both exit 0 (data intact)
#   fb_no_fabric_line LOG...                 fails when a log carries a fabric.* warning
#   fb_counters DEV                          rxe hw_counters of DEV port 1 as "name=value ..." (for the log)

fb_transfer() {
    local name=$1 port=$2 size=$3 iters=$4 window=$5 limit=$6
    nf_start "$name-server" timeout $((limit + 30)) "$RS" netbench server --dev rxe0 --oob-port "$port" \
        --timeout "$limit"
    tb_wait_tcp_listen "$port" 30 || nf_fail "$name: server did not listen"
    nf_start "$name-client" timeout $((limit + 30)) stdbuf -oL "$RS" netbench client --dev rxe1 \
        --oob-host 127.0.0.1 --oob-port "$port" --min-size "$size" --max-size "$size" --iters "$iters" \
        --window "$window" --warmup 1 --mode bw --timeout "$limit" --bytes-per-size 4096M
}

fb_wait() {
    local name=$1 limit=$2 end
    for end in client server; do
        nf_wait_exit "$name-$end" "$limit" || nf_fail "$name: $end hangs (killed after $limit s)"
        [[ ${NF_RC[$name-$end]} == 0 ]] || nf_fail "$name: $end ended with status ${NF_RC[$name-$end]}"
    done
}

fb_no_fabric_line() {
    local line
    line=$(grep -hE 'NCCL WARN.*\[(fabric\.|link\.|mtu\.changed)' "$@" | head -n3)
    [[ -z $line ]] || nf_fail "a healthy transfer logged: $line"
}

fb_counters() {
    local f out=""
    for f in /sys/class/infiniband/"$1"/ports/1/hw_counters/*; do
        out+="${f##*/}=$(<"$f") "
    done
    echo "$1: $out"
}
