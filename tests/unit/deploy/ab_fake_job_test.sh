#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `railscope ab` end to end with a fake job (fake_profiled_job.py): folder layout, environment per
# variant, comparison figures, refusal of different op/size sets, and exit codes.
source "$(dirname "$0")/ab_test_preamble.sh"

# 1. Two runs per variant, JSON output: alternating folders, ratio 1.5 at the bandwidth-bound sizes.
"$RAILSCOPE" ab --runs 2 --json "$WORK/ok.json" --out "$WORK/ok" -- python3 "$JOB" > "$WORK/ok.txt" 2> "$WORK/ok.err" \
  || { cat "$WORK/ok.err"; fail "ab exited $?"; }
for d in railscope-0 railscope-1 nccl-ib-0 nccl-ib-1; do
  [ "$(ls "$WORK/ok/$d"/fakehost-*.jsonl | wc -l)" -eq 2 ] || fail "want 2 profile files in $d"
  grep -q "\"tag\": \"${d%-*}\"" "$WORK/ok/$d"/fakehost-*.jsonl || fail "RAILSCOPE_PROFILE_TAG not ${d%-*} in $d"
done
grep -q "run 1/4: railscope-0" "$WORK/ok.err" || fail "first run is not railscope-0"
grep -q "run 3/4: nccl-ib-1" "$WORK/ok.err" || fail "runs do not alternate (A B, B A)"
python3 - "$WORK/ok.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["a"] == "railscope" and doc["b"] == "nccl-ib", doc
rows = {(r["op"], r["bytes"]): r for r in doc["rows"]}
assert len(rows) == 8, sorted(rows)
for (op, size), r in rows.items():
    a, b = r["railscope"], r["nccl-ib"]
    assert a["samples"] == 2 * 2 * 5 and b["samples"] == 20, r  # runs x ranks x iterations
    assert abs(r["ratio"] - 1.5) < 1e-6, (op, size, r["ratio"])
    assert 0 < a["busbw_p1_gbs"] <= a["busbw_p50_gbs"], r  # p1 = the slow tail (1st percentile)
    assert b["time_p99_us"] >= b["time_p50_us"] > a["time_p50_us"] > 0, r
big = rows[("AllReduce", 1 << 20)]
assert abs(big["railscope"]["busbw_p50_gbs"] - 30.0 * 1.02) < 1e-6, big
print("ab json: ok")
PY

# 2. Text table, Socket baseline.
"$RAILSCOPE" ab --baseline-net Socket --out "$WORK/sock" -- python3 "$JOB" > "$WORK/sock.txt" 2>/dev/null \
  || fail "ab --baseline-net Socket failed"
grep -q "nccl-socket busbw" "$WORK/sock.txt" || fail "table lacks the nccl-socket column"
grep -Eq "^AllReduce +1 MiB .* 6\.00x" "$WORK/sock.txt" || { cat "$WORK/sock.txt"; fail "ratio 6.00x not shown"; }

# 3. Different op/size sets are refused with exit 3 and a message naming the difference.
set +e
"$RAILSCOPE" ab --out "$WORK/mismatch" -- python3 "$JOB" --drop-size-on IB > /dev/null 2> "$WORK/mm.err"
rc=$?
set -e
[ $rc -eq 3 ] || fail "mismatched sets: exit $rc, want 3"
grep -q "refusing to compare" "$WORK/mm.err" || fail "no refusal message"
grep -q "only in railscope-0: AllGather 1 MiB" "$WORK/mm.err" || { cat "$WORK/mm.err"; fail "difference not named"; }

# 4. A failing run stops everything with exit 2 and names the run.
set +e
"$RAILSCOPE" ab --out "$WORK/fail" -- python3 "$JOB" --fail-on IB > /dev/null 2> "$WORK/fail.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "failing job: exit $rc, want 2"
grep -q "run nccl-ib-0 failed: exit status 7" "$WORK/fail.err" || { cat "$WORK/fail.err"; fail "failure not named"; }

# 5. No profile written (profiler not loaded) is refused with exit 3.
set +e
"$RAILSCOPE" ab --out "$WORK/noprof" -- python3 "$JOB" --no-profile-on railscope > /dev/null 2> "$WORK/np.err"
rc=$?
set -e
[ $rc -eq 3 ] || fail "no profile: exit $rc, want 3"
grep -q "run railscope-0: .*no railscope profile .*PROFILER/Plugin: Loaded" "$WORK/np.err" || { cat "$WORK/np.err"; fail "missing-profile message"; }

# 6. Reusing a non-empty output folder is refused before anything runs (exit 1).
set +e
"$RAILSCOPE" ab --out "$WORK/ok" -- python3 "$JOB" > /dev/null 2> "$WORK/reuse.err"
rc=$?
set -e
[ $rc -eq 1 ] || fail "reused folder: exit $rc, want 1"
grep -q "already exists and is not empty" "$WORK/reuse.err" || fail "reuse message"

# 7. A command that does not exist: exit 2 with the loader's reason.
set +e
"$RAILSCOPE" ab --out "$WORK/nocmd" -- /nonexistent/train.sh > /dev/null 2> "$WORK/nocmd.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "missing command: exit $rc, want 2"
grep -q "No such file or directory" "$WORK/nocmd.err" || fail "missing-command message"

# 8. --html uses `railscope report --baseline`; until that exists the failure must be explicit (exit 4).
if "$RAILSCOPE" --help 2>/dev/null | grep -Eq "^ +report( |$)"; then
  "$RAILSCOPE" ab --out "$WORK/html" --html "$WORK/ab.html" -- python3 "$JOB" > /dev/null 2>&1 \
    || fail "ab --html failed"
  grep -qi "<svg" "$WORK/ab.html" || fail "HTML page has no SVG plot"
else
  set +e
  "$RAILSCOPE" ab --out "$WORK/html" --html "$WORK/ab.html" -- python3 "$JOB" > /dev/null 2> "$WORK/html.err"
  rc=$?
  set -e
  [ $rc -eq 4 ] || fail "--html without report: exit $rc, want 4"
  grep -q "railscope report --baseline" "$WORK/html.err" || fail "--html failure message"
fi
echo "ab fake job: all checks passed"
