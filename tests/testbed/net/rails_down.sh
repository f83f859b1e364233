#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rails of a virtual NIC (rxe0+rxe2 -> rxe1+rxe3, `testbed run --rails 2`) taken down mid-stream and kept
# down past the retry budget: vethB<i> down for each rail i given, so host A's port of that rail loses
# carrier and goes DOWN (as with its cable pulled) while host B's fails its sends at once. The stream
# must end with a clear error naming a port that is down, within the budget and a margin, no hang
# (net_transfer rails --expect-ports-down). Then the links come back.
#   rails_down.sh NET_TRANSFER RAIL...
set -uo pipefail
. "$TESTBED_LIB"
nt=${1:?usage: rails_down.sh NET_TRANSFER RAIL...}
shift
[[ $# -gt 0 ]] || { echo "usage: rails_down.sh NET_TRANSFER RAIL..." >&2; exit 2; }
export NET_TRANSFER_SYNC_DIR=$TESTBED_SCRATCH
timeout 120 "$nt" rails 60 --expect-ports-down &
pid=$!
for _ in $(seq 1 600); do
    [[ -e $TESTBED_SCRATCH/streaming ]] && break
    tb_sleep 0.1
done
[[ -e $TESTBED_SCRATCH/streaming ]] || { echo "rails_down: the stream never started" >&2; kill "$pid"; exit 1; }
for rail in "$@"; do tb_link_down "vethB$rail"; done
for rail in "$@"; do
    echo "rails_down: vethB$rail down; rxe$((2 * rail)) $(cat /sys/class/infiniband/rxe$((2 * rail))/ports/1/state)"
done
wait "$pid"
rc=$?
for rail in "$@"; do tb_link_up "vethB$rail"; done
exit "$rc"
