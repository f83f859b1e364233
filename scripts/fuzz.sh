#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer harnesses of tests/fuzz/ (clang, ASan + UBSan; RAILSCOPE_FUZZ=ON in a build folder
# of their own) and runs each for a bounded time from a scratch copy of its seed corpus.
#   scripts/fuzz.sh [harness...]        (default: every tests/fuzz/<harness>.cpp)
# Environment: RAILSCOPE_FUZZ_SECONDS (per harness, default 60), RAILSCOPE_FUZZ_BUILD (default
# build-fuzz). Exits non-zero when a harness finds a crash, a leak, a timeout or a violated property;
# its reproducer (crash-*, leak-*, timeout-*, oom-*) and log stay in <build>/fuzz-artifacts/<harness>/.
# Reproduce one: <build>/tests/fuzz/fuzz_<harness> <build>/fuzz-artifacts/<harness>/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${RAILSCOPE_FUZZ_SECONDS:-60}
build=${RAILSCOPE_FUZZ_BUILD:-build-fuzz}

if [ $# -gt 0 ]; then
  harnesses=("$@")
else
  harnesses=()
  for f in tests/fuzz/*.cpp; do harnesses+=("$(basename "$f" .cpp)"); done
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  # RAILSCOPE_WERROR: warnings are errors in railscope's own builds (OFF by default for users).
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAILSCOPE_FUZZ=ON \
    -DRAILSCOPE_WERROR=ON \
    -DRAILSCOPE_BUILD_TESTS=OFF -DRAILSCOPE_BUILD_BENCH=OFF "${launcher[@]}"
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" --target "${targets[@]}"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
case "$build" in /*) artifacts="$build/fuzz-artifacts" ;; *) artifacts="$(pwd)/$build/fuzz-artifacts" ;; esac
failed=0
rows=()
for h in "${harnesses[@]}"; do
  out="$artifacts/$h"
  rm -rf "$out"
  mkdir -p "$out" "$scratch/$h"
  # The seeds are copied: libFuzzer adds what it finds to the first corpus folder it is given.
  if [ -d "tests/fuzz/corpus/$h" ]; then cp -r "tests/fuzz/corpus/$h/." "$scratch/$h/"; fi
  args=(-max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
        -artifact_prefix="$out/")
  if [ -f "tests/fuzz/$h.dict" ]; then args+=(-dict="tests/fuzz/$h.dict"); fi
  rc=0
  # Reproducers of bugs found before (tests/fuzz/reproducers/<harness>/): each replayed once, first.
  if [ -d "tests/fuzz/reproducers/$h" ]; then
    echo "fuzz: $h: replaying tests/fuzz/reproducers/$h (log: $out/reproducers.log)"
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$build/tests/fuzz/fuzz_$h" -artifact_prefix="$out/" \
      tests/fuzz/reproducers/"$h"/* >"$out/reproducers.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
      failed=1
      grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*property violated)" "$out/reproducers.log" | head -5 || true
      rows+=("$(printf '%-18s %8s %14s %8s  %s' "$h" 0 - - "FAILED: a reproducer (exit $rc), see $out/reproducers.log")")
      continue
    fi
  fi
  echo "fuzz: $h for ${seconds} s (log: $out/fuzz.log)"
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$build/tests/fuzz/fuzz_$h" "${args[@]}" "$scratch/$h" \
    >"$out/fuzz.log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log" | tail -1)
  units=$(find "$scratch/$h" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    failed=1
    result="FAILED (exit $rc): $(cd "$out" && ls -d crash-* leak-* timeout-* oom-* 2>/dev/null | tr '\n' ' ' || true)"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*property violated)" "$out/fuzz.log" | head -5 || true
  fi
  rows+=("$(printf '%-18s %8s %14s %8s  %s' "$h" "$seconds" "${execs:-?}" "$units" "$result")")
done

printf '\n%-18s %8s %14s %8s  %s\n' harness seconds executions corpus result
for r in "${rows[@]}"; do echo "$r"; done
exit "$failed"
