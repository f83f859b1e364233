#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every `--json` output is well-formed UTF-8 whatever bytes railscope was given: an environment variable
# (`NCCL_ALGO`) or a file name that is not UTF-8 comes out with U+FFFD in its place, instead of nlohmann's
# dump() throwing (exit 1, nothing printed). Each case has a twin with plain text that must print it as is.
# Usage: json_utf8_test.sh RAILSCOPE
set -uo pipefail
railscope="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# parses FILE NEEDLE: FILE is strict UTF-8 JSON and some string in it holds NEEDLE (Python's escapes).
parses() {
  python3 - "$1" "$2" <<'PY' || return 1
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: raises on a byte that is not UTF-8
needle = sys.argv[2].encode().decode("unicode_escape")
sys.exit(0 if needle in json.dumps(json.loads(text), ensure_ascii=False) else 1)
PY
}

mkdir -p "$tmp/sys"
for algo in $'\xff' Ring; do
  NCCL_ALGO="$algo" "$railscope" doctor --json --sysfs-root "$tmp/sys" --no-verbs > "$tmp/doctor.json" 2> "$tmp/doctor.err"
  rc=$?
  want='\ufffd'
  [ "$algo" = Ring ] && want=NCCL_ALGO=Ring
  if grep -q 'json.exception' "$tmp/doctor.err" || ! parses "$tmp/doctor.json" "$want"; then
    fail "doctor --json with NCCL_ALGO=$(printf %q "$algo") (exit $rc): $(head -c 300 "$tmp/doctor.err")"
  else
    echo "ok   doctor --json with NCCL_ALGO=$(printf %q "$algo")"
  fi
done

# A profile with one collective and one line that is not JSON: the problem names the file.
profile='{"type":"comm","comm":"0x000000000000beef","rank":0,"nranks":2,"nnodes":1,"name":"t","abi":6,"mask":222,"unix_ns":1}
{"type":"coll","comm":"0x000000000000beef","rank":0,"nranks":2,"nnodes":1,"seq":0,"op":"AllReduce","dtype":"ncclFloat32","count":1024,"bytes":4096,"root":-1,"algo":"RING","proto":"SIMPLE","channels":2,"graph":false,"start_unix_ns":1000,"end_unix_ns":2000,"time_us":1,"timing":"gpu","algbw_gbs":4.096,"busbw_gbs":4.096,"complete":true,"waits":[],"waits_dropped":0}
{not json'
for name in $'prof\xff' prof-plain; do
  mkdir -p "$tmp/$name"
  printf '%s\n' "$profile" > "$tmp/$name/h-1.jsonl"
  "$railscope" report --json "$tmp/$name" > "$tmp/report.json" 2> "$tmp/report.err"
  rc=$?
  want='prof\ufffd/h-1.jsonl:3'
  [ "$name" = prof-plain ] && want='prof-plain/h-1.jsonl:3'
  if [ $rc -ne 0 ] || ! parses "$tmp/report.json" "$want"; then
    fail "report --json over a folder named $(printf %q "$name") (exit $rc): $(head -c 300 "$tmp/report.err")"
  else
    echo "ok   report --json over a folder named $(printf %q "$name")"
  fi
done

[ $failures -eq 0 ] || { echo "FAILED: $failures"; exit 1; }
