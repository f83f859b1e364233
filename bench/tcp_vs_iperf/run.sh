#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmark (not a test): the net plugin's TCP engine through its ABI (two processes) against
# `iperf3 -P 4`, over the same veth pair between two fresh network namespaces, in one run. Each round
# runs, back to back:
#   iperf3 -P 4                 the reference (4 streams, one thread per side, 128 KiB buffers)
#   iperf3 -P 4 -l 1M           the same with NCCL-sized buffers (1 MiB per send()/recv())
#   iperf3 -P 4 -l 4M           and 4 MiB (NCCL_BUFFSIZE); n/a where iperf3 caps -l at 1 MiB (3.12 does)
#   iperf3 -P 4 -Z              sendfile() zero-copy, for information
#   railscope 64 MiB            64 MiB messages, 4 in flight, each in its own buffer (copy sends)
#   railscope 64 MiB zc=on      the same with MSG_ZEROCOPY forced on (veth copies anyway: docs/tcp.md)
#   railscope NCCL-shaped       64 MiB moved as NCCL's proxy moves it over a net connection: 512 KiB
#                               steps, 8 in flight, i.e. a 4 MiB buffer (NCCL_BUFFSIZE / NCCL_STEPS)
#   railscope NCCL-shaped, NCCL_SOCKET_NTHREADS=0 (the polling thread moves the bytes of 4 sockets)
# and prints each row's median and its median per-round ratio to each iperf3 row of the same round
# (target >= 0.9 of `iperf3 -P 4 -l 1M`), with the 1-minute load average at the start of each round.
# The host's noise moves iperf3 by 2x between rounds; a ratio within one round cancels most of it.
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
    load=$(cut -d" " -f1 /proc/loadavg)
    ip=$(iperf)
    ip1=$(iperf -l 1M)
    ip4=$(iperf -l 4M 2>/dev/null || echo nan)  # some iperf3 versions (3.12) refuse -l above 1 MiB
    ipz=$(iperf -Z 2>/dev/null || echo 0)
    big=$(RAILSCOPE_TCP_ZEROCOPY=off plugin --size 67108864 --count 128 --inflight 4)
    bigzc=$(RAILSCOPE_TCP_ZEROCOPY=on plugin --size 67108864 --count 128 --inflight 4)
    shaped=$(RAILSCOPE_TCP_ZEROCOPY=off plugin --size 524288 --count 16384 --inflight 8)
    shaped0=$(RAILSCOPE_TCP_ZEROCOPY=off NCCL_SOCKET_NTHREADS=0 NCCL_NSOCKS_PERTHREAD=4 \
              plugin --size 524288 --count 16384 --inflight 8)
    printf "round %s (Gbit/s, load %s): iperf3 %.2f | -l 1M %.2f | -l 4M %.2f | -Z %.2f | 64 MiB %.2f | 64 MiB zc=on %.2f | NCCL-shaped %.2f | NCCL-shaped NTHREADS=0 %.2f\n" \
      "$r" "$load" "$ip" "$ip1" "$ip4" "$ipz" "$big" "$bigzc" "$shaped" "$shaped0"
    echo "$ip $ip1 $ip4 $ipz $big $bigzc $shaped $shaped0 $load" >> "$RESULTS"
  done
'
python3 - "$results" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
names = ["iperf3 -P 4", "iperf3 -P 4 -l 1M", "iperf3 -P 4 -l 4M", "iperf3 -P 4 -Z (sendfile)",
         "railscope 64 MiB messages", "railscope 64 MiB, MSG_ZEROCOPY on",
         "railscope NCCL-shaped (512 KiB x 8)", "railscope NCCL-shaped, NCCL_SOCKET_NTHREADS=0"]
refs = [0, 1, 2]  # the iperf3 rows each row is compared with, round by round
def ratio(i, ref):
    rs = [r[i] / r[ref] for r in rows if r[ref] > 0 and r[i] == r[i]]  # NaN: n/a
    return f"{statistics.median(rs):.2f}" if rs and i != ref else ""
print(f"\n{'row':<46} {'Gbit/s':>7} {'GB/s':>6} {'min':>6} {'max':>6}"
      f" {'/iperf3':>8} {'/-l 1M':>7} {'/-l 4M':>7}")
for i, name in enumerate(names):
    col = [r[i] for r in rows if r[i] == r[i]]
    if not col:
        print(f"{name:<46} {'n/a':>7}")
        continue
    med = statistics.median(col)
    print(f"{name:<46} {med:>7.2f} {med / 8:>6.2f} {min(col):>6.2f} {max(col):>6.2f}"
          f" {ratio(i, 0):>8} {ratio(i, 1):>7} {ratio(i, 2):>7}")
loads = [r[-1] for r in rows]
print(f"\n{len(rows)} rounds; load average (1 min) at round start: median {statistics.median(loads):.2f},"
      f" {min(loads):.2f}-{max(loads):.2f}")
print("ratio = median over rounds of (row / that iperf3 row of the same round); target >= 0.9 of -l 1M")
PY
