#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault: unprivileged user with `ulimit -l 64` (KiB): registering netbench's buffers must fail with
# [memlock.too_low] within 60 s, no crash, no hang.
# usage: memlock.sh RAILSCOPE_CLI      (test bed: --user nobody --memlock 64)
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/faultlib.sh"
RS=$1
echo "running as $(id -un), ulimit -l $(ulimit -l)"
nf_mark
nf_start pair timeout 120 "$RS" netbench --pair rxe0,rxe1 --min-size 8 --max-size 1M --iters 10 --min-messages 2 --min-time 0 --timeout 60
nf_wait_diag 'memlock\.too_low' 60 "$(nf_log pair)" || nf_fail "no [memlock.too_low] diagnosis within 60 s"
nf_wait_exit pair 100 || nf_fail "netbench hangs (killed after 100 s)"
nf_show pair
[[ ${NF_RC[pair]} == 1 ]] || nf_fail "netbench ended with status ${NF_RC[pair]}, expected a clean failure (1)"
grep -E 'NCCL WARN.*\[memlock\.too_low\]' "$(nf_log pair)" | grep -qE '64 ?(KiB|kB|KB)|65536' ||
    nf_fail "the diagnosis does not print the limit (64 KiB)"
nf_result
