#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/net_vs_reference on a host with two RDMA ports instead of the test bed: the same passes as a test-bed
# boot (guest.sh: railscope and the reference plugin alternating through `railscope netbench --pair`, perftest
# of the same pass and direction before and after each block), run here, between the two devices named, then
# the ratio table (ratios.py, one pass where it says boot). For the figures the emulated NIC cannot give
# (RESULTS.md beside this script): a NIC's own ib_write_bw and ib_write_lat as the
# floor, and the two plugins against it.
# usage: bench/net_vs_reference/host.sh [BUILD_DIR] REF_PLUGIN=/path/libnccl-net-ref.so
#        env: DEVS=RECEIVER_DEV,SENDER_DEV (required: two ports that reach each other, `ibv_devinfo` lists them)
#             PASSES=2 OUT=<folder> PERFTEST_SERVER=127.0.0.1 (where perftest's client reaches its server's socket)
#             and guest.sh's: SIZES WINDOWS REPS LAT_SIZES LAT_POLLS LAT_REPS BW_POLL RECVS VARIANTS PIN_CPUS
#             (on a host: CPUs of the NICs' NUMA node, e.g. PIN_CPUS=2,4)
# Needs perftest (ib_write_bw, ib_send_bw, ib_write_lat), memlock for both plugins' registrations, and the
# reference plugin built by build-reference.sh; no root. The test bed's WIRE_CPUS has no meaning here.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/lib/reference_args.sh
source "$root/bench/lib/reference_args.sh"
reference_args "$@"
[[ ${DEVS:-} =~ ^[^,]+,[^,]+$ ]] ||
    { echo "give DEVS=RECEIVER_DEV,SENDER_DEV: two RDMA devices of this host (ibv_devinfo lists them)" >&2; exit 2; }
for dev in "${DEVS%,*}" "${DEVS#*,}"; do
    [[ -d /sys/class/infiniband/$dev ]] || { echo "no RDMA device $dev (/sys/class/infiniband)" >&2; exit 2; }
done
[[ -z ${WIRE_CPUS:-} ]] ||
    { echo "WIRE_CPUS steers the test bed's veth pair; a host's NICs have no such knob" >&2; exit 2; }
for tool in ib_write_bw ib_send_bw ib_write_lat; do
    command -v "$tool" > /dev/null || { echo "needs perftest: no $tool on PATH" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d /var/tmp/net_vs_reference.XXXXXX)}
# A copy of the build taken now, as run.sh does: a rebuild while the passes run must not change what they measure.
# shellcheck source=bench/lib/stage_build.sh
source "$root/bench/lib/stage_build.sh"
stage_build "$build" "$out/build"
# guest.sh's helpers (tb_gid_index_v4, tb_wait_tcp_listen) read sysfs and /proc only.
export TESTBED_LIB=$root/tests/testbed/guest-lib.sh
export DEVS PERFTEST_SERVER=${PERFTEST_SERVER:-127.0.0.1}
for ((p = 1; p <= ${PASSES:-2}; p++)); do
    mkdir -p "$out/pass$p"
    echo "== pass $p (results in $out/pass$p); $(uptime)"
    "$root/bench/net_vs_reference/guest.sh" "$out/build/tools/railscope" \
        "$out/build/plugin/net/libnccl-net-railscope.so" "$REF_PLUGIN" "$out/pass$p/runs"
done
python3 "$root/bench/net_vs_reference/ratios.py" "$out"/pass*/runs
