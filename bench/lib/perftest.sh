# shellcheck shell=bash
# perftest between the test bed's two rxe ports, for the guest side of a bench (sourced; needs
# guest-lib.sh's tb_wait_tcp_listen): the server on rxe0, the client on rxe1 sending to 10.0.0.1,
# each with its port's IPv4 RoCE v2 GID index.
# usage: source bench/lib/perftest.sh
#        bytes SIZE                                  (8, 64K, 4M -> bytes)
#        perftest_pair TOOL SIZE ITERS PORT OUT G0 G1  (client output in OUT, server's in OUT.server)
#        PERFTEST_PIN=A,B: the server on CPU A only, the client on CPU B (taskset)

bytes() { case $1 in *M) echo $(( ${1%M} << 20 ));; *K) echo $(( ${1%K} << 10 ));; *) echo "$1";; esac; }

perftest_pair() {
    local tool=$1 size=$2 iters=$3 port=$4 out=$5 g0=$6 g1=$7 spid
    local on_server=() on_client=()
    if [[ -n ${PERFTEST_PIN:-} ]]; then
        on_server=(taskset -c "${PERFTEST_PIN%,*}")
        on_client=(taskset -c "${PERFTEST_PIN#*,}")
    fi
    timeout 120 "${on_server[@]}" "$tool" -d rxe0 -x "$g0" -s "$(bytes "$size")" -n "$iters" -F -p "$port" > "$out.server" 2>&1 &
    spid=$!
    tb_wait_tcp_listen "$port" 30
    timeout 120 "${on_client[@]}" stdbuf -oL "$tool" -d rxe1 -x "$g1" -s "$(bytes "$size")" -n "$iters" -F -p "$port" 10.0.0.1 \
        > "$out" 2>&1
    wait "$spid"
}
