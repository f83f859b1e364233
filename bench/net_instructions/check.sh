#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/net_instructions/check.sh: the instruction budget of railscope's per-message path. One test-bed boot
# (run.sh) measures railscope alone on one cell (8 B ping-pong, 1000 round trips, fast and slow runs), once
# with the eager protocol and once receiver-driven (the `rd` variant, RAILSCOPE_NET_EAGER_MAX=0, the path GPU
# buffers take); check_budget.py compares each protocol's entry points' work and idle call with its cell of
# budget.json and exits 1 when a figure is over its budget. ~7 min, most of it the boot and callgrind under TCG.
# usage: bench/net_instructions/check.sh [BUILD_DIR]    (a Release build with its symbol tables)
#        env: OUT=<folder>  BUDGET=<budget file>  TESTBED_LOCK=<file> (run.sh)  RECORD=1 (write the
#             measured figures as the new budget)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d /var/tmp/net_instructions_check.XXXXXX)}
OUT=$out WHO=railscope VARIANTS="rd:RAILSCOPE_NET_EAGER_MAX=0" CELLS=8:1000 MODES="fast slow" SIDES=pingpong TOP=${TOP:-8} "$here/run.sh" "$@"
args=()
[[ -z ${BUDGET:-} ]] || args+=(--budget "$BUDGET")
[[ ${RECORD:-0} != 1 ]] || args+=(--record)
python3 "$here/check_budget.py" "${args[@]}" "$out/boot1/runs"
