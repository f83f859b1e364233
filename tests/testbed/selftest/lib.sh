#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest-side selftest (as root) of guest-lib.sh: tb_as_user, tb_steer_rx, tb_link_down/up
# (traffic resumes after the policy route is restored), tb_gid_index_v4.
set -u
. "$TESTBED_LIB"
fail() { echo "FAIL: $*"; exit 1; }

out=$(tb_as_user nobody 64 bash -c 'echo "$(id -u) $(ulimit -l)"') || fail "tb_as_user"
[[ $out == "65534 64" ]] || fail "tb_as_user gave '$out', expected '65534 64'"
echo "ok: tb_as_user nobody 64 -> uid/memlock $out"

tb_gid_index_v4 rxe0 g0 && tb_gid_index_v4 rxe1 g1 || fail "tb_gid_index_v4"
[[ $(tb_gid_index_v4 rxe0) == "$g0" ]] || fail "tb_gid_index_v4 print/VAR mismatch"
echo "ok: tb_gid_index_v4 rxe0=$g0 rxe1=$g1"

_tb_read /sys/class/net/vethA/queues/rx-0/rps_cpus m || fail "no rps_cpus on vethA"
[[ $m == 1 ]] || fail "vethA's packets are steered to CPU mask '$m', expected 1 (vCPU 0)"
tb_steer_rx vethB 1 || fail "tb_steer_rx vethB 1"
_tb_read /sys/class/net/vethB/queues/rx-0/rps_cpus m
[[ $m == 2 ]] || fail "tb_steer_rx vethB 1 gave CPU mask '$m', expected 2"
tb_steer_rx vethB 0 && tb_steer_rx vethB x 2> /dev/null && fail "tb_steer_rx accepted CPU 'x'"
echo "ok: tb_steer_rx (the test bed steers vethA to vCPU 0)"

tb_link_down vethA || fail "tb_link_down"
[[ $(ip route show table 100) != *"dev vethA"* ]] || echo "note: route survived link down"
tb_link_up vethA || fail "tb_link_up"
[[ $(ip route show table 100) == *"10.0.0.2 dev vethA"* ]] || fail "tb_link_up did not restore the policy route"
tb_wait_port_active rxe0 30 && tb_wait_port_active rxe1 30 || fail "ports not ACTIVE after link up"
echo "ok: link down/up restored the route, ports ACTIVE"
timeout 60 ibv_rc_pingpong -d rxe1 -g "$g1" -n 50 > /tmp/srv.log 2>&1 &
srv=$!
tb_wait_tcp_listen 18515 || fail "server did not start"
timeout 60 ibv_rc_pingpong -d rxe0 -g "$g0" -n 50 "$TESTBED_IP_B" > /tmp/cli.log 2>&1 || { cat /tmp/cli.log /tmp/srv.log; fail "no traffic after tb_link_up"; }
wait "$srv" || fail "server after tb_link_up"
echo "ok: traffic after link down/up"
echo PASS
