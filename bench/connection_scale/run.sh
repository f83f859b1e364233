#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/connection_scale: per-connection cost of a rank with N peers (N = 1, 8, 64, 256, 1,024 by
# default), railscope's net plugin and, when REF_PLUGIN names one, a reference net plugin (NCCL's IB
# code, e.g. built from Mellanox/nccl-rdma-sharp-plugins outside this repository) the same way, in one
# soft-RoCE test-bed boot. Prints one table per plugin (conn_scale.cpp says what each column is).
# Not a test: TCG numbers mean something only side by side within one boot (tests/testbed/README.md).
# usage: bench/connection_scale/run.sh [BUILD_DIR] [COUNTS]
#        env: REF_PLUGIN=<path> MEM=10G RAILSCOPE_NET_EAGER_MAX=<bytes, 0: receiver-driven>
#             BASE_PLUGIN=<another railscope .so, e.g. main's: before/after in one boot>
#             ROUNDS=<n> (each plugin n times in rotated order after a discarded warm-up; medians
#             at the end: connect time scatters by 30 % between runs of one boot, and the first run
#             of a boot was the slowest, which had made railscope's connect look 2x the reference's)
#             CONN_SCALE_SMAPS=1 (also resident memory per pair by kind of mapping, /proc/self/smaps)
#             RAILSCOPE_TESTBED_APPEND (guest kernel arguments; default: the TSC clock)
#
# Results (the current table, its command and date): RESULTS.md beside this script.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
counts=${2:-1,8,64,256,1024}
drv=$build/bench/connection_scale/conn_scale
[[ -x $drv ]] || { echo "no $drv: cmake --build $build --target conn_scale" >&2; exit 2; }
ref=${REF_PLUGIN:-}
if [[ -n $ref && ! -e $ref ]]; then echo "REF_PLUGIN=$ref does not exist: reference skipped" >&2; ref=; fi
base=${BASE_PLUGIN:-}
if [[ -n $base && ! -e $base ]]; then echo "BASE_PLUGIN=$base does not exist: skipped" >&2; base=; fi
log=$(mktemp /tmp/conn_scale.XXXXXX.log)
trap 'rm -f "$log"' EXIT
# Two processes of up to 1,024 send + 1,024 receive comms each: far more guest memory than the default.
# Guest clock from the TSC as on real hosts (the emulated HPET makes every clock read a system call,
# which test() pays once in 16 calls); RAILSCOPE_TESTBED_APPEND= (empty) measures on the HPET instead.
export RAILSCOPE_TESTBED_APPEND=${RAILSCOPE_TESTBED_APPEND-tsc=reliable clocksource=tsc}
# RAILSCOPE_NET_EAGER_MAX, when set, travels into the guest (0: the receiver-driven protocol).
flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --mem "${MEM:-10G}" --timeout 1800 \
    ${RAILSCOPE_NET_EAGER_MAX:+--env "RAILSCOPE_NET_EAGER_MAX=$RAILSCOPE_NET_EAGER_MAX"} \
    ${CONN_SCALE_SMAPS:+--env CONN_SCALE_SMAPS=1} --env "ROUNDS=${ROUNDS:-1}" -- \
    "$root/bench/connection_scale/guest.sh" "$drv" "$counts" "$ref" "$base" | tee "$log"
if [[ ${ROUNDS:-1} -gt 1 ]]; then python3 "$root/bench/connection_scale/medians.py" "$log"; fi
