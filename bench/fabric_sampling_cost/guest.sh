#!/usr/bin/env bash
# Guest side of bench/fabric_sampling_cost: OFF ON OFF ON ... OFF for each row, ROUNDS pairs per row.
# Written in bench/net_vs_build's manifest format (base = sampling off, new = sampling on).
# usage: guest.sh BUILD OUT ROUNDS
set -uo pipefail
BUILD=$1 OUT=$2 ROUNDS=$3
mkdir -p "$OUT"
manifest=$OUT/manifest.txt
: > "$manifest"
seq=0
run() {  # run base|new ROW ARGS...
  local which=$1 row=$2 f sampling
  shift 2
  [[ $which == base ]] && sampling=0 || sampling=1
  f=$OUT/$(printf '%03d' $seq)-$which-$row.json
  RAILSCOPE_NET_FABRIC_SAMPLING=$sampling timeout 300 "$BUILD/tools/railscope" netbench --pair rxe0,rxe1 \
    --plugin "$BUILD/plugin/net/libnccl-net-railscope.so" --no-verify --json --timeout 60 "$@" > "$f" 2> "$f.err"
  echo "$seq $which $row $f" >> "$manifest"
  seq=$((seq + 1))
}
row() {  # row NAME ARGS...: OFF ON OFF ... OFF
  local name=$1
  shift
  run base "$name" "$@"
  for ((r = 0; r < ROUNDS; r++)); do
    run new "$name" "$@"
    run base "$name" "$@"
  done
}
row bw-1M --mode bw --min-size 1M --max-size 1M --iters 64 --warmup 4
row lat-8-spin --mode lat --min-size 8 --max-size 8 --lat-iters 2000 --poll spin
echo "guest: $seq runs, manifest $manifest"
