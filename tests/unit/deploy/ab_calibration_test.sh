#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `railscope ab --calibration` end to end with the fake job (fake_profiled_job.py), whose calibrated runs
# are --calibrated-gain times faster from 64 KiB on with TREE/LL128: a known win is reported as won with
# its ratio and interval; the twin whose difference is inside the spread gets no verdict of a win; a loss
# is a loss; sizes where both ran the same choice are not judged; a bad calibration or contradicting flags
# are refused before anything runs.
source "$(dirname "$0")/ab_test_preamble.sh"

cat > "$WORK/cal.txt" <<'CAL'
cluster nodes=2 ranks_per_node=1
point coll=allreduce bytes=1M algo=tree proto=ll128 ranks=2 nodes=2 busbw_GBps=45 spread_GBps=0.4 samples=5
CAL
# A calibration in the caller's environment must not reach the uncalibrated runs (the job fails on a
# RAILSCOPE_TUNER_CALIBRATION that names no file).
export RAILSCOPE_TUNER_CALIBRATION=/nonexistent/calibration.txt

run_ab() {  # name gain
  "$RAILSCOPE" ab --runs 2 --calibration "$WORK/cal.txt" --json "$WORK/$1.json" --out "$WORK/$1" \
    -- python3 "$JOB" --calibrated-gain "$2" > "$WORK/$1.txt" 2> "$WORK/$1.err" \
    || { cat "$WORK/$1.err"; fail "$1: ab exited $?"; }
}
check() {  # name verdict-for-the-judged-sizes
  python3 - "$WORK/$1.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
want = sys.argv[2]
assert doc["a"] == "calibrated" and doc["b"] == "uncalibrated", doc
cal = doc["calibration"]
assert cal["file"].endswith("/cal.txt"), cal["file"]
rows = {(r["op"], r["bytes"]): r for r in cal["rows"]}
assert len(rows) == 8, sorted(rows)
for (op, size), r in rows.items():
    c, u = r["calibrated"], r["uncalibrated"]
    assert c["collectives"] == 2 * 5 and u["collectives"] == 10, r  # runs x iterations, ranks folded
    if size < 65536:
        assert r["verdict"] == "same_choice" and c["choice"] == u["choice"] == "ring/simple", r
        continue
    assert c["choice"] == "tree/ll128" and u["choice"] == "ring/simple", r
    assert abs(u["spread_gbs"] - u["busbw_median_gbs"] / 102) < 1e-3, r  # iterations 1.00 ... 1.04
    assert r["ratio_low"] <= r["ratio"] <= r["ratio_high"], r
    assert abs(r["gain_gbs"] - (c["busbw_median_gbs"] - u["busbw_median_gbs"])) < 1e-3, r
    assert r["verdict"] == want, (op, size, r)
    if want == "won":
        assert abs(r["ratio"] - 1.5) < 1e-4 and r["ratio_low"] > 1 and r["gain_gbs"] > 0, r
    elif want == "lost":
        assert r["ratio_high"] < 1 and r["gain_gbs"] < 0, r
    else:
        assert r["ratio_low"] <= 1 <= r["ratio_high"], r
print(f"ab --calibration json ({want}): ok")
PY
}

# 1. A known win: 1.5x from 64 KiB on.
run_ab win 1.5
check win won
grep -Eq "^AllReduce +1 MiB .*tree/ll128 45\.90±0\.45 .*ring/simple 30\.60±0\.30 .*x1\.50 \[1\.47, 1\.53\] .*won \(\+15\.30 GB/s\)" \
  "$WORK/win.txt" || { cat "$WORK/win.txt"; fail "win row not shown"; }
grep -q "run 1/4: calibrated-0" "$WORK/win.err" || fail "first run is not calibrated-0"

# 2. Its twin: 0.5 % faster, inside the 1 % spreads: no win claimed.
run_ab noise 1.005
check noise within_spread
grep -q " won" "$WORK/noise.txt" && { cat "$WORK/noise.txt"; fail "a win claimed inside the spread"; }

# 3. A known loss.
run_ab loss 0.5
check loss lost

# 4. Refused before anything runs: a file that is not a calibration (65), contradicting flags (64).
printf 'point coll=allreduce bytes=1M algo=tree\n' > "$WORK/bad.txt"
expect_refusal() {  # rc message args...
  local want=$1 msg=$2
  shift 2
  set +e
  "$RAILSCOPE" ab --out "$WORK/refused" "$@" -- python3 "$JOB" > /dev/null 2> "$WORK/refused.err"
  local rc=$?
  set -e
  [ $rc -eq "$want" ] || { cat "$WORK/refused.err"; fail "$*: exit $rc, want $want"; }
  grep -q -- "$msg" "$WORK/refused.err" || { cat "$WORK/refused.err"; fail "$*: no '$msg'"; }
  [ ! -e "$WORK/refused" ] || fail "$*: ran before refusing"
}
expect_refusal 65 "not a valid calibration: .*bad.txt:1:1: point needs" --calibration "$WORK/bad.txt"
printf '# nothing\n' > "$WORK/empty.txt"
expect_refusal 65 "holds no \`point\` line" --calibration "$WORK/empty.txt"
expect_refusal 64 "drop --no-tuner" --calibration "$WORK/cal.txt" --no-tuner
expect_refusal 64 "--baseline-net has no meaning" --calibration "$WORK/cal.txt" --baseline-net Socket
# 5. Without --calibration, a calibration in the environment reaches the railscope runs' tuner: said once.
RAILSCOPE_TUNER_CALIBRATION="$WORK/cal.txt" "$RAILSCOPE" ab --out "$WORK/inherited" -- python3 "$JOB" \
  > /dev/null 2> "$WORK/inherited.err" || { cat "$WORK/inherited.err"; fail "inherited calibration run"; }
grep -q "tuner reads RAILSCOPE_TUNER_CALIBRATION=$WORK/cal.txt from this environment" "$WORK/inherited.err" \
  || { cat "$WORK/inherited.err"; fail "inherited calibration not named"; }
grep -q "warning" "$WORK/inherited.err" && { cat "$WORK/inherited.err"; fail "a warning in a healthy run"; }
echo "ab --calibration: all checks passed"
