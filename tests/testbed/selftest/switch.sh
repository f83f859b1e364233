#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest-side selftest of `testbed run --switch` and tb_cable_pull/plug: traffic crosses the switch
# sw0; pulling vethA's cable in the middle of an RC ping-pong takes rxe0's port down while vethA stays
# up and keeps its policy route (rxe1's port, behind the switch, stays ACTIVE); plugging it back
# brings rxe0 ACTIVE and the same ping-pong completes: its QPs outlived the outage, as on a NIC.
# (With `ip link set vethA down` instead, the ping-pong ends in "local QP operation error": measured,
# 1 of 1 runs, against 2 of 2 completed with the cable pulled.)
set -u
. "$TESTBED_LIB"
fail() { echo "FAIL: $*"; exit 1; }

[[ ${TESTBED_SWITCH:-0} == 1 ]] || fail "TESTBED_SWITCH is '${TESTBED_SWITCH:-}', expected 1"
[[ $(ip -o link show swA) == *"master sw0"* && $(ip -o link show swB) == *"master sw0"* ]] ||
    fail "swA and swB are not ports of sw0: $(ip -o link show)"
[[ $(ip -o link show vethA) == *"vethA@swA"* ]] || fail "vethA is not cabled to swA: $(ip -o link show vethA)"
tb_gid_index_v4 rxe0 g0 && tb_gid_index_v4 rxe1 g1 || fail "tb_gid_index_v4"

srv=0 cli=0
pingpong_start() {  # pingpong_start N: N RC round trips rxe0 -> rxe1 across the switch, in the background
    timeout 90 ibv_rc_pingpong -d rxe1 -g "$g1" -n "$1" > /tmp/srv.log 2>&1 &
    srv=$!
    tb_wait_tcp_listen 18515 || fail "ibv_rc_pingpong server did not start"
    timeout 90 ibv_rc_pingpong -d rxe0 -g "$g0" -n "$1" "$TESTBED_IP_B" > /tmp/cli.log 2>&1 &
    cli=$!
}
pingpong_wait() {  # pingpong_wait WHAT
    local c=0 s=0
    wait "$cli" || c=$?
    wait "$srv" || s=$?
    [[ $c == 0 && $s == 0 ]] ||
        { cat /tmp/cli.log /tmp/srv.log; fail "$1: ibv_rc_pingpong client status $c, server $s"; }
    echo "ok: $1: ibv_rc_pingpong rxe0 -> rxe1 across sw0 ($(grep -h 'iters in' /tmp/cli.log))"
}
port_state() { _tb_read "/sys/class/infiniband/$1/ports/1/state" "$2"; }

pingpong_start 50
pingpong_wait "switch"
tb_cable_pull vethX 2> /dev/null && fail "tb_cable_pull accepted vethX"
pingpong_start 20000
tb_sleep 1
kill -0 "$cli" 2> /dev/null || { cat /tmp/cli.log; fail "the ping-pong ended before the pull"; }
tb_cable_pull vethA || fail "tb_cable_pull vethA"
for ((i = 0; i < 100; i++)); do
    port_state rxe0 s0
    [[ $s0 == *DOWN* ]] && break
    tb_sleep 0.05
done
[[ $s0 == *DOWN* ]] || fail "rxe0 port is '$s0' with its cable pulled"
port_state rxe1 s1
[[ $s1 == *ACTIVE* ]] || fail "rxe1 port is '$s1' while only vethA's cable is out"
link=$(ip -o link show vethA)
[[ $link == *"<"*",UP,"* || $link == *"<"*",UP>"* ]] || fail "vethA is not up with its cable pulled: $link"
[[ $link == *NO-CARRIER* ]] || fail "vethA has carrier with its cable pulled: $link"
[[ $(ip route show table 100) == *"10.0.0.2 dev vethA"* ]] || fail "the policy route of vethA is gone"
echo "ok: cable pulled: rxe0 '$s0', rxe1 '$s1', vethA up without carrier, route kept"
tb_cable_plug vethA || fail "tb_cable_plug vethA"
tb_wait_port_active rxe0 30 || fail "rxe0 not ACTIVE after tb_cable_plug"
pingpong_wait "across the pull"
echo PASS
