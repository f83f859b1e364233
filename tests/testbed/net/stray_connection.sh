#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stray connections at a verbs listener: just before the real peer connects, four
# connections reach the server's listener: one carrying an HTTP request, one 256 random bytes, one
# that stays silent, and one speaking another release's handshake version. The listener must drop them
# (logging the refusal; the other release is told why) and keep waiting for its peer: the real
# transfer completes and verifies on both ends.
# usage: stray_connection.sh NET_TRANSFER
set -u
bin=$1
export NET_TRANSFER_ECHO=1  # the plugin's log lines on stderr (net_transfer.cpp)
. "$(dirname "$0")/verbs_listener.sh"
start_server "$bin"
# The listener binds the address it advertises, not every address of the host.
if ss -ltn 2>/dev/null | grep -qE "(0\.0\.0\.0|\*):$port\b"; then
  echo "FAIL: the listener on port $port binds all addresses"; ss -ltn; exit 1
fi
# The listener drops a stray as soon as it has read enough to refuse it: a later write of ours to that
# connection then meets a reset. Without this, bash's own printf (which may write in pieces) would die of
# SIGPIPE (status 141) before the real client runs; what counts is the listener's log, checked below.
trap '' PIPE
exec 3<>"/dev/tcp/$addr/$port" || { echo "FAIL: cannot open the HTTP stray"; exit 1; }
printf 'GET / HTTP/1.1\r\nHost: %s\r\n\r\n' "$addr" >&3
exec 4<>"/dev/tcp/$addr/$port" || { echo "FAIL: cannot open the random stray"; exit 1; }
head -c 256 /dev/urandom >&4
exec 5<>"/dev/tcp/$addr/$port" || { echo "FAIL: cannot open the silent stray"; exit 1; }
# railscope of another release: a message header with railscope's magic ("RSNM") and handshake version 3.
exec 6<>"/dev/tcp/$addr/$port" || { echo "FAIL: cannot open the other-release peer"; exit 1; }
printf 'RSNM\x03\x00\x01\x00\x00\x00\x00\x00' >&6
timeout 120 "$bin" client "$handle" > "$TESTBED_SCRATCH/client.log" 2>&1
client_rc=$?
wait "$server"
server_rc=$?
timeout 5 head -c 4 <&6 > "$TESTBED_SCRATCH/version.reply"
exec 3>&- 4>&- 5>&- 6>&-
cat "$TESTBED_SCRATCH/server.log"
tail -3 "$TESTBED_SCRATCH/client.log"
echo "client rc=$client_rc server rc=$server_rc"
fail=0
[ "$client_rc" = 0 ] && [ "$server_rc" = 0 ] || { echo "FAIL: the transfer did not complete"; fail=1; }
grep -q "server: PASS" "$TESTBED_SCRATCH/server.log" || { echo "FAIL: the server did not verify"; fail=1; }
grep -q "client: PASS" "$TESTBED_SCRATCH/client.log" || { echo "FAIL: the client did not verify"; fail=1; }
if grep -E "dropped a stray connection \(malformed\)" "$TESTBED_SCRATCH/server.log" | grep -q "0x20544547"; then
  echo "ok: the HTTP request was refused and logged"
else
  echo "FAIL: no refusal of the HTTP request (bad message magic 0x20544547) in the server log"; fail=1
fi
# Not a stray but railscope of another release: named with both versions and the fix, and told in a REPLY
# (which that release cannot read, and names: its connect fails saying why).
if grep "refused a peer of another railscope release" "$TESTBED_SCRATCH/server.log" |
    grep "handshake version 3, this build" | grep -q "same railscope release on every node"; then
  echo "ok: the peer of another release was named"
else
  echo "FAIL: no line naming the peer of another release, both versions and the fix"; fail=1
fi
[ "$(cat "$TESTBED_SCRATCH/version.reply")" = RSNM ] ||
  { echo "FAIL: the peer of another release got no REPLY"; fail=1; }
n=$(grep -c "dropped a stray connection (malformed)" "$TESTBED_SCRATCH/server.log")
[ "$n" = 1 ] || { echo "FAIL: $n refusal lines of one kind, expected 1 (logged once per kind)"; fail=1; }
exit $fail
