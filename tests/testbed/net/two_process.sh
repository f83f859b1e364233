#!/usr/bin/env bash
# Two processes through the ABI: server on rxe1, client on rxe0, handle passed through a file.
# usage: two_process.sh NET_TRANSFER [VAR=VALUE ...]   (environment for the server only)
set -u
bin=$1
shift
handle="$TESTBED_SCRATCH/net.handle"
rm -f "$handle"
env "$@" timeout 120 "$bin" server "$handle" > "$TESTBED_SCRATCH/server.log" 2>&1 &
server=$!
timeout 120 "$bin" client "$handle"
client_rc=$?
wait "$server"
server_rc=$?
cat "$TESTBED_SCRATCH/server.log"
echo "client rc=$client_rc server rc=$server_rc"
[ "$client_rc" = 0 ] && [ "$server_rc" = 0 ]
