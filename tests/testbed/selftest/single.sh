#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest-side selftest, run with --single: only rxe0 (on dum0), PORT_ACTIVE,
# and ib_write_bw with client and server on the same device works.
set -u
. "$TESTBED_LIB"
fail() { echo "FAIL: $*"; exit 1; }
[[ -d /sys/class/infiniband/rxe0 && ! -e /sys/class/infiniband/rxe1 ]] || fail "expected rxe0 only"
[[ $(ibv_devinfo -d rxe0) == *PORT_ACTIVE* ]] || fail "rxe0 not PORT_ACTIVE"
tb_gid_index_v4 rxe0 gx || fail "no IPv4 GID"
timeout 60 ib_write_bw -d rxe0 -x "$gx" -F -s 65536 -n 100 > /tmp/srv.log 2>&1 &
srv=$!
tb_wait_tcp_listen 18515 || fail "server did not start"
timeout 60 ib_write_bw -d rxe0 -x "$gx" -F -s 65536 -n 100 "$TESTBED_IP_A" > /tmp/cli.log 2>&1 || { cat /tmp/cli.log /tmp/srv.log; fail "ib_write_bw client"; }
wait "$srv" || fail "ib_write_bw server"
grep -E '^ *65536 ' /tmp/cli.log
echo PASS
