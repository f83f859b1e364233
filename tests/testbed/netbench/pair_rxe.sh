#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Test bed: `railscope netbench --pair rxe0,rxe1` end to end over soft-RoCE with railscope's plugin:
# every size from 8 B to 64 MiB verified (pattern + checksum), grouped receives, and JSON output. Both
# runs are healthy, so neither end may log a warning (a close that warned of eager messages
# "not acknowledged by the receiver" after the receiver had taken them all).
# usage: pair_rxe.sh RAILSCOPE_CLI
set -uo pipefail
RS=$1
out=$TESTBED_SCRATCH/netbench.json
err=$TESTBED_SCRATCH/netbench.err
fail=0

# no_warnings FILE: the plugin's warnings in FILE, if any, fail the case. Packet loss and congestion
# on the emulated fabric come from the host's load (rxe drops when starved of CPU), not from the run.
no_warnings() {
    local bad
    bad=$(grep ' WARN ' "$1" | grep -v -e '\[fabric.packet_loss\]' -e '\[fabric.congestion\]')
    if [[ -n $bad ]]; then echo "FAIL: a healthy run logged warnings:"; echo "$bad"; fail=1; fi
}

echo "== netbench --pair rxe0,rxe1, 8 B .. 64 MiB, verified"
# --min-messages 2 --min-time 0: the budget alone sizes each row, as before (16 verified 64 MiB round
# trips would cost CI a minute under TCG; the minimums are unit-tested, NetbenchOptions.*).
if ! timeout 600 stdbuf -oL "$RS" netbench --pair rxe0,rxe1 --min-size 8 --max-size 64M --iters 200 \
        --lat-iters 50 --bytes-per-size 8M --min-messages 2 --min-time 0 --buffer-bytes 134217728 --timeout 60 --json > "$out" 2> "$err"; then
    echo "FAIL: netbench --pair exited non-zero"; fail=1
fi
cat "$err" "$out"
no_warnings "$err"
python3 - "$out" <<'PY' || fail=1
import json, sys
j = json.load(open(sys.argv[1]))
assert j["engine"] == "verbs", f"engine {j.get('engine')}"  # rxe0 is an RDMA device
rows = j["results"]
sizes = [r["size"] for r in rows]
want = [8 << i for i in range(24)]
assert sizes == want, f"sizes {sizes}"
for r in rows:
    assert r["mismatches"] == 0, r
    assert r["verified_messages"] > 0, r
    assert r["gbs"] > 0 and r["lat_p50_us"] > 0, r
print("OK: 24 sizes, all verified;",
      "1 MiB: %.3f Gb/s, 8 B p50 %.1f us" % ([r["gbits"] for r in rows if r["size"] == 1 << 20][0], rows[0]["lat_p50_us"]))
PY

echo "== grouped receives n=8, 16 comms worth of window"
if ! timeout 300 stdbuf -oL "$RS" netbench --pair rxe0,rxe1 --min-size 1K --max-size 256K --recvs 8 --window 4 \
        --iters 256 --mode bw --min-messages 2 --min-time 0 --timeout 60 2> "$err"; then
    echo "FAIL: netbench --recvs 8"; fail=1
fi
cat "$err"
no_warnings "$err"
exit $fail
