#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/net_vs_reference: railscope's net plugin against NCCL's own IB transport (the reference plugin built from
# Mellanox/nccl-rdma-sharp-plugins by build-reference.sh, outside this repository), both driven by the very same
# `railscope netbench --pair rxe0,rxe1` through NCCL's net ABI, alternating in one soft-RoCE test-bed boot, with
# perftest of the same boot; BOOTS boots (default 2), then the ratio table (ratios.py).
# Not a test: under TCG only ratios within one boot mean something (tests/testbed/README.md).
# usage: bench/net_vs_reference/run.sh [BUILD_DIR] REF_PLUGIN=/path/libnccl-net-ref.so
#        env: BOOTS=2 OUT=<folder> SIZES="64K 1M 4M" WINDOWS="8 32" REPS=2 (railscope/reference pairs per cell)
#             BW_POLL=spin (netbench --poll of the bandwidth runs: spin, yield or sleep)
#             RECVS=1 (buffers per receive in the bandwidth runs, netbench --recvs: grouped receives, 1..8)
#             PIN_CPUS=0,1 (the receiving end on vCPU 0, the sender on vCPU 1: netbench --pin-cpus, taskset for perftest;
#                          1,0 puts the sender on vCPU 0, where rxe works: like for like against perftest, README.md)
#             WIRE_CPUS=0,0 (the vCPU taking rxe0's and rxe1's packets, receive packet steering; default the test bed's)
#             VARIANTS="rd:RAILSCOPE_NET_EAGER_MAX=0 e64k:RAILSCOPE_NET_EAGER_MAX=65536" (railscope again, so set)
#             LAT_REPS=4 (pairs per latency cell)  LAT_SIZES="8 64K" (ping-pong sizes, default 8)  LAT_POLLS="spin yield" (netbench --poll of the 8 B latency runs; default spin, as ib_write_lat)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/lib/reference_args.sh
source "$root/bench/lib/reference_args.sh"
reference_args "$@"
# The test bed hides the host's /tmp from the guest: the plugin and OUT must live elsewhere.
[[ $REF_PLUGIN != /tmp/* ]] || { echo "REF_PLUGIN under /tmp is not visible in the test-bed guest" >&2; exit 2; }
out=${OUT:-$(mktemp -d /var/tmp/net_vs_reference.XXXXXX)}
# The guest runs a copy of the build taken now: a rebuild while the boots run must not change what they
# measure (the guest sees the host's files as they are at each run).
# shellcheck source=bench/lib/stage_build.sh
source "$root/bench/lib/stage_build.sh"
stage_build "$build" "$out/build"
rs=$out/build/tools/railscope
rs_plugin=$out/build/plugin/net/libnccl-net-railscope.so
# Guest clock from the TSC as on real hosts (perftest times itself with rdtsc); RAILSCOPE_TESTBED_APPEND= (empty)
# benches on the emulated HPET instead.
export RAILSCOPE_TESTBED_APPEND=${RAILSCOPE_TESTBED_APPEND-tsc=reliable clocksource=tsc}
mkdir -p "$out"
for ((b = 1; b <= ${BOOTS:-2}; b++)); do
    mkdir -p "$out/boot$b"
    echo "== boot $b (results in $out/boot$b); host: $(uptime)"
    uptime > "$out/boot$b/host-uptime.txt"
    # The guest starts from a clean environment: the knobs travel with --env.
    flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --scratch "$out/boot$b" --timeout 2400 \
        --env "SIZES=${SIZES:-64K 1M 4M}" --env "WINDOWS=${WINDOWS:-8 32}" --env "REPS=${REPS:-2}" \
        --env "VARIANTS=${VARIANTS:-}" --env "LAT_POLLS=${LAT_POLLS:-spin}" \
        --env "LAT_REPS=${LAT_REPS:-4}" --env "LAT_SIZES=${LAT_SIZES:-8}" --env "BW_POLL=${BW_POLL:-spin}" --env "RECVS=${RECVS:-1}" --env "PIN_CPUS=${PIN_CPUS:-}" \
        --env "WIRE_CPUS=${WIRE_CPUS:-}" -- \
        "$root/bench/net_vs_reference/guest.sh" "$rs" "$rs_plugin" "$REF_PLUGIN" "$out/boot$b/runs"
    uptime >> "$out/boot$b/host-uptime.txt"
done
python3 "$root/bench/net_vs_reference/ratios.py" "$out"/boot*/runs
