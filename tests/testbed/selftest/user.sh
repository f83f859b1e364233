#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest-side selftest, run with --user nobody --memlock 64: CMD is unprivileged,
# its memlock limit is 64 KiB (soft and hard), uverbs is usable, and the scratch
# folder is writable.
set -u
fail() { echo "FAIL: $*"; exit 1; }
uid=$(id -u)
[[ $uid != 0 ]] || fail "running as root"
[[ $(ulimit -l) == 64 && $(ulimit -H -l) == 64 ]] || fail "ulimit -l is $(ulimit -l)/$(ulimit -H -l), expected 64"
ulimit -l 128 2>/dev/null && fail "an unprivileged CMD could raise its memlock limit"
echo "ok: uid $uid ($(id -un)), ulimit -l $(ulimit -l)"
ibv_devinfo -l | grep -q rxe0 || fail "ibv_devinfo -l as uid $uid does not list rxe0"
echo "ok: uverbs usable as uid $uid"
echo hello > "$TESTBED_SCRATCH/user.txt" || fail "cannot write to \$TESTBED_SCRATCH"
echo PASS
