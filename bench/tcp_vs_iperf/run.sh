#!/usr/bin/env bash
# Benchmark (not a test): the net plugin's TCP engine through its ABI (two processes) against
# `iperf3 -P 4`, over the same veth pair between two fresh network namespaces, in one run. Each round
# runs, back to back:
#   iperf3 -P 4                 the reference (4 streams, one thread per side, 128 KiB buffers)
#   iperf3 -P 4 -Z              sendfile() zero-copy, for information
#   railscope 64 MiB            64 MiB messages, 4 in flight, each in its own buffer (copy sends)
#   railscope 64 MiB zc=on      the same with MSG_ZEROCOPY forced on (veth copies anyway: docs/tcp.md)
#   railscope NCCL-shaped       64 MiB moved as NCCL's proxy moves it over a net connection: 512 KiB
#                               steps, 8 in flight, i.e. a 4 MiB buffer (NCCL_BUFFSIZE / NCCL_STEPS)
#   railscope NCCL-shaped, NCCL_SOCKET_NTHREADS=0 (the polling thread moves the bytes of 4 sockets)
# and prints each row's median and its median per-round ratio to iperf3 -P 4 (target >= 0.9). The
# host's noise moves iperf3 by 2x between rounds; a ratio within one round cancels most of it.
# Needs root and iperf3 (scripts/install-deps.sh).
#
# usage: bench/tcp_vs_iperf/run.sh [BUILD_DIR] [ROUNDS]   (env: NCCL_SOCKET_NTHREADS etc. pass through)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
rounds="${2:-5}"
bw="$build/bench/tcp_vs_iperf/tcp_abi_bw"
[ -x "$bw" ] || { echo "build it first: cmake --build $build --target tcp_abi_bw"; exit 1; }
command -v iperf3 >/dev/null || { echo "iperf3 missing: scripts/install-deps.sh"; exit 1; }
results="$(mktemp)"
trap 'rm -f "$results"' EXIT

export RAILSCOPE_TRANSPORT=tcp BW="$bw" ROUNDS="$rounds" RESULTS="$results"
"$root/tests/abi/net_tcp/in_netns_pair.sh" bash -c '
  set -euo pipefail
  pidfile=/tmp/rs-iperf3-$$.pid
  trap '"'"'kill "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || true; rm -f "$pidfile"'"'"' EXIT
  ip netns exec "$RAILSCOPE_TEST_PEER_NETNS" iperf3 -s -D -I "$pidfile" >/dev/null
  sleep 0.5
  iperf() { iperf3 -c "$RAILSCOPE_TEST_PEER_ADDR" -P 4 -t 4 "$@" -J |
    python3 -c "import json,sys; print(json.load(sys.stdin)[\"end\"][\"sum_received\"][\"bits_per_second\"]/1e9)"; }
  plugin() { "$BW" "$@" | cut -d" " -f4; }
  for r in $(seq 1 "$ROUNDS"); do
    ip=$(iperf)
    ipz=$(iperf -Z 2>/dev/null || echo 0)
    big=$(RAILSCOPE_TCP_ZEROCOPY=off plugin --size 67108864 --count 128 --inflight 4)
    bigzc=$(RAILSCOPE_TCP_ZEROCOPY=on plugin --size 67108864 --count 128 --inflight 4)
    shaped=$(RAILSCOPE_TCP_ZEROCOPY=off plugin --size 524288 --count 16384 --inflight 8)
    shaped0=$(RAILSCOPE_TCP_ZEROCOPY=off NCCL_SOCKET_NTHREADS=0 NCCL_NSOCKS_PERTHREAD=4 \
              plugin --size 524288 --count 16384 --inflight 8)
    printf "round %s (Gbit/s): iperf3 %.2f | iperf3 -Z %.2f | 64 MiB %.2f | 64 MiB zc=on %.2f | NCCL-shaped %.2f | NCCL-shaped NTHREADS=0 %.2f\n" \
      "$r" "$ip" "$ipz" "$big" "$bigzc" "$shaped" "$shaped0"
    echo "$ip $ipz $big $bigzc $shaped $shaped0" >> "$RESULTS"
  done
'
python3 - "$results" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
names = ["iperf3 -P 4", "iperf3 -P 4 -Z (sendfile)", "railscope 64 MiB messages",
         "railscope 64 MiB, MSG_ZEROCOPY on", "railscope NCCL-shaped (512 KiB x 8)",
         "railscope NCCL-shaped, NCCL_SOCKET_NTHREADS=0"]
print(f"\n{'row':<48} {'median Gbit/s':>14} {'min':>7} {'max':>7} {'ratio to iperf3 -P 4':>21}")
for i, name in enumerate(names):
    col = [r[i] for r in rows]
    ratios = [r[i] / r[0] for r in rows if r[0] > 0]
    ratio = "" if i == 0 else f"{statistics.median(ratios):.2f}"
    print(f"{name:<48} {statistics.median(col):>14.2f} {min(col):>7.2f} {max(col):>7.2f} {ratio:>21}")
print(f"\n{len(rows)} rounds; ratio = median over rounds of (row / iperf3 -P 4 of the same round); target >= 0.9")
PY
