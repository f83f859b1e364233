#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/net_vs_perftest: railscope's net plugin (through `railscope netbench --pair rxe0,rxe1`) side by
# side with perftest on the soft-RoCE test bed, BOOTS guest boots (default 2), then the ratio table.
# Not a test: numbers under TCG are only meaningful as ratios within one boot (tests/testbed/README.md).
# usage: bench/net_vs_perftest/run.sh [BUILD_DIR] [SIZES...]        env: BOOTS=2 OUT=<folder>
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}; shift || true
rs=$build/tools/railscope
[[ -x $rs ]] || { echo "no $rs: build first (cmake --build build)" >&2; exit 2; }
out=${OUT:-$(mktemp -d /var/tmp/net_vs_perftest.XXXXXX)}
# The guest reads its clock from the TSC, as real hosts do: perftest times itself with rdtsc, while
# netbench and the plugin use clock_gettime, which on the test bed's default emulated HPET is a system
# call each (docs/netbench.md). Override with RAILSCOPE_TESTBED_APPEND= (empty) to bench on the HPET.
export RAILSCOPE_TESTBED_APPEND=${RAILSCOPE_TESTBED_APPEND-tsc=reliable clocksource=tsc}
mkdir -p "$out"
for ((b = 1; b <= ${BOOTS:-2}; b++)); do
    mkdir -p "$out/boot$b"
    echo "== boot $b (results in $out/boot$b)"
    flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --scratch "$out/boot$b" --timeout 1200 -- \
        "$root/bench/net_vs_perftest/guest.sh" "$rs" "$out/boot$b/runs" "$@"
done
python3 "$root/bench/net_vs_perftest/ratios.py" "$out"/boot*/runs
