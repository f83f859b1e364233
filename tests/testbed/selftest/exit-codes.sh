#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Host-side selftest of `testbed run`: exit statuses propagate (7, 1, 124 on
# timeout), --env and the NCCL_*/RAILSCOPE_* allow-list reach CMD, CMD runs in
# the host's cwd, --scratch is shared read-write, and no QEMU is left behind.
set -u
TB=$(cd "$(dirname "$0")/.." && pwd -P)/testbed
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect STATUS testbed-args...
    local want=$1 rc=0; shift
    "$TB" run "$@" || rc=$?
    [[ $rc == "$want" ]] || fail "testbed run $* -> $rc, expected $want"
    echo "ok: testbed run $* -> $rc"
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

export NCCL_TESTBED_PROBE=n1 RAILSCOPE_TESTBED_PROBE_X=ignored RAILSCOPE_PROBE=r1 OTHER_PROBE=leak
# shellcheck disable=SC2016
expect 7 --scratch "$scratch" --env FOO=bar --env 'SPACED=a b' -- bash -c '
    [[ $FOO == bar && $SPACED == "a b" ]] || exit 3
    [[ $NCCL_TESTBED_PROBE == n1 && $RAILSCOPE_PROBE == r1 ]] || exit 4
    [[ -z ${OTHER_PROBE:-} ]] || exit 5
    [[ $PWD == '"$(pwd -P)"' && $TESTBED_SCRATCH == '"$scratch"' ]] || exit 6
    echo written > "$TESTBED_SCRATCH/out.txt"; exit 7'
[[ $(< "$scratch/out.txt") == written ]] || fail "file written to \$TESTBED_SCRATCH not seen on the host"
echo "ok: env, cwd and scratch"
expect 1 --scratch "$scratch/s1" -- false
start=$SECONDS
expect 124 --scratch "$scratch/s2" --timeout 3 -- sleep 600
(( SECONDS - start < 60 )) || fail "timeout run took $((SECONDS - start))s"
if pgrep -f 'mount_tag=ctl' > /dev/null; then fail "a QEMU is still running"; fi
echo PASS
