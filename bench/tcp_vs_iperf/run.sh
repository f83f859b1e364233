#!/usr/bin/env bash
# Benchmark (not a test): 64 MiB messages through the net plugin's TCP engine (its ABI, two
# processes) vs `iperf3 -P 4`, over the same veth pair between two fresh network namespaces, in one
# run; prints both and their ratio (target >= 0.9). Needs root and iperf3 (scripts/install-deps.sh).
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
  best_iperf=0; best_plugin=0
  for r in $(seq 1 '"$rounds"'); do
    ip=$(iperf3 -c "$RAILSCOPE_TEST_PEER_ADDR" -P 4 -t 5 -J | python3 -c "import json,sys; print(json.load(sys.stdin)[\"end\"][\"sum_received\"][\"bits_per_second\"]/1e9)")
    pl=$("'"$bw"'" --size 67108864 --count 128 --inflight 4 | cut -d" " -f4)
    echo "round $r: iperf3 -P 4: $(printf %.2f "$ip") Gbit/s   railscope tcp (ABI, 64 MiB): $pl Gbit/s   ratio $(python3 -c "print(f\"{$pl/$ip:.2f}\")")"
    best_iperf=$(python3 -c "print(max($best_iperf,$ip))"); best_plugin=$(python3 -c "print(max($best_plugin,$pl))")
  done
  echo "best: iperf3 -P 4 $(printf %.2f "$best_iperf") Gbit/s, railscope tcp $(printf %.2f "$best_plugin") Gbit/s, ratio $(python3 -c "print(f\"{$best_plugin/$best_iperf:.2f}\")")"
'
