#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault: vethA (rxe0's netdev) goes down during a transfer. Both ends must end with a diagnosis
# ([progress.stalled], [wc.retry_exceeded] or the port event [async.port_error]) within 60 s, no crash,
# no hang. Runs in its own boot: a QP sending into a dead link can soft-lock rxe (tests/testbed/README.md).
# usage: link_down.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/faultlib.sh"
RS=$1
ids='progress\.stalled|wc\.retry_exceeded|async\.port_error'
port=18620
nf_start_bulk $port 90
tb_link_down vethA
echo "vethA down at $(nf_elapsed) s"
nf_wait_diag "$ids" 60 "$(nf_log client)" "$(nf_log server)" ||
    nf_fail "no [progress.stalled]/[wc.retry_exceeded]/[async.port_error] within 60 s of the link going down"
nf_wait_exit client 100 || nf_fail "client hangs (killed after 100 s)"
nf_wait_exit server 100 || nf_fail "server hangs (killed after 100 s)"
tb_link_up vethA
nf_show server client
[[ ${NF_RC[client]} == 1 || ${NF_RC[server]} == 1 ]] || nf_fail "no end reported the failure"
for n in server client; do
    [[ ${NF_RC[$n]} == 0 || ${NF_RC[$n]} == 1 ]] || nf_fail "$n ended with status ${NF_RC[$n]} (crash or kill?)"
done
nf_result
