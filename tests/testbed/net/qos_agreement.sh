#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Traffic class agreement through the ABI, two processes: the server (receiver, rxe1) with NCCL_IB_TC=
# RECEIVER_TC, the client (sender, rxe0) with NCCL_IB_TC=SENDER_TC. Both transfers must complete. Where
# the two differ, each end logs [qos.tc_mismatch] once, at WARN, naming both classes; where they agree,
# neither end logs a warning at all.
# usage: qos_agreement.sh NET_TRANSFER RECEIVER_TC SENDER_TC
set -u
. "$TESTBED_LIB"
bin=$1 receiver_tc=$2 sender_tc=$3
handle="$TESTBED_SCRATCH/net.handle"
rm -f "$handle"
NET_TRANSFER_ECHO=1 NCCL_IB_TC=$receiver_tc timeout 120 "$bin" server "$handle" > "$TESTBED_SCRATCH/server.log" 2>&1 &
server=$!
NET_TRANSFER_ECHO=1 NCCL_IB_TC=$sender_tc timeout 120 "$bin" client "$handle" > "$TESTBED_SCRATCH/client.log" 2>&1
client_rc=$?
wait "$server"
server_rc=$?
fail=0
for end in server client; do
    log="$TESTBED_SCRATCH/$end.log"
    echo "--- $end"
    grep -E 'nccl-log 2|qos\.|PASS|FAIL' "$log"
    mismatches=$(grep -c '\[qos.tc_mismatch\]' "$log")
    if [[ $receiver_tc != "$sender_tc" ]]; then
        line=$(grep '\[qos.tc_mismatch\]' "$log")
        if [[ $mismatches != 1 ]] || [[ $line != *"nccl-log 2"* ]] ||
            [[ $line != *"traffic class $sender_tc "* ]] || [[ $line != *"traffic class $receiver_tc "* ]] ||
            [[ $line != *"NCCL_IB_TC"* ]]; then
            echo "FAIL: $end: expected one qos.tc_mismatch warning naming classes $sender_tc and $receiver_tc"
            fail=1
        fi
    elif grep -q 'nccl-log 2' "$log"; then
        echo "FAIL: $end: a warning in a run whose two ends agree"
        fail=1
    fi
done
echo "client rc=$client_rc server rc=$server_rc"
[ "$client_rc" = 0 ] && [ "$server_rc" = 0 ] && [ "$fail" = 0 ]
