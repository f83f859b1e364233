#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/profiler_cost/run.sh BUILD_DIR — instructions per profiler event under callgrind.
# Prints instructions per Coll start/stop pair and per ProxyStep state record (targets: ≤ 1500, ≤ 300).
set -euo pipefail
build=${1:-build}
bin="$build/bench/profiler_cost/profiler_cost"
out=$(mktemp -d /tmp/railscope-profiler-cost.XXXXXX)
valgrind --tool=callgrind --collect-atstart=no --separate-threads=yes \
  --callgrind-out-file="$out/cg.out" "$bin" > "$out/stdout.txt" 2> "$out/valgrind.txt"
iters=$(awk '/^phase baseline/ {print $4}' "$out/stdout.txt")
# Main thread dumps only (-01 suffix); each has "desc: Trigger: Client Request: <phase>" and "totals: <Ir>".
total() {
  for f in "$out"/cg.out.*-01; do
    if grep -q "Client Request: $1\$" "$f"; then awk '/^totals:/ {print $2}' "$f"; return; fi
  done
  echo "no callgrind dump for phase $1" >&2; exit 1
}
base=$(total baseline); coll=$(total coll_start_stop); step=$(total proxystep_state)
awk -v b="$base" -v c="$coll" -v s="$step" -v n="$iters" 'BEGIN {
  loop = b / n / 2;  # per indirect call + loop step
  printf "iterations per phase: %d (callgrind, main thread only)\n", n
  printf "Coll start/stop pair: %.0f instructions (raw %.0f, minus %.0f loop/call overhead)  target <= 1500\n", c / n - 2 * loop, c / n, 2 * loop
  printf "ProxyStep state record: %.0f instructions (raw %.0f, minus %.0f loop/call overhead)  target <= 300\n", s / n - 2 * loop, s / n, 2 * loop
}'
rm -rf "$out"
