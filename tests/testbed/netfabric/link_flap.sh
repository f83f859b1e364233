#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A link that flaps must not end the job: rxe0's cable is pulled out of its switch port for
# 2 s during a verified transfer, three times (three transfers: it must hold every time). The test bed
# runs with --switch so that vethA loses carrier and stays up, as a NIC does: `ip link set vethA down`
# would flush vethA's routes, and rxe fails every work request it then sends on vethA (a clear-to-send
# posted as the link went down ended a run that way), which no NIC does. Each time the plugin says
# [link.down] once (naming the retransmission budget) and [link.recovered] once traffic flows again;
# the transfer completes on both ends with the data intact. rxe's retry count 7 is infinite, so only
# railscope's budget could end it (34 s at the defaults; a flap of 2 s is far inside it).
# When the traffic after the outage is the transfer's last and ends between two of the sampler's
# ticks (a fast host, some flaps), the sampler's last look at close says [link.recovered] ("packets in
# the last 0.N s"); before, nothing was said and the log ended on [link.down].
# usage: link_flap.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/../netfaults/faultlib.sh"
. "$(dirname "$0")/fabriclib.sh"
RS=$1
flaps=3
# One verified transfer per flap (each must hold), the cable out for 2 s two seconds into it.
for ((f = 1; f <= flaps; f++)); do
    fb_transfer "flap$f" $((18720 + f)) 1M 100 32 150
    for ((i = 0; i < 300; i++)); do
        grep -q '^# railscope netbench' "$(nf_log "flap$f-client")" && break
        tb_sleep 0.2
    done
    tb_sleep 2
    kill -0 "${NF_PIDS[flap$f-client]}" 2>/dev/null || nf_fail "flap $f: the transfer ended before the flap"
    nf_mark
    tb_cable_pull vethA || nf_fail "flap $f: tb_cable_pull"
    tb_sleep 2
    tb_cable_plug vethA || nf_fail "flap $f: tb_cable_plug"
    echo "flap $f: rxe0's cable out for $(nf_elapsed) s"
    fb_wait "flap$f" 200
    echo "flap $f: transfer done $(nf_elapsed) s after the link went down"
    log=$(nf_log "flap$f-server")
    grep -hE 'NCCL WARN.*\[(link|fabric)\.' "$log" "$(nf_log "flap$f-client")" | cut -c1-220
    n=$(grep -chE 'NCCL WARN.*\[link\.down\] rxe0:1' "$log")
    [[ $n == 1 ]] || nf_fail "flap $f: [link.down] on rxe0:1 logged $n times (once per flap)"
    line=$(grep -hE 'NCCL WARN.*\[link\.down\] rxe0:1' "$log" | head -n1)
    [[ $line == *"for 34.4 s"*"retry_cnt 7"* ]] || nf_fail "flap $f: [link.down] does not name the budget: $line"
    line=$(grep -hE 'NCCL WARN.*\[link\.recovered\] rxe0:1' "$log" | head -n1)
    [[ $line =~ after\ ([0-9]+)\.[0-9]\ s && ${BASH_REMATCH[1]} -ge 2 ]] ||
        nf_fail "flap $f: no [link.recovered] saying how long the link was down (>= 2 s): $line"
    # (fabric.packet_loss may follow: under TCG the retransmissions after the outage time out again and
    # again for a while, which the counters rightly show as losses.)
    grep -qhE 'NCCL WARN.*\[(async\.port_error|progress\.stalled|wc\.)' "$log" "$(nf_log "flap$f-client")" &&
        nf_fail "flap $f: a connection failed"
    grep -qhE 'NCCL WARN.*\[link\.down\] rxe1:1' "$log" &&
        nf_fail "flap $f: the server warned about rxe1, a port it does not use"
    if (( NF_FAILED )); then nf_show "flap$f-client" "flap$f-server"; break; fi
done
nf_result
