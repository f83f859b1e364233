#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two processes through the ABI: server on rxe1, client on rxe0, handle passed through a file.
# --link-down-at-close: once the server (the receiver) has every message, vethB goes down, the server
# closes and exits, the link comes back, then the client (the sender) closes: its close must learn that
# every eager message was taken although the receiver's QP is gone, and say nothing.
# usage: two_process.sh NET_TRANSFER [--link-down-at-close] [VAR=VALUE ...]   (environment for the server)
set -u
. "$TESTBED_LIB"
bin=$1
shift
link_down=0
if [[ ${1:-} == --link-down-at-close ]]; then link_down=1; shift; fi
handle="$TESTBED_SCRATCH/net.handle"
rm -f "$handle"
if ((link_down)); then
    export NET_TRANSFER_SYNC_DIR=$TESTBED_SCRATCH/sync
    rm -rf "$NET_TRANSFER_SYNC_DIR" && mkdir -p "$NET_TRANSFER_SYNC_DIR"
fi
env "$@" timeout 120 "$bin" server "$handle" > "$TESTBED_SCRATCH/server.log" 2>&1 &
server=$!
timeout 120 "$bin" client "$handle" &
client=$!
if ((link_down)); then
    s=$NET_TRANSFER_SYNC_DIR
    for ((i = 0; i < 600; i++)); do [[ -e $s/received ]] && break; tb_sleep 0.1; done
    tb_link_down vethB
    touch "$s/link_down"
fi
wait "$server"
server_rc=$?
if ((link_down)); then
    tb_link_up vethB
    tb_wait_port_active rxe0 30 && tb_wait_port_active rxe1 30
    touch "$s/go"
fi
wait "$client"
client_rc=$?
cat "$TESTBED_SCRATCH/server.log"
echo "client rc=$client_rc server rc=$server_rc"
[ "$client_rc" = 0 ] && [ "$server_rc" = 0 ]
