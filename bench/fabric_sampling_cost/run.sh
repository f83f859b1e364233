#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/fabric_sampling_cost: what the net plugin's fabric sampler (plugin/net/verbs/watch/fabric_watch.h,
# docs/fabric-health-net.md) costs. One build, one test-bed boot, `railscope netbench --pair rxe0,rxe1`
# alternated with RAILSCOPE_NET_FABRIC_SAMPLING=0 (off) and =1 (on): 1 MiB bandwidth and 8-byte
# latency, then the CPU time of one sampling tick per port (tick_cost.cpp). The table
# (bench/net_vs_build/ratios.py) gives on/off per row as a speed (bandwidth: on/off; latency: off/on),
# each "on" run against the "off" runs right before and after it; target >= 0.98.
# Not a test: numbers under TCG are ratios only.
# usage: bench/fabric_sampling_cost/run.sh BUILD [ROUNDS]     env: OUT=<folder>
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd) rounds=${2:-5}
[[ -x $build/tools/railscope && -f $build/plugin/net/libnccl-net-railscope.so ]] || { echo "no build in $build" >&2; exit 2; }
out=${OUT:-$(mktemp -d /var/tmp/fabric_sampling_cost.XXXXXX)}
export RAILSCOPE_TESTBED_APPEND=${RAILSCOPE_TESTBED_APPEND-tsc=reliable clocksource=tsc}
scratch=$out/boot1
# shellcheck source=bench/lib/stage_build.sh
source "$root/bench/lib/stage_build.sh"
stage_build "$build" "$scratch/build"  # the guest does not see the host's /tmp and /var/tmp
mkdir -p "$scratch/build/bench/fabric_sampling_cost"
cp "$build/bench/fabric_sampling_cost/tick_cost" "$scratch/build/bench/fabric_sampling_cost/"
flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --scratch "$scratch" --timeout 1500 -- \
  "$root/bench/fabric_sampling_cost/guest.sh" "$scratch/build" "$scratch/runs" "$rounds"
echo "base = sampling off, new = sampling on"
python3 "$root/bench/net_vs_build/ratios.py" "$scratch/runs"
echo "one fabric-watch tick (once a second per port in use; core_share = its CPU time per second):"
cat "$scratch/runs/tick_cost.txt"
