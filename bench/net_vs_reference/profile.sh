#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/net_vs_reference/profile.sh: where the test-bed guest's CPU time goes during one bandwidth stream, for
# ib_write_bw, railscope and the reference plugin alike: `perf record -a -e cpu-clock` over both vCPUs (software
# clock sampling; TCG has no PMU), started 2 s into each run, then each run's share by vCPU and task and its
# hottest symbols. One test-bed boot. Not a test.
# usage: bench/net_vs_reference/profile.sh [BUILD_DIR] REF_PLUGIN=/path/libnccl-net-ref.so
#        env: OUT=<folder>  SIZE=1M  ITERS=96  WINDOW=8  PIN_CPUS=0,1 (server,client)  POLLS="spin yield sleep"
#             VARIANTS="noahead:RAILSCOPE_NET_EAGER_AHEAD=0" (railscope again with that environment, as run.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/lib/reference_args.sh
source "$root/bench/lib/reference_args.sh"
reference_args "$@"
command -v perf > /dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
[[ $REF_PLUGIN != /tmp/* ]] || { echo "REF_PLUGIN under /tmp is not visible in the test-bed guest" >&2; exit 2; }
out=${OUT:-$(mktemp -d /var/tmp/net_profile.XXXXXX)}
mkdir -p "$out"
# shellcheck source=bench/lib/stage_build.sh
source "$root/bench/lib/stage_build.sh"
stage_build "$build" "$out/build"  # a rebuild during the runs must not change what they measure
export RAILSCOPE_TESTBED_APPEND=${RAILSCOPE_TESTBED_APPEND-tsc=reliable clocksource=tsc}
flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --scratch "$out" --timeout 1800 \
    --env "SIZE=${SIZE:-1M}" --env "ITERS=${ITERS:-96}" --env "WINDOW=${WINDOW:-8}" \
    --env "PIN_CPUS=${PIN_CPUS:-0,1}" --env "POLLS=${POLLS:-spin yield sleep}" --env "VARIANTS=${VARIANTS:-}" -- \
    "$root/bench/net_vs_reference/guest-profile.sh" "$out/build/tools/railscope" \
    "$out/build/plugin/net/libnccl-net-railscope.so" "$REF_PLUGIN" "$out/runs"
cat "$out/runs/summary.txt"
