#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault: a send that the link silently stops carrying. rxe0's netdev MTU is lowered to 576 during a
# transfer, so every full-size packet towards rxe0 is dropped on the wire while the ports stay ACTIVE
# and both processes stay alive. With NCCL_IB_RETRY_CNT=7 rxe retransmits forever (7 means "no limit"
# to rxe's completer), so no completion error, no async event and no socket close will ever come:
# only railscope's watchdog can end it. NCCL_IB_TIMEOUT=14 (67 ms a try) makes the budget the 2 s
# floor. The sender must end with [progress.stalled] naming the peer and the budget, before any
# completion error, no crash, no hang; the receiver then sees the sender go.
# usage: stall.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/faultlib.sh"
RS=$1
port=18640
export NCCL_IB_TIMEOUT=14 NCCL_IB_RETRY_CNT=7
nf_start_bulk $port 150
ip link set vethA mtu 576 || nf_fail "could not lower vethA's MTU"
echo "vethA MTU 576 at $(nf_elapsed) s"
if nf_wait_diag 'progress\.stalled' 60 "$(nf_log client)"; then
    line=$(grep -hE 'NCCL WARN.*\[progress\.stalled\]' "$(nf_log client)" | head -n1)
    [[ $line == *"10.0.0.1"* || $line == *rxe0* ]] || nf_fail "the stall line does not name the peer: $line"
    [[ $line == *"budget 2.0 s"* ]] || nf_fail "the stall line does not give the 2 s budget: $line"
    grep -qE 'NCCL WARN.*\[(wc\.|async\.)' "$(nf_log client)" &&
        nf_fail "a completion error or port event came first: this case did not test the stall watchdog"
else
    nf_fail "no [progress.stalled] within 60 s of the MTU change"
fi
nf_wait_exit client 60 || nf_fail "client hangs (killed after 60 s)"
nf_wait_exit server 60 || nf_fail "server hangs (killed after 60 s)"
ip link set vethA mtu 1500
nf_show server client
[[ ${NF_RC[client]} == 1 ]] || nf_fail "the client (sender) did not fail (status ${NF_RC[client]})"
[[ ${NF_RC[server]} == 0 || ${NF_RC[server]} == 1 ]] || nf_fail "server ended with status ${NF_RC[server]} (crash or kill?)"
nf_result
