#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every `railscope` command on bad usage: exit 64, EX_USAGE (never CLI11's 105/106/109/114...), one line that says
# what is wrong on stderr, nothing on stdout; mistyped commands named with the closest match; --version
# from project(VERSION); the diagnostic log on stderr/--log-file only.
# Usage: usage_exit_test.sh <railscope> <expected version>
set -u
rs=${1:?railscope binary}
version=${2:?expected version}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
# No node facts from this machine: the tuner's NIC checks must not depend on it.
export RAILSCOPE_SYSFS_ROOT=$tmp/no-sysfs
unset RAILSCOPE_TUNER_NICS RAILSCOPE_TUNER_NIC_GBIT RAILSCOPE_TUNER_CONFIG

# expect STATUS "TEXT IN STDERR" ARGS...
expect() {
  local want=$1 text=$2
  shift 2
  "$rs" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: railscope $* exited $rc, want $want"; sed 's/^/  stderr: /' "$tmp/err"; failures=$((failures + 1)); return
  fi
  if [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/err"; then
    echo "FAIL: railscope $*: stderr lacks '$text'"; sed 's/^/  stderr: /' "$tmp/err"; failures=$((failures + 1)); return
  fi
  if { [ "$want" -eq 64 ] || [ "$want" -eq 73 ]; } && [ -s "$tmp/out" ]; then
    echo "FAIL: railscope $*: exit $want after writing to stdout"; sed 's/^/  stdout: /' "$tmp/out"; failures=$((failures + 1))
  fi
}

# The top level
expect 64 "A subcommand is required"
expect 64 "unknown command 'doktor'; did you mean 'doctor'?" doktor
expect 64 "unknown command 'netbnch'; did you mean 'netbench'?" netbnch
expect 64 "unknown command 'frobnicate'; the commands are: ab, doctor, netbench, preflight, report, tuner" frobnicate
expect 64 "railscope: unknown option '--bogus'" --bogus
expect 64 "railscope doctor: unknown option '--jsn'; did you mean '--json'?" doctor --jsn
expect 64 "--log-level" --log-level loud doctor
touch "$tmp/a-file"
expect 73 "--log-file $tmp/a-file/log: cannot write there" --log-file "$tmp/a-file/log" doctor --no-verbs
"$rs" --version > "$tmp/out" 2>&1
[ "$(cat "$tmp/out")" = "railscope $version" ] || { echo "FAIL: --version printed '$(cat "$tmp/out")', want 'railscope $version'"; failures=$((failures + 1)); }

# doctor
expect 64 "--bogus" doctor --bogus
expect 64 "not expected" doctor extra
expect 64 "--sysfs-root" doctor --sysfs-root "$tmp/missing"
expect 64 "--topo" doctor --topo "$tmp/missing.xml"

# netbench (--pair, server, client)
expect 64 "use --pair DEV_A,DEV_B" netbench
expect 64 "unknown command 'servr'; did you mean 'server'?" netbench servr
expect 64 "unknown command 'clinet'; did you mean 'client'?" netbench --min-size 8 clinet
expect 64 "--window" netbench --pair lo,lo --window 40
expect 64 "unknown unit '.3M' in size '1.5.3M'" netbench --pair lo,lo --min-size 1.5.3M
expect 64 "size '2G' is above the largest allowed" netbench --pair lo,lo --max-size 2G
expect 64 "--min-size (1048576) is above --max-size (1024)" netbench --pair lo,lo --min-size 1M --max-size 1K
expect 64 "negative" netbench client --min-size=-4
expect 64 "too large" netbench server --bytes-per-size 99999999999T
expect 64 "size '1K' is below the smallest allowed, 4096 bytes" netbench client --buffer-bytes 1K
expect 64 "size '0' is below the smallest allowed, 1 byte" netbench client --bytes-per-size 0
expect 64 "--mode" netbench server --mode fast
expect 64 "--iters" netbench client --iters many

# report
expect 64 "dirs is required" report
expect 64 "--bogus" report --bogus "$tmp"
expect 64 "--once requires --follow" report --once "$tmp"
expect 64 "--json excludes --follow" report --follow --json "$tmp"
expect 64 "--interval" report --follow --interval 0 "$tmp"

# tuner explain
expect 64 "A subcommand is required" tuner
expect 64 "unknown command 'explian'; did you mean 'explain'?" tuner explian
expect 64 "--nodes is required" tuner explain --gpus-per-node 8
expect 64 "--nodes" tuner explain --nodes 0 --gpus-per-node 8
expect 64 "--nic-gbit" tuner explain --nodes 2 --gpus-per-node 8 --nics 8 --nic-gbit -1
expect 64 "--min-bytes (1048576) is above --max-bytes (1024)" tuner explain --nodes 2 --gpus-per-node 8 --min-bytes 1M --max-bytes 1K
expect 64 "size '0' is below the smallest allowed, 1 byte" tuner explain --nodes 2 --gpus-per-node 8 --min-bytes 0
expect 64 "not a size: 'lots'" tuner explain --nodes 2 --gpus-per-node 8 --max-bytes lots
expect 64 "--nvl-domains 3 does not divide the 16 ranks" tuner explain --nodes 2 --gpus-per-node 8 --nvl-domains 3
expect 64 "--nvl-domains 32 does not divide the 16 ranks" tuner explain --nodes 2 --gpus-per-node 8 --nvl-domains 32
expect 64 "--nics 8 needs the NICs' rate" tuner explain --nodes 2 --gpus-per-node 8 --nics 8
expect 64 "--nic-gbit 400 needs the NIC count" tuner explain --nodes 2 --gpus-per-node 8 --nic-gbit 400
expect 64 "unknown collective 'alltoall'" tuner explain --nodes 2 --gpus-per-node 8 --coll alltoall
expect 0 "" tuner explain --nodes 2 --gpus-per-node 8 --nics 8 --nic-gbit 400 --nvl-domains 2 --min-bytes 1M --max-bytes 4M

# preflight: its size flags take the units every size flag takes, with the same range wording
expect 64 "size '2G' is above the largest allowed, 1073741824 bytes" preflight --world-size 1 --no-links --link-size 2G
expect 64 "size '0' is below the smallest allowed, 1 byte" preflight --world-size 1 --no-links --link-size 0
expect 64 "size '1K' is below the smallest allowed, 4096 bytes" preflight --world-size 1 --no-links --link-bytes 1K
expect 64 "unknown unit 'X' in size '4X'" preflight --world-size 1 --no-links --link-bytes 4X
expect 64 "--link-size 3145728 is not a power of two" preflight --world-size 1 --no-links --link-size 3M
# Accepted: the run goes on to its verdict (this machine's, through an empty sysfs: no usage error).
mkdir -p "$tmp/empty-sysfs"
"$rs" preflight --rank 0 --world-size 1 --no-links --no-verbs --sysfs-root "$tmp/empty-sysfs" --link-size 4M \
  --link-bytes 1.5G > "$tmp/out" 2> "$tmp/err"
grep -q "^Status: " "$tmp/out" || { echo "FAIL: preflight --link-size 4M --link-bytes 1.5G was refused"; sed 's/^/  stderr: /' "$tmp/err"; failures=$((failures + 1)); }

# ab
expect 64 "no command given" ab
expect 64 "--runs" ab --runs 0 -- true
expect 64 "--baseline-net" ab --baseline-net Carrier -- true
expect 64 "--bogus" ab --bogus -- true

# An output file that cannot be written: 73 (EX_CANTCREAT), found before anything is read, run or printed.
mkdir -p "$tmp/empty-sysfs" "$tmp/profiles"
printf '{"type":"coll","op":"AllReduce"}\n' > "$tmp/profiles/rank0.jsonl"
expect 73 "railscope report: --html $tmp/missing/x.html: cannot write there" report --html "$tmp/missing/x.html" "$tmp/profiles"
expect 73 "railscope ab: --json $tmp/missing/x.json: cannot write there" ab --json "$tmp/missing/x.json" --out "$tmp/ab" -- touch "$tmp/ab-ran"
expect 73 "railscope ab: --html $tmp/missing/x.html: cannot write there" ab --html "$tmp/missing/x.html" --out "$tmp/ab" -- touch "$tmp/ab-ran"
[ -e "$tmp/ab-ran" ] && { echo "FAIL: ab ran the job although its --json/--html could not be written"; failures=$((failures + 1)); }
expect 73 "railscope preflight: --html $tmp/missing/x.html: cannot write there" preflight --rank 0 --world-size 1 \
  --no-links --no-verbs --sysfs-root "$tmp/empty-sysfs" --html "$tmp/missing/x.html"

# Verdicts are not usage errors: a node without RDMA is doctor's 2, and the same from --watch.
expect 2 "" doctor --no-verbs --sysfs-root "$tmp/empty-sysfs"
expect 2 "" doctor --watch 0.1 --no-verbs --sysfs-root "$tmp/empty-sysfs"
grep -q "^Status: error (exit 2)" "$tmp/out" || { echo "FAIL: doctor --watch without RDMA: $(tail -1 "$tmp/out")"; failures=$((failures + 1)); }
# A rules file rejected in strict mode: 65 (EX_DATAERR); --no-strict reads past it.
printf 'rule coll=allreduce bytes=1x algo=tree\n' > "$tmp/bad.conf"
expect 65 "bytes: '1x' is not a number" tuner explain --nodes 2 --gpus-per-node 8 --config "$tmp/bad.conf"
expect 0 "" tuner explain --nodes 2 --gpus-per-node 8 --no-strict --config "$tmp/bad.conf"

# The diagnostic log: stderr and --log-file, never stdout; the default output is unchanged.
args=(tuner explain --nodes 2 --gpus-per-node 8 --nics 8 --nic-gbit 400 --min-bytes 1M --max-bytes 4M)
"$rs" "${args[@]}" > "$tmp/plain.out" 2> "$tmp/plain.err"
"$rs" --log-level debug --log-file "$tmp/log" "${args[@]}" > "$tmp/debug.out" 2> "$tmp/debug.err"
cmp -s "$tmp/plain.out" "$tmp/debug.out" || { echo "FAIL: --log-level debug changed stdout"; failures=$((failures + 1)); }
[ -s "$tmp/plain.err" ] && { echo "FAIL: default level logged: $(cat "$tmp/plain.err")"; failures=$((failures + 1)); }
grep -q "^railscope: debug: tuner explain: " "$tmp/debug.err" || { echo "FAIL: no debug line on stderr"; failures=$((failures + 1)); }
grep -q " debug: railscope $version" "$tmp/log" || { echo "FAIL: no debug line in --log-file"; failures=$((failures + 1)); }
# A deprecated flag still works, with a warning on stderr (the default level shows warnings).
"$rs" tuner explain --nodes 2 --gpus-per-node 8 --nics 8 --nic-gbps 400 --min-bytes 1M --max-bytes 4M > "$tmp/old.out" 2> "$tmp/old.err"
cmp -s "$tmp/plain.out" "$tmp/old.out" || { echo "FAIL: --nic-gbps is not --nic-gbit"; failures=$((failures + 1)); }
grep -q "\-\-nic-gbps is deprecated: use --nic-gbit" "$tmp/old.err" || { echo "FAIL: no deprecation warning"; failures=$((failures + 1)); }
# Placed after the command's name, --log-level still applies.
"$rs" tuner explain --log-level debug --nodes 2 --gpus-per-node 8 --nics 8 --nic-gbit 400 --min-bytes 1M --max-bytes 4M > /dev/null 2> "$tmp/late.err"
grep -q "^railscope: debug: " "$tmp/late.err" || { echo "FAIL: --log-level after the command was ignored"; failures=$((failures + 1)); }

# One format for every warning, on stderr, naming the CLI's flag; --log-level off silences it, warn keeps it.
lax=(tuner explain --nodes 2 --gpus-per-node 8 --config "$tmp/missing.conf" --no-strict)
"$rs" "${lax[@]}" > "$tmp/lax.out" 2> "$tmp/lax.err"
grep -q "^railscope: warning: \[tuner.config\] .*cannot open the tuner config file (ignored: --no-strict)" "$tmp/lax.err" \
  || { echo "FAIL: tuner's warning: '$(cat "$tmp/lax.err")'"; failures=$((failures + 1)); }
grep -q "warning" "$tmp/lax.out" && { echo "FAIL: a warning on stdout"; failures=$((failures + 1)); }
"$rs" --log-level off "${lax[@]}" > /dev/null 2> "$tmp/off.err"
[ -s "$tmp/off.err" ] && { echo "FAIL: --log-level off printed: $(cat "$tmp/off.err")"; failures=$((failures + 1)); }
"$rs" --log-level warn "${lax[@]}" > /dev/null 2> "$tmp/warn.err"
cmp -s "$tmp/lax.err" "$tmp/warn.err" || { echo "FAIL: --log-level warn changed the warning"; failures=$((failures + 1)); }
expect 65 "or give --no-strict to ignore the bad lines" tuner explain --nodes 2 --gpus-per-node 8 --config "$tmp/missing.conf"
# The report's unreadable lines are warnings on stderr, not lines of its output.
printf 'not json\n' > "$tmp/profiles/rank1.jsonl"
"$rs" report "$tmp/profiles" > "$tmp/rep.out" 2> "$tmp/rep.err"
grep -q "warning" "$tmp/rep.out" && { echo "FAIL: report printed a warning on stdout"; failures=$((failures + 1)); }
grep -q "^railscope: warning: report: " "$tmp/rep.err" || { echo "FAIL: report's warning: '$(cat "$tmp/rep.err")'"; failures=$((failures + 1)); }
# debug says what each step does.
"$rs" --log-level debug doctor --no-verbs --sysfs-root "$tmp/empty-sysfs" > /dev/null 2> "$tmp/doc.err"
[ "$(grep -c "^railscope: debug: doctor: section " "$tmp/doc.err")" -ge 9 ] || { echo "FAIL: doctor's steps at debug: $(cat "$tmp/doc.err")"; failures=$((failures + 1)); }

# JSON figures: the units table's names, six significant digits (a float widened to double printed
# 25.200000762939453).
"$rs" tuner explain --nodes 2 --gpus-per-node 8 --nics 8 --nic-gbit 400 --min-bytes 1M --max-bytes 4M --json > "$tmp/t.json"
grep -Eq '[0-9]\.[0-9]{7,}' "$tmp/t.json" && { echo "FAIL: float noise in tuner explain --json: $(grep -Eo '[0-9.]*\.[0-9]{7,}' "$tmp/t.json" | head -3)"; failures=$((failures + 1)); }
grep -q '"busbw_gbs"' "$tmp/t.json" && grep -q '"nic_gbits"' "$tmp/t.json" && ! grep -qi 'GBps\|"nic_gbit"' "$tmp/t.json" \
  || { echo "FAIL: tuner explain --json unit names"; failures=$((failures + 1)); }

# spdlog is compiled in (header-only): the runtime image (deploy/Dockerfile) ships no libspdlog/libfmt.
if readelf -d "$rs" | grep -E 'NEEDED.*(libspdlog|libfmt)'; then
  echo "FAIL: railscope needs a shared spdlog/fmt the runtime image does not have"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "all usage checks passed"
exit $((failures > 0))
