#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/net_vs_build: the net plugin of two builds side by side, alternated in one test-bed boot, through
# `railscope netbench --pair rxe0,rxe1` (each build's CLI with its own plugin). For a change that must
# not cost speed: the table gives NEW/BASE per size (medians of the per-pair ratios, each NEW run
# against the BASE runs right before and after it). Not a test: numbers under TCG are ratios only.
# usage: bench/net_vs_build/run.sh BASE_BUILD NEW_BUILD [ROUNDS]     env: OUT=<folder>, BOOTS=1
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=$(cd "$1" && pwd) new=$(cd "$2" && pwd) rounds=${3:-3}
for b in "$base" "$new"; do
  [[ -x $b/tools/railscope && -f $b/plugin/net/libnccl-net-railscope.so ]] || { echo "no build in $b" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d /var/tmp/net_vs_build.XXXXXX)}
# shellcheck source=bench/lib/stage_build.sh
source "$root/bench/lib/stage_build.sh"
export RAILSCOPE_TESTBED_APPEND=${RAILSCOPE_TESTBED_APPEND-tsc=reliable clocksource=tsc}
for ((b = 1; b <= ${BOOTS:-1}; b++)); do
  scratch=$out/boot$b
  echo "== boot $b (results in $scratch)"
  # Each build's CLI and plugin travel in the scratch folder, which the guest shares at the same path.
  stage_build "$base" "$scratch/base"
  stage_build "$new" "$scratch/new"
  flock /tmp/railscope-testbed.lock "$root/tests/testbed/testbed" run --scratch "$scratch" --timeout 1500 -- \
    "$root/bench/net_vs_build/guest.sh" "$scratch/base" "$scratch/new" "$scratch/runs" "$rounds"
done
python3 "$root/bench/net_vs_build/ratios.py" "$out"/boot*/runs
