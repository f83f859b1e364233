#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest-side selftest: mtu.sh EXPECTED_RXE0 EXPECTED_RXE1
# Checks active_mtu of rxe0/rxe1 as set by --mtu-a/--mtu-b, then that a runtime
# change with tb_set_mtu is followed by rxe (9000 -> 4096, 1500 -> 1024).
set -u
. "$TESTBED_LIB"
fail() { echo "FAIL: $*"; exit 1; }
check() {  # check DEV EXPECTED WHAT
    local m
    tb_active_mtu "$1" m || fail "cannot read active_mtu of $1"
    [[ $m == "$2" ]] || fail "$3: $1 active_mtu is $m, expected $2"
    echo "ok: $3: $1 active_mtu $m"
}
check rxe0 "$1" "at boot"
check rxe1 "$2" "at boot"
tb_set_mtu vethA 9000 && tb_set_mtu vethB 9000 || fail "tb_set_mtu"
check rxe0 4096 "after tb_set_mtu 9000"
check rxe1 4096 "after tb_set_mtu 9000"
tb_set_mtu vethA 1500 && tb_set_mtu vethB 1500 || fail "tb_set_mtu"
check rxe0 1024 "after tb_set_mtu 1500"
check rxe1 1024 "after tb_set_mtu 1500"
echo PASS
