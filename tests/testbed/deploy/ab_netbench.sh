#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `railscope ab` with a real job in the soft-RoCE guest: railscope's net plugin (through netbench) vs.
# RDMA WRITEs by perftest, two runs each, alternating; checks the folders, the comparison and prints it.
# usage: ab_netbench.sh RAILSCOPE_CLI
set -uo pipefail
RS=$1
HERE=$(cd "$(dirname "$0")" && pwd)
out=$TESTBED_SCRATCH/ab
sizes=(65536 262144 1048576)
fail() { echo "FAIL: $*"; exit 1; }

timeout 1500 "$RS" ab --runs 2 --out "$out" --json "$TESTBED_SCRATCH/ab.json" -- \
    "$HERE/ab_netbench_job.sh" "$RS" "${sizes[@]}" || fail "railscope ab exited $?"
for d in railscope-0 nccl-ib-0 nccl-ib-1 railscope-1; do
    [[ $(ls "$out/$d"/*.jsonl 2>/dev/null | wc -l) -eq 2 ]] || fail "$d: want 2 profile files"
done
/usr/bin/python3 - "$TESTBED_SCRATCH/ab.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"]
keys = sorted((r["op"], r["bytes"]) for r in rows)
want = sorted((op, s) for op in ("Send", "Recv") for s in (65536, 262144, 1048576))
assert keys == want, keys
for r in rows:
    a, b = r["railscope"], r["nccl-ib"]
    assert a["samples"] == 2 and b["samples"] == 2, r
    assert a["busbw_p50_gbs"] > 0 and b["busbw_p50_gbs"] > 0 and r["ratio"] > 0, r
    if r["op"] == "Send":
        print("ab (rxe, TCG): %8d B  railscope %.4f GB/s  ib_write_bw %.4f GB/s  ratio %.2f"
              % (r["bytes"], a["busbw_p50_gbs"], b["busbw_p50_gbs"], r["ratio"]))
print("OK")
PY
