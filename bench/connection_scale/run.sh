#!/usr/bin/env bash
# bench/connection_scale: per-connection cost of a rank with N peers (N = 1, 8, 64, 256, 1,024 by
# default), railscope's net plugin and, when REF_PLUGIN names one, a reference net plugin (NCCL's IB
# code, e.g. built from Mellanox/nccl-rdma-sharp-plugins outside this repository) the same way, in one
# soft-RoCE test-bed boot. Prints one table per plugin (conn_scale.cpp says what each column is).
# Not a test: TCG numbers mean something only side by side within one boot (docs/testbed.md).
# usage: bench/connection_scale/run.sh [BUILD_DIR] [COUNTS]      env: REF_PLUGIN=<path> MEM=10G
#
# railscope, one boot on a loaded 2-core host (2026-12-02; per connection pair = one send + one receive comm):
#      N    pin_KiB    rss_KiB    QPs    CQs    MRs    fds    conn_ms   close_ms   test_ns  8B_lat_us
#      1      624.0     3548.0   2.00   2.00   4.00   3.00    318.039     94.048       728     3618.4
#      8      624.0     3746.5   2.00   2.00   4.00   3.00    159.736      5.073      1106     3904.7
#     64      624.0     3824.2   2.00   2.00   4.00   3.00    112.618     13.135      1173     4052.6
#    256      624.0     3735.5   2.00   2.00   4.00   3.00    107.718     16.606      3800      400.7
# N = 1,024 did not fit a 4 GiB guest (two processes x 1,024 pairs x ~3.6 MiB resident: OOM), hence MEM.
# The resident memory per pair (QP and CQ rings rxe maps into the process, request pools) is about 6x
# the pinned bytes (docs/net-protocol.md "Memory per connection"). Times under TCG on a loaded host
# scatter widely (the guest reported soft lockups in that boot); compare within a boot only.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
counts=${2:-1,8,64,256,1024}
drv=$build/bench/connection_scale/conn_scale
[[ -x $drv ]] || { echo "no $drv: cmake --build $build --target conn_scale" >&2; exit 2; }
ref=${REF_PLUGIN:-}
if [[ -n $ref && ! -e $ref ]]; then echo "REF_PLUGIN=$ref does not exist: reference skipped" >&2; ref=; fi
# Two processes of up to 1,024 send + 1,024 receive comms each: far more guest memory than the default.
flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --mem "${MEM:-10G}" --timeout 1800 -- \
    "$root/bench/connection_scale/guest.sh" "$drv" "$counts" "$ref"
