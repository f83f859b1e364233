#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of bench/net_vs_build: BASE NEW BASE NEW ... BASE for each row, ROUNDS pairs per row
# (bench/lib/alternate.sh; the variable alternated is the build folder).
# usage: guest.sh BASE_BUILD NEW_BUILD OUT ROUNDS
set -uo pipefail
BASE=$1 NEW=$2 OUT=$3 ROUNDS=$4
# shellcheck source=bench/lib/alternate.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/alternate.sh"
# shellcheck disable=SC2154  # build: set by alternate_run for each run
netbench() {  # the build of this run: $build
  timeout 300 "$build/tools/railscope" netbench --pair rxe0,rxe1 \
    --plugin "$build/plugin/net/libnccl-net-railscope.so" --no-verify --json --timeout 60 "$@"
}
alternate_init "$OUT" "$ROUNDS" build "$BASE" "$NEW" netbench
alternate_row bw-64K --mode bw --min-size 64K --max-size 64K --iters 1024 --warmup 16
alternate_row bw-1M --mode bw --min-size 1M --max-size 1M --iters 64 --warmup 4
alternate_row bw-4M --mode bw --min-size 4M --max-size 4M --iters 16 --warmup 2
alternate_row lat-8-spin --mode lat --min-size 8 --max-size 8 --lat-iters 2000 --poll spin
alternate_row lat-8-yield --mode lat --min-size 8 --max-size 8 --lat-iters 2000 --poll yield
alternate_done
