#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Instructions per getCollInfo call after warm-up, counted by callgrind inside the plugin's adapter
# function only (inclusive of everything it calls).
#   bench/tuner_cost/run.sh [build-dir] [version] [nodes] [gpus_per_node] [calls]
# Prints one line: "getCollInfo: <N> instructions/call (...)". Target: <= 2000.
set -euo pipefail
build=${1:-build}
version=${2:-5}
nodes=${3:-4}
gpus=${4:-8}
calls=${5:-20000}
driver=$build/bench/tuner_cost/tuner_cost_driver
[ -x "$driver" ] || { echo "build $driver first: cmake --build $build --target tuner_cost_driver" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" \
  --toggle-collect='railscope::tuner::abi::get_coll_info(*' \
  "$driver" "$version" "$nodes" "$gpus" "$calls" >"$out/driver.txt" 2>"$out/valgrind.txt" || {
  cat "$out/valgrind.txt" >&2; exit 1; }
summary=$(cat "$out/driver.txt")
# The dump taken after the measured loop ("measured") holds only the calls after CALLGRIND_ZERO_STATS.
dump=$(grep -l '^desc: Trigger: Client Request: measured' "$out"/cg.* | head -1)
[ -n "$dump" ] || { echo "no 'measured' dump from callgrind" >&2; cat "$out/valgrind.txt" >&2; exit 1; }
ir=$(awk '/^summary:/ {print $2}' "$dump")
awk -v ir="$ir" -v s="$summary" 'BEGIN {
  n = s; sub(/.*calls=/, "", n); sub(/ .*/, "", n);
  printf "getCollInfo: %.0f instructions/call (%d measured calls after warm-up; %s; Ir in getCollInfo %d)\n", ir / n, n, s, ir }'
