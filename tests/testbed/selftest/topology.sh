#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest-side selftest: both rxe devices exist and are PORT_ACTIVE, each has an
# IPv4-mapped RoCE v2 GID, and RC traffic flows rxe0 <-> rxe1 across the veth
# pair (ibv_rc_pingpong, then ib_write_bw), with the client on rxe0 (10.0.0.1)
# and the server on rxe1 (10.0.0.2).
set -u
. "$TESTBED_LIB"
fail() { echo "FAIL: $*"; exit 1; }

for d in rxe0 rxe1; do
    info=$(ibv_devinfo -d "$d") || fail "ibv_devinfo -d $d"
    [[ $info == *"PORT_ACTIVE"* ]] || fail "$d is not PORT_ACTIVE: $info"
    tb_gid_index_v4 "$d" gx || fail "$d has no IPv4 RoCE v2 GID"
    printf -v "gid_$d" '%s' "$gx"
    echo "ok: $d PORT_ACTIVE, IPv4 GID index $gx"
done
[[ $(rdma link show) == *"rxe0/1 state ACTIVE"*"netdev vethA"* ]] || fail "rdma link: rxe0 not on vethA"

# ibv_rc_pingpong (client starts once the server listens on TCP 18515)
timeout 60 stdbuf -oL ibv_rc_pingpong -d rxe1 -g "$gid_rxe1" -n 200 > /tmp/srv.log 2>&1 &
srv=$!
tb_wait_tcp_listen 18515 || fail "ibv_rc_pingpong server did not start"
ok=0
timeout 60 stdbuf -oL ibv_rc_pingpong -d rxe0 -g "$gid_rxe0" -n 200 "$TESTBED_IP_B" > /tmp/cli.log 2>&1 && ok=1
wait "$srv"; src=$?
cat /tmp/cli.log
[[ $ok == 1 && $src == 0 ]] || { cat /tmp/srv.log; fail "ibv_rc_pingpong (client ok=$ok, server rc=$src)"; }
grep -q 'iters in' /tmp/cli.log || fail "ibv_rc_pingpong printed no result"
echo "ok: ibv_rc_pingpong rxe0 -> rxe1"

# ib_write_bw, 64 KiB messages
timeout 60 stdbuf -oL ib_write_bw -d rxe1 -x "$gid_rxe1" -F -s 65536 -n 200 > /tmp/srv.log 2>&1 &
srv=$!
tb_wait_tcp_listen 18515 || fail "ib_write_bw server did not start"
timeout 60 stdbuf -oL ib_write_bw -d rxe0 -x "$gid_rxe0" -F -s 65536 -n 200 "$TESTBED_IP_B" > /tmp/cli.log 2>&1
crc=$?
wait "$srv"; src=$?
grep -E '^ *65536 ' /tmp/cli.log || { cat /tmp/cli.log /tmp/srv.log; fail "ib_write_bw (client rc=$crc, server rc=$src)"; }
[[ $crc == 0 && $src == 0 ]] || fail "ib_write_bw (client rc=$crc, server rc=$src)"
echo "ok: ib_write_bw rxe0 -> rxe1"
echo PASS
