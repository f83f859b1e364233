#!/usr/bin/env bash
# Guest side of bench/net_vs_build: BASE NEW BASE NEW ... BASE for each row, ROUNDS pairs per row.
# usage: guest.sh BASE_BUILD NEW_BUILD OUT ROUNDS
set -uo pipefail
BASE=$1 NEW=$2 OUT=$3 ROUNDS=$4
mkdir -p "$OUT"
manifest=$OUT/manifest.txt
: > "$manifest"
seq=0
run() {  # run WHICH ROW ARGS...
  local which=$1 row=$2 build f
  shift 2
  [[ $which == base ]] && build=$BASE || build=$NEW
  f=$OUT/$(printf '%03d' $seq)-$which-$row.json
  timeout 300 "$build/tools/railscope" netbench --pair rxe0,rxe1 \
    --plugin "$build/plugin/net/libnccl-net-railscope.so" --no-verify --json --timeout 60 "$@" > "$f" 2> "$f.err"
  echo "$seq $which $row $f" >> "$manifest"
  seq=$((seq + 1))
}
row() {  # row NAME ARGS...: B N B N ... B
  local name=$1
  shift
  run base "$name" "$@"
  for ((r = 0; r < ROUNDS; r++)); do
    run new "$name" "$@"
    run base "$name" "$@"
  done
}
row bw-64K --mode bw --min-size 64K --max-size 64K --iters 1024 --warmup 16
row bw-1M --mode bw --min-size 1M --max-size 1M --iters 64 --warmup 4
row bw-4M --mode bw --min-size 4M --max-size 4M --iters 16 --warmup 2
row lat-8-spin --mode lat --min-size 8 --max-size 8 --lat-iters 2000 --poll spin
row lat-8-yield --mode lat --min-size 8 --max-size 8 --lat-iters 2000 --poll yield
echo "guest: $seq runs, manifest $manifest"
