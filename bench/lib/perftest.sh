# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# perftest between two RDMA ports, for the guest side of a bench (sourced; needs guest-lib.sh's
# tb_wait_tcp_listen and tb_gid_index_v4, which read /proc and sysfs only): by default the test bed's, the
# server on rxe0, the client on rxe1 sending to 10.0.0.1, each with its port's IPv4 RoCE v2 GID index.
# usage: source bench/lib/perftest.sh
#        bytes SIZE                                  (8, 64K, 4M -> bytes)
#        perftest_gid DEV VAR                        (VAR = DEV's IPv4 RoCE v2 GID index; empty on InfiniBand)
#        perftest_pair TOOL SIZE ITERS PORT OUT G0 G1  (client output in OUT, server's in OUT.server; an
#                                                     empty G0 or G1: no -x, InfiniBand addressing)
#        PERFTEST_PIN=A,B: the server on CPU A only, the client on CPU B (taskset)
#        DEVS=SERVER_DEV,CLIENT_DEV (default rxe0,rxe1)
#        PERFTEST_SERVER: where the client reaches the server's socket (default 10.0.0.1, rxe0's address in the
#        test bed); the socket carries perftest's set-up only, the data goes between the two devices

bytes() { case $1 in *M) echo $(( ${1%M} << 20 ));; *K) echo $(( ${1%K} << 10 ));; *) echo "$1";; esac; }

perftest_gid() {
    local link
    read -r link < "/sys/class/infiniband/$1/ports/1/link_layer" || { echo "perftest_gid: no device $1" >&2; return 1; }
    if [[ $link == InfiniBand ]]; then
        printf -v "$2" '%s' ""
    else
        tb_gid_index_v4 "$1" "$2"
    fi
}

perftest_pair() {
    local tool=$1 size=$2 iters=$3 port=$4 out=$5 g0=$6 g1=$7 spid devs=${DEVS:-rxe0,rxe1}
    local on_server=() on_client=() gid_server=() gid_client=()
    [[ -z $g0 ]] || gid_server=(-x "$g0")
    [[ -z $g1 ]] || gid_client=(-x "$g1")
    if [[ -n ${PERFTEST_PIN:-} ]]; then
        on_server=(taskset -c "${PERFTEST_PIN%,*}")
        on_client=(taskset -c "${PERFTEST_PIN#*,}")
    fi
    timeout 120 "${on_server[@]}" "$tool" -d "${devs%,*}" "${gid_server[@]}" -s "$(bytes "$size")" -n "$iters" -F \
        -p "$port" > "$out.server" 2>&1 &
    spid=$!
    tb_wait_tcp_listen "$port" 30
    timeout 120 "${on_client[@]}" stdbuf -oL "$tool" -d "${devs#*,}" "${gid_client[@]}" -s "$(bytes "$size")" \
        -n "$iters" -F -p "$port" "${PERFTEST_SERVER:-10.0.0.1}" > "$out" 2>&1
    wait "$spid"
}
