#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A connection flood at a verbs listener: 300 TCP connections that never send a byte reach the server's
# listener before the real peer connects, and 300 more while it connects (all from the client's own
# address, as a flood from the peer's node would). The listener closes the oldest unverified
# connections to make room (at most 128 per source address), names the flood at WARN once per source
# and interval ([peer.connection_flood]), and the real transfer completes and verifies on both ends.
# --healthy: the twin without a flood; the listener logs no refusal at all.
# usage: listener_flood.sh NET_TRANSFER [--healthy]
set -u
bin=$1
healthy=0
[[ ${2:-} == --healthy ]] && healthy=1
export NET_TRANSFER_ECHO=1  # the plugin's log lines on stderr, "[nccl-log LEVEL]" (2 = WARN)
. "$(dirname "$0")/verbs_listener.sh"
rm -f "$TESTBED_SCRATCH/flood.ready"
start_server "$bin"
flooder=
if ((!healthy)); then
  # Silent connections, held open until killed; "ready" once the first 300 are up.
  /usr/bin/python3 - "$addr" "$port" "$TESTBED_SCRATCH/flood.ready" <<'PY' &
import socket, sys, time
addr, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
held = []
def flood(n):
    for _ in range(n):
        s = socket.socket()
        s.connect((addr, port))
        held.append(s)
flood(300)
open(ready, "w").close()
flood(300)
time.sleep(600)
PY
  flooder=$!
  for _ in $(seq 600); do [ -e "$TESTBED_SCRATCH/flood.ready" ] && break; sleep 0.1; done
  [ -e "$TESTBED_SCRATCH/flood.ready" ] || { echo "FAIL: the flood did not start"; exit 1; }
fi
t0=$(date +%s%N)
timeout 120 "$bin" client "$handle" > "$TESTBED_SCRATCH/client.log" 2>&1
client_rc=$?
t1=$(date +%s%N)
wait "$server"
server_rc=$?
[ -n "$flooder" ] && kill "$flooder" 2>/dev/null
cat "$TESTBED_SCRATCH/server.log"
tail -3 "$TESTBED_SCRATCH/client.log"
echo "client rc=$client_rc server rc=$server_rc; the client connected and transferred in $(((t1 - t0) / 1000000)) ms"
fail=0
[ "$client_rc" = 0 ] && [ "$server_rc" = 0 ] || { echo "FAIL: the transfer did not complete"; fail=1; }
grep -q "server: PASS" "$TESTBED_SCRATCH/server.log" || { echo "FAIL: the server did not verify"; fail=1; }
grep -q "client: PASS" "$TESTBED_SCRATCH/client.log" || { echo "FAIL: the client did not verify"; fail=1; }
floods=$(grep -c "\[peer.connection_flood\]" "$TESTBED_SCRATCH/server.log")
strays=$(grep -c "stray connection" "$TESTBED_SCRATCH/server.log")
if ((healthy)); then
  [ "$floods" = 0 ] && [ "$strays" = 0 ] || { echo "FAIL: the healthy run logged refusals"; fail=1; }
  if grep "^\[nccl-log 2\]" "$TESTBED_SCRATCH/server.log" | grep -q "listener"; then
    echo "FAIL: the healthy listener warned"; fail=1
  fi
else
  if grep "^\[nccl-log 2\]" "$TESTBED_SCRATCH/server.log" | grep -q "to make room (flood)"; then
    echo "ok: the flood was named at WARN"
  else
    echo "FAIL: no WARN naming the flood"; fail=1
  fi
  # One line per source and interval (10 s), and the count at close: never one per connection.
  [ "$floods" -le 4 ] || { echo "FAIL: $floods flood lines, expected one per source and interval"; fail=1; }
fi
exit $fail
