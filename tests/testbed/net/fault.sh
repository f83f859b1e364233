#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault cases of the net plugin on the test bed; each must end in an error naming the right
# diagnosis id within the time limit, with no crash (exit status >= 128) and no hang.
#   fault.sh BIN link_local   client (rxe0) forced to the link-local GID index 0, server on IPv4 GID
#   fault.sh BIN memlock      loopback under `ulimit -l 64` as nobody: registering 4 MiB fails
#   fault.sh BIN peer_killed  the sending process is SIGKILLed mid-transfer; the receiver reports it
#   fault.sh BIN link_down    vethA goes down mid-transfer: the sender on rxe0 reports the port error or
#                             the stall (rxe retries forever), the receiver then sees the sender close
set -u
bin=$1 case=$2
export NET_TRANSFER_ECHO=1
handle="$TESTBED_SCRATCH/net.handle"
rm -f "$handle"
failed_with() {  # failed_with FILE 'ID|ID': a call (not just the event thread) returned that diagnosis
  if grep -qE "NET/railscope (test|isend|irecv|connect|accept|regMr): \[($2)\]" "$1"; then echo "ok: $1 failed with $2"; return 0; fi
  echo "FAIL: no call in $1 failed with $2:"; grep -v "bad magic" "$1" | tail -8; return 1
}
no_crash() {  # no_crash RC NAME
  if [ "$1" -ge 124 ]; then echo "FAIL: $2 exited with $1 (crash or hang)"; return 1; fi
  if [ "$1" = 0 ]; then echo "FAIL: $2 succeeded"; return 1; fi
  return 0
}
case $case in
  link_local)
    timeout 90 "$bin" server "$handle" > "$TESTBED_SCRATCH/server.log" 2>&1 &
    server=$!
    NCCL_IB_GID_INDEX=0 timeout 90 "$bin" client "$handle" > "$TESTBED_SCRATCH/client.log" 2>&1
    crc=$?
    wait $server; src=$?
    no_crash $crc client && no_crash $src server &&
      failed_with "$TESTBED_SCRATCH/client.log" gid.link_local && failed_with "$TESTBED_SCRATCH/server.log" gid.link_local &&
      grep -q "fe80::" "$TESTBED_SCRATCH/client.log" && grep -q "::ffff:10.0.0.2" "$TESTBED_SCRATCH/client.log"
    ;;
  memlock)
    timeout 90 "$bin" loopback > "$TESTBED_SCRATCH/loopback.log" 2>&1
    rc=$?
    no_crash $rc loopback && failed_with "$TESTBED_SCRATCH/loopback.log" memlock.too_low &&
      grep -q "RLIMIT_MEMLOCK is 64 KiB" "$TESTBED_SCRATCH/loopback.log"
    ;;
  peer_killed)
    timeout 90 "$bin" server "$handle" --loop > "$TESTBED_SCRATCH/server.log" 2>&1 &
    server=$!
    "$bin" client "$handle" --loop > "$TESTBED_SCRATCH/client.log" 2>&1 &  # no `timeout`: $! must be the process
    client=$!
    for _ in $(seq 300); do grep -q "connected" "$TESTBED_SCRATCH/client.log" 2>/dev/null && break; sleep 0.2; done
    sleep 2
    kill -9 $client
    start=$SECONDS
    wait $server; src=$?
    echo "server ended $((SECONDS - start)) s after the kill"
    no_crash $src server && failed_with "$TESTBED_SCRATCH/server.log" peer.closed && [ $((SECONDS - start)) -lt 60 ]
    ;;
  link_down)
    . "$TESTBED_LIB"
    timeout 120 "$bin" server "$handle" --loop > "$TESTBED_SCRATCH/server.log" 2>&1 &
    server=$!
    NCCL_IB_TIMEOUT=14 timeout 120 "$bin" client "$handle" --loop > "$TESTBED_SCRATCH/client.log" 2>&1 &
    client=$!
    for _ in $(seq 300); do grep -q "connected" "$TESTBED_SCRATCH/client.log" 2>/dev/null && break; sleep 0.2; done
    sleep 1
    tb_link_down vethA
    start=$SECONDS
    wait $client; crc=$?
    echo "client ended $((SECONDS - start)) s after the link went down"
    wait $server; src=$?
    no_crash $crc client && no_crash $src server && [ $((SECONDS - start)) -lt 60 ] &&
      failed_with "$TESTBED_SCRATCH/client.log" 'async.port_error|progress.stalled' &&
      failed_with "$TESTBED_SCRATCH/server.log" 'async.port_error|peer.closed'
    ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
