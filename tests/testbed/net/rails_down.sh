#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rails of a virtual NIC (rxe0+rxe2 -> rxe1+rxe3, `testbed run --rails 2`) taken down mid-stream and kept
# down past the retry budget: vethB<i> down for each rail i given, so host A's port of that rail loses
# carrier and goes DOWN (as with its cable pulled) while host B's fails its sends at once. EXPECT is
# net_transfer's: --expect-failover (the stream moves to the rail left and goes on, data checked,
# link.failover) or --expect-ports-down (the stream ends with a clear error naming a port that is down,
# within the budget and a margin, no hang). Then the links come back. RAILS_DOWN_SIDE=A takes vethA<i>
# down instead: host A's (the sender's) port fails its sends at once, so the sender sees its completions
# in error rather than a stall. RAILS_DOWN_FOR=S brings the links back S seconds after they went down,
# mid-stream, and touches `rail_up` in the sync folder (--expect-recovery: traffic returns to the rail).
#   rails_down.sh NET_TRANSFER EXPECT SECONDS RAIL...
set -uo pipefail
. "$TESTBED_LIB"
usage="usage: rails_down.sh NET_TRANSFER EXPECT SECONDS RAIL..."
nt=${1:?$usage}
expect=${2:?$usage}
seconds=${3:?$usage}
shift 3
[[ $# -gt 0 ]] || { echo "$usage" >&2; exit 2; }
export NET_TRANSFER_SYNC_DIR=$TESTBED_SCRATCH
timeout $((seconds + 60)) "$nt" rails "$seconds" "$expect" &
pid=$!
for _ in $(seq 1 600); do
    [[ -e $TESTBED_SCRATCH/streaming ]] && break
    tb_sleep 0.1
done
[[ -e $TESTBED_SCRATCH/streaming ]] || { echo "rails_down: the stream never started" >&2; kill "$pid"; exit 1; }
side=${RAILS_DOWN_SIDE:-B}
for rail in "$@"; do tb_link_down "veth$side$rail"; done
for rail in "$@"; do
    echo "rails_down: veth$side$rail down; rxe$((2 * rail)) $(cat /sys/class/infiniband/rxe$((2 * rail))/ports/1/state)"
done
# RAILS_DOWN_CYCLES=N (with RAILS_DOWN_FOR): N outages of RAILS_DOWN_FOR s, RAILS_UP_FOR s (8) apart.
if [[ -n ${RAILS_DOWN_FOR:-} ]]; then
    for cycle in $(seq 1 "${RAILS_DOWN_CYCLES:-1}"); do
        if [[ $cycle -gt 1 ]]; then
            tb_sleep "${RAILS_UP_FOR:-8}"
            for rail in "$@"; do tb_link_down "veth$side$rail"; done
            echo "rails_down: outage $cycle: veth$side${*: -1} down"
        fi
        tb_sleep "$RAILS_DOWN_FOR"
        for rail in "$@"; do tb_link_up "veth$side$rail"; done
        for rail in "$@"; do
            echo "rails_down: veth$side$rail up after ${RAILS_DOWN_FOR} s; rxe$((2 * rail)) $(cat /sys/class/infiniband/rxe$((2 * rail))/ports/1/state)"
        done
        touch "$TESTBED_SCRATCH/rail_up"
    done
fi
wait "$pid"
rc=$?
[[ -n ${RAILS_DOWN_FOR:-} ]] || for rail in "$@"; do tb_link_up "veth$side$rail"; done
exit "$rc"
