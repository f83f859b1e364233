#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/report_scale/run.sh BUILD_DIR [RANKS...] — `railscope report` over a large job's profiles.
# For each rank count (default 256 1024 4096) it writes synthetic profiles (gen_profiles.py: COLLS
# collectives per rank, default 1000; HANG_RANK=R makes rank R miss the last collective), then times
# `railscope report` (text), `report --json` and `report --follow --once` on them, and two floors over
# the same bytes: `wc -l` (reading them) and Python's json.loads of every line (parsing them). Prints
# one table: wall seconds and peak RSS (GNU time's %e and %M) of each, and each report's time over
# the json.loads floor. Targets at 4,096 ranks x 1,000 collectives: under 60 s and under 2 GiB.
# Not a test. WORK=DIR keeps the profiles there (default: a temporary folder, removed at the end);
# they take about 660 bytes per collective (2.7 GB at 4,096 x 1,000).
set -euo pipefail
build=${1:-build}
shift || true
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(256 1024 4096)
colls=${COLLS:-1000}
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/tools/railscope"
[[ -x $bin ]] || { echo "run.sh: no $bin (cmake --build $build --target railscope)" >&2; exit 2; }
work=${WORK:-}
if [[ -z $work ]]; then
  work=$(mktemp -d -t railscope-report-scale.XXXXXX)
  trap 'rm -rf "$work"' EXIT
fi

# "wall_s peak_rss_kib" of a command, its output to $work/out; a status other than 0, 1 or 3 (the
# --follow statuses of a running or hung job) fails the bench.
measure() {
  local rc=0
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" > "$work/out" 2> "$work/err" || rc=$?
  if [[ $rc -ne 0 && $rc -ne 1 && $rc -ne 3 ]]; then
    echo "run.sh: '$*' exited $rc:" >&2
    tail -5 "$work/err" >&2
    exit 1
  fi
  tail -1 "$work/time"
}

json_floor() {
  python3 -c '
import json, sys
n = 0
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        for line in f:
            json.loads(line); n += 1
print(n)' "$1"/*.jsonl
}
export -f json_floor

rows=()
for n in "${counts[@]}"; do
  dir="$work/p$n"
  python3 "$here/gen_profiles.py" "$dir" --ranks "$n" --colls "$colls" ${HANG_RANK:+--hang-rank "$HANG_RANK"} > /dev/null
  bytes=$(cat "$dir"/*.jsonl | wc -c)
  read -r wc_s wc_kib < <(measure sh -c 'cat "$1"/*.jsonl | wc -l' sh "$dir")
  read -r py_s py_kib < <(measure bash -c 'json_floor "$1"' bash "$dir")
  read -r text_s text_kib < <(measure "$bin" report "$dir")
  read -r json_s json_kib < <(measure "$bin" report "$dir" --json)
  read -r follow_s follow_kib < <(measure "$bin" report --follow --once "$dir")
  follow_line=$(cut -c22- "$work/out")
  rows+=("$(awk -v n="$n" -v c="$colls" -v b="$bytes" -v ws="$wc_s" -v ps="$py_s" -v pk="$py_kib" \
    -v ts="$text_s" -v tk="$text_kib" -v js="$json_s" -v jk="$json_kib" -v fs="$follow_s" -v fk="$follow_kib" '
    function mib(k) { return k / 1024 }
    function ratio(s) { return ps > 0 ? s / ps : 0 }
    BEGIN {
      printf "| %d | %d | %.0f | %.2f | %.2f | %.0f | %.2f | %.0f | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f |",
        n, c, b / 1e6, ws, ps, mib(pk), ts, mib(tk), ratio(ts), js, mib(jk), ratio(js), fs, mib(fk)
    }')")
  echo "ranks $n: follow said: $follow_line" >&2
  rm -rf "$dir"
done
echo "| ranks | colls/rank | input MB | wc -l s | json.loads s | json.loads MiB | report s | report MiB |" \
     "report / json.loads | --json s | --json MiB | --json / json.loads | --follow --once s | --follow MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
