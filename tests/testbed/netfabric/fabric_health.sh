#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fabric health in the running job, one boot:
#  1. three healthy transfers: no fabric.* (nor link./mtu.changed) line, data intact;
#  2. 2 % packet loss on vethB (netem) during a transfer: both ends name [fabric.packet_loss] on their
#     own port (the client rxe1, the server rxe0) with non-zero deltas, and the data arrives intact;
#     the connections' stats lines (RAILSCOPE_NET_STATS) are written every 2 s while it runs, and the
#     sender's carry the port's loss delta;
#  3. a tbf rate limit on vethB: a slow transfer, no fabric.* line.
# The rxe counters before and after each step are printed (which ones a healthy run moves).
# usage: fabric_health.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/../netfaults/faultlib.sh"
. "$(dirname "$0")/fabriclib.sh"
RS=$1
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET

fb_counters rxe0; fb_counters rxe1
for i in 1 2 3; do
    fb_transfer "healthy$i" $((18700 + i)) 1M 16 32 60
    fb_wait "healthy$i" 90
    fb_no_fabric_line "$(nf_log "healthy$i-client")" "$(nf_log "healthy$i-server")"
    grep -h 'MB/s\|GB/s' "$(nf_log "healthy$i-client")" | tail -n1
done
fb_counters rxe0; fb_counters rxe1

tc qdisc add dev vethB root netem loss 2% || nf_fail "netem: tc qdisc add failed"
nf_mark
# 2 % of 1024-byte packets lost: a 1 MiB message (1024 packets) never gets through whole and each
# loss at its tail waits for the ACK timeout, so the transfer uses 64 KiB messages, one in flight (the
# watchdog times each send from its posting), and a 0.5 s ACK timeout (NCCL_IB_TIMEOUT=17: 4.096 us x
# 2^17, budget 4.3 s) to keep the case short.
# Its statistics are written every 2 s while it runs, with the ports' counter deltas.
export NCCL_IB_TIMEOUT=17 RAILSCOPE_NET_STATS=$TESTBED_SCRATCH/lossy-stats.jsonl RAILSCOPE_NET_STATS_INTERVAL=2
fb_transfer lossy 18710 64K 40 1 120
unset NCCL_IB_TIMEOUT RAILSCOPE_NET_STATS RAILSCOPE_NET_STATS_INTERVAL
nf_wait_diag 'fabric\.packet_loss' 60 "$(nf_log lossy-client)" "$(nf_log lossy-server)" ||
    nf_fail "no [fabric.packet_loss] within 60 s of 2 % loss on vethB"
fb_wait lossy 150
tc qdisc del dev vethB root
fb_counters rxe0; fb_counters rxe1
# The sender's port (rxe1, whose vethB drops) must name it; the receiver's may too (holes it saw).
echo "server: $(grep -hE 'NCCL WARN.*\[fabric\.' "$(nf_log lossy-server)" | head -n1)"
for end in client:rxe1; do
    log=$(nf_log "lossy-${end%%:*}") dev=${end#*:}
    line=$(grep -hE 'NCCL WARN.*\[fabric\.packet_loss\]' "$log" | head -n1)
    echo "${end%%:*}: $line"
    [[ $line =~ \[fabric\.packet_loss\]\ $dev:1:\ ([0-9]+)\  && ${BASH_REMATCH[1]} -gt 0 ]] ||
        nf_fail "${end%%:*}: no [fabric.packet_loss] naming $dev:1 with a non-zero count"
    [[ $line == *" +"[1-9]* ]] || nf_fail "${end%%:*}: the finding gives no counter deltas: $line"
    [[ $line == *"PFC"* ]] || nf_fail "${end%%:*}: the RoCE fix (PFC) is missing: $line"
    n=$(grep -chE 'NCCL WARN.*\[fabric\.packet_loss\]' "$log")
    [[ $n == 1 ]] || nf_fail "${end%%:*}: [fabric.packet_loss] logged $n times (once per port and kind)"
done

stats=$TESTBED_SCRATCH/lossy-stats.jsonl
periodic=$(grep -c '"final":false' "$stats")
(( periodic >= 2 )) || nf_fail "$periodic periodic stats lines during a transfer of several seconds (every 2 s)"
grep -q '"final":true' "$stats" || nf_fail "no stats line at close"
grep -qE '"role":"send".*"fabric":\{"loss":[1-9]' "$stats" ||
    nf_fail "no sender stats line carries the port's loss delta: $(grep -m1 '"role":"send"' "$stats")"

# A rate limit with a queue deep enough for all in flight (4 MiB): slow, nothing dropped.
tc qdisc add dev vethB root tbf rate 80mbit burst 64kb limit 32mb || nf_fail "tbf: tc qdisc add failed"
fb_transfer slow 18711 1M 12 4 120
fb_wait slow 150
tc qdisc del dev vethB root
grep -h 'MB/s\|GB/s' "$(nf_log slow-client)" | tail -n1
fb_no_fabric_line "$(nf_log slow-client)" "$(nf_log slow-server)"
fb_counters rxe0; fb_counters rxe1
if (( NF_FAILED )); then nf_show lossy-client lossy-server slow-client; fi
nf_result
