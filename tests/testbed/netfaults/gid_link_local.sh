#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault: the GID index forced to 0 (fe80:: link-local) on the receiving end only, default selection on the
# other. The acceptance criterion: "one end uses a link-local GID towards a routed peer -> fail the connection with one line
# naming both ends, both GIDs and the fix". The connection must fail within 60 s with [gid.link_local], the
# line must name the link-local GID and the peer's IPv4-mapped GID; no crash, no hang.
# usage: gid_link_local.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/faultlib.sh"
RS=$1
port=18600
nf_mark
nf_start server env NCCL_IB_GID_INDEX=0 timeout 120 "$RS" netbench server --dev rxe0 --oob-port $port \
    --timeout 90
tb_wait_tcp_listen $port 30 || nf_fail "server did not listen"
nf_start client timeout 120 "$RS" netbench client --dev rxe1 --oob-host 127.0.0.1 --oob-port $port \
    --max-size 64K --iters 10 --lat-iters 5 --timeout 90
if ! nf_wait_diag 'gid\.link_local' 60 "$(nf_log server)" "$(nf_log client)"; then
    nf_fail "no [gid.link_local] diagnosis within 60 s"
fi
grep -hE '\[gid\.link_local\].*fe80:.*::ffff:10\.0\.0\.|\[gid\.link_local\].*::ffff:10\.0\.0\..*fe80:' \
    "$(nf_log server)" "$(nf_log client)" >/dev/null || nf_fail "the [gid.link_local] line does not name both GIDs"
nf_wait_exit client 100 || nf_fail "client hangs (killed after 100 s)"
nf_wait_exit server 100 || nf_fail "server hangs (killed after 100 s)"
nf_show server client
[[ ${NF_RC[client]} != 0 || ${NF_RC[server]} != 0 ]] || nf_fail "both ends reported success"
for n in server client; do
    [[ ${NF_RC[$n]} == 0 || ${NF_RC[$n]} == 1 ]] || nf_fail "$n ended with status ${NF_RC[$n]} (crash or kill?)"
done
nf_result
