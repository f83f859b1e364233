#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of bench/connection_scale (one test-bed boot): conn_scale with railscope's plugin, with
# the reference plugin and with a base railscope build (another .so, e.g. main's) when given.
# ROUNDS > 1: one warm-up run first (discarded: the first connections of a boot are slower), then the
# plugins in turn, each round in another order, so that no plugin always runs first or after the same
# one; medians.py prints each cell's median over the rounds.
# usage: guest.sh CONN_SCALE COUNTS [REF_PLUGIN] [BASE_PLUGIN]     env: ROUNDS (default 1)
set -uo pipefail
. "$TESTBED_LIB"
drv=$1 counts=$2 ref=${3:-} base=${4:-}
rounds=${ROUNDS:-1}
rc=0
# NCCL's IB code picks the GID by its own rules; point it at the IPv4 RoCE v2 GID as railscope does.
gid=1  # the IPv4-mapped GID's usual index, unless the guest says otherwise
tb_gid_index_v4 rxe0 gid || gid=1
echo "guest clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>&1)"
run() {  # run WHO ROUND
    echo "== $1 (round $2, load $(cut -d' ' -f1 /proc/loadavg))"
    case $1 in
        railscope) "$drv" --counts "$counts" ${CONN_SCALE_SMAPS:+--smaps} || rc=1 ;;
        reference) echo "   $ref (NCCL_IB_GID_INDEX=$gid)"
                   NCCL_IB_GID_INDEX=$gid "$drv" --plugin "$ref" --counts "$counts" ${CONN_SCALE_SMAPS:+--smaps} || rc=1 ;;
        base) echo "   $base"; "$drv" --plugin "$base" --counts "$counts" ${CONN_SCALE_SMAPS:+--smaps} || rc=1 ;;
    esac
}
who=(railscope)
[[ -n $ref ]] && who+=(reference)
[[ -n $base ]] && who+=(base)
if ((rounds > 1)); then
    echo "== warm-up (discarded)"
    "$drv" --counts "${counts%%,*}" --tests 1000 --pings 20 >/dev/null 2>&1 || true
fi
for ((r = 1; r <= rounds; ++r)); do
    for ((i = 0; i < ${#who[@]}; ++i)); do run "${who[(i + r - 1) % ${#who[@]}]}" "$r"; done
done
exit $rc
