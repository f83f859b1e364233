#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An MTU lowered under live QPs: both veths start at MTU 9000 (active_mtu 4096, QPs with
# path MTU 4096); vethB (rxe1's netdev) goes to 1500 mid-transfer. The client on rxe1 must name
# [mtu.changed] rxe1 4096 → 1024 within ~3 s (the sampler's once-a-second tick), before the stall
# watchdog ends the transfer (NCCL_IB_TIMEOUT=17: a 4.3 s budget; at the defaults it would come after
# 34 s as progress.stalled, a line that never says MTU). Setting the MTU back does not revive the
# transfer: the kernel keeps the lowered path MTU of the route for minutes, so the case ends with the
# stall, as it would in a job.
# usage: mtu_changed.sh RAILSCOPE_CLI   (testbed run --mtu-a 9000 --mtu-b 9000)
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/../netfaults/faultlib.sh"
. "$(dirname "$0")/fabriclib.sh"
RS=$1
export NCCL_IB_TIMEOUT=17
fb_transfer mtu 18730 1M 800 8 60
for ((i = 0; i < 300; i++)); do
    grep -q '^# railscope netbench' "$(nf_log mtu-client)" && break
    tb_sleep 0.2
done
tb_sleep 2
kill -0 "${NF_PIDS[mtu-client]}" 2>/dev/null || nf_fail "the transfer ended before the MTU change"
tb_set_mtu vethB 1500 || nf_fail "could not lower vethB's MTU"
nf_mark
log=$(nf_log mtu-client)
if nf_wait_diag 'mtu\.changed' 10 "$log"; then
    line=$(grep -hE 'NCCL WARN.*\[mtu\.changed\]' "$log" | head -n1)
    [[ $line == *"rxe1:1: active_mtu 4096 → 1024 after connect"*"QPs use 4096"* ]] ||
        nf_fail "the line does not name the port and both MTUs: $line"
    [[ ${NF_DIAG_AT%.*} -lt 4 ]] || nf_fail "[mtu.changed] came after ${NF_DIAG_AT} s (at most ~3 s)"
else
    nf_fail "no [mtu.changed] within 10 s of lowering vethB's MTU"
fi
nf_wait_exit mtu-client 90 || nf_fail "client hangs (killed after 90 s)"
nf_wait_exit mtu-server 90 || nf_fail "server hangs (killed after 90 s)"
for end in client server; do
    [[ ${NF_RC[mtu-$end]} == 0 || ${NF_RC[mtu-$end]} == 1 ]] ||
        nf_fail "$end ended with status ${NF_RC[mtu-$end]} (crash or kill?)"
done
first=$(grep -hoE 'NCCL WARN.*\[(mtu\.changed|progress\.stalled|wc\.[a-z_]+|async\.[a-z_]+)\]' "$log" | head -n1)
[[ $first == *"[mtu.changed]"* ]] || nf_fail "the first diagnosis of the client is not [mtu.changed]: $first"
n=$(grep -chE 'NCCL WARN.*\[mtu\.changed\]' "$log")
[[ $n == 1 ]] || nf_fail "[mtu.changed] logged $n times (once per change)"
grep -qhE 'NCCL WARN.*\[mtu\.changed\]' "$(nf_log mtu-server)" && nf_fail "the server's port rxe0 did not change"
tb_set_mtu vethB 9000
if (( NF_FAILED )); then nf_show mtu-client mtu-server; fi
nf_result
