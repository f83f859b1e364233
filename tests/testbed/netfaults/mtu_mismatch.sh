#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fault: vethA MTU 9000 (active_mtu 4096) vs vethB 1500 (1024). The connection must work at 1024 and warn
# [mtu.mismatch] naming both netdev MTUs; every message up to 4 MiB (far above either MTU) verified.
# usage: mtu_mismatch.sh RAILSCOPE_CLI      (test bed: --mtu-a 9000 --mtu-b 1500)
set -uo pipefail
. "$TESTBED_LIB"
. "$(dirname "$0")/faultlib.sh"
RS=$1
nf_mark
nf_start pair timeout 240 stdbuf -oL "$RS" netbench --pair rxe0,rxe1 --min-size 8 --max-size 4M --iters 100 \
    --lat-iters 20 --bytes-per-size 4M --min-messages 2 --min-time 0 --timeout 60
nf_wait_exit pair 250 || nf_fail "netbench did not finish"
nf_show pair
log=$(nf_log pair)
[[ ${NF_RC[pair]} == 0 ]] || nf_fail "netbench exited with ${NF_RC[pair]}: the transfer must work at MTU 1024"
grep -qE 'NCCL WARN.*\[mtu\.mismatch\]' "$log" || nf_fail "no WARN line with [mtu.mismatch]"
grep -E 'NCCL WARN.*\[mtu\.mismatch\]' "$log" | grep -q 9000 || nf_fail "the warning does not name vethA's MTU 9000"
grep -E 'NCCL WARN.*\[mtu\.mismatch\]' "$log" | grep -q 1500 || nf_fail "the warning does not name vethB's MTU 1500"
grep -q 'DATA MISMATCH' "$log" && nf_fail "data corrupted"
grep -qE '^ +4M ' "$log" || nf_fail "no 4 MiB row: the large transfers did not complete"
nf_result
