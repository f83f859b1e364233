#!/usr/bin/env bash
# Benchmark (not a test): 64 MiB messages through the net plugin's TCP engine (its ABI, two
# processes) with copy sends (RAILSCOPE_TCP_ZEROCOPY=off) and with MSG_ZEROCOPY forced on, vs
# `iperf3 -P 4` and `iperf3 -P 4 -Z` (sendfile zero-copy), over the same veth pair between two fresh
# network namespaces, in one run; prints all four and the ratios to iperf3 (target >= 0.9). On veth
# the kernel copies zero-copy sends anyway (docs/tcp.md): expect no gain there. Needs root and
# iperf3 (scripts/install-deps.sh).
#
# usage: bench/tcp_vs_iperf/run.sh [BUILD_DIR] [ROUNDS]   (env: NCCL_SOCKET_NTHREADS etc. pass through)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
rounds="${2:-3}"
bw="$build/bench/tcp_vs_iperf/tcp_abi_bw"
[ -x "$bw" ] || { echo "build it first: cmake --build $build --target tcp_abi_bw"; exit 1; }
command -v iperf3 >/dev/null || { echo "iperf3 missing: scripts/install-deps.sh"; exit 1; }

export RAILSCOPE_TRANSPORT=tcp
exec "$root/tests/abi/net_tcp/in_netns_pair.sh" bash -c '
  set -euo pipefail
  pidfile=/tmp/rs-iperf3-$$.pid
  trap '"'"'kill "$(cat "$pidfile" 2>/dev/null)" 2>/dev/null || true; rm -f "$pidfile"'"'"' EXIT
  ip netns exec "$RAILSCOPE_TEST_PEER_NETNS" iperf3 -s -D -I "$pidfile" >/dev/null
  sleep 0.5
  iperf() { iperf3 -c "$RAILSCOPE_TEST_PEER_ADDR" -P 4 -t 5 "$@" -J |
    python3 -c "import json,sys; print(json.load(sys.stdin)[\"end\"][\"sum_received\"][\"bits_per_second\"]/1e9)"; }
  plugin() { RAILSCOPE_TCP_ZEROCOPY=$1 "'"$bw"'" --size 67108864 --count 128 --inflight 4 | cut -d" " -f4; }
  best() { python3 -c "print(max($1,$2))"; }
  b_ip=0; b_ipz=0; b_copy=0; b_zc=0
  for r in $(seq 1 '"$rounds"'); do
    ip=$(iperf)
    ipz=$(iperf -Z 2>/dev/null || echo 0)   # iperf3 -Z: sendfile() zero-copy
    copy=$(plugin off)
    zc=$(plugin on)
    printf "round %s: iperf3 -P 4: %.2f  iperf3 -P 4 -Z: %.2f  railscope tcp copy: %.2f  railscope tcp zerocopy=on: %.2f Gbit/s\n" \
      "$r" "$ip" "$ipz" "$copy" "$zc"
    b_ip=$(best "$b_ip" "$ip"); b_ipz=$(best "$b_ipz" "$ipz"); b_copy=$(best "$b_copy" "$copy"); b_zc=$(best "$b_zc" "$zc")
  done
  printf "best (Gbit/s): iperf3 -P 4 %.2f | iperf3 -P 4 -Z %.2f | railscope copy %.2f (ratio %.2f) | railscope zerocopy=on %.2f (ratio %.2f)\n" \
    "$b_ip" "$b_ipz" "$b_copy" "$(python3 -c "print($b_copy/$b_ip)")" "$b_zc" "$(python3 -c "print($b_zc/$b_ip)")"
'
