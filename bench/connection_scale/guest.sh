#!/usr/bin/env bash
# Guest side of bench/connection_scale (one test-bed boot): conn_scale with railscope's plugin, then
# with the reference plugin when one is given.
# usage: guest.sh CONN_SCALE COUNTS [REF_PLUGIN]
set -uo pipefail
. "$TESTBED_LIB"
drv=$1 counts=$2 ref=${3:-}
rc=0
echo "guest clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>&1)"
echo "== railscope"
"$drv" --counts "$counts" ${CONN_SCALE_SMAPS:+--smaps} || rc=1
if [[ -n $ref ]]; then
    # NCCL's IB code picks the GID by its own rules; point it at the IPv4 RoCE v2 GID as railscope does.
    gid=1  # the IPv4-mapped GID's usual index, unless the guest says otherwise
    tb_gid_index_v4 rxe0 gid || gid=1
    echo "== reference: $ref (NCCL_IB_GID_INDEX=$gid)"
    NCCL_IB_GID_INDEX=$gid "$drv" --plugin "$ref" --counts "$counts" ${CONN_SCALE_SMAPS:+--smaps} || rc=1
fi
exit $rc
