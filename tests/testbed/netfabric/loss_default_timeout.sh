#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Loss judged by what it costs, with NCCL's defaults (no NCCL_IB_TIMEOUT: 20, ~4.3 s per try):
#  1. healthy twin: 1 MiB messages, 8 in flight: no fabric.* (nor link./mtu.changed) line;
#  2. 2 % packet loss on vethB (netem), the same transfer: the sender (rxe1, whose veth drops) names
#     [fabric.packet_loss] on rxe1:1 within 30 s, by whichever rule a window meets first: the count of
#     lost-packet events, or the time its retransmission timeouts stalled the sender (which of the two
#     depends on whether the losses are revealed by a NAK or only by the ACK timer; both are
#     unit-tested in tests/unit/net_fabric/fabric_findings_test.cpp).
# The transfer under loss is stopped once named (it runs at a twentieth of its healthy rate).
# usage: loss_default_timeout.sh RAILSCOPE_CLI
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/../netfaults/faultlib.sh"
. "$(dirname "$0")/fabriclib.sh"
RS=$1
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=NET
unset NCCL_IB_TIMEOUT

fb_transfer healthy 18730 1M 40 8 60
fb_wait healthy 90
fb_no_fabric_line "$(nf_log healthy-client)" "$(nf_log healthy-server)"
grep -h 'MB/s\|GB/s' "$(nf_log healthy-client)" | tail -n1
fb_counters rxe0; fb_counters rxe1

tc qdisc add dev vethB root netem loss 2% || nf_fail "netem: tc qdisc add failed"
nf_mark
fb_transfer lossy 18731 1M 40 8 120
if nf_wait_diag 'fabric\.packet_loss' 30 "$(nf_log lossy-client)"; then
    line=$(grep -hE 'NCCL WARN.*\[fabric\.packet_loss\]' "$(nf_log lossy-client)" | head -n1)
    [[ $line == *"[fabric.packet_loss] rxe1:1:"* ]] || nf_fail "the finding does not name rxe1:1: $line"
else
    nf_fail "no [fabric.packet_loss] on the sender within 30 s of 2 % loss with the default timeout"
fi
fb_counters rxe0; fb_counters rxe1
kill "${NF_PIDS[lossy-client]}" "${NF_PIDS[lossy-server]}" 2>/dev/null
tc qdisc del dev vethB root
if (( NF_FAILED )); then nf_show healthy-client lossy-client lossy-server; fi
nf_result
