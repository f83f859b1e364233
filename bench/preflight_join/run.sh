#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How long rank 0 of `railscope preflight` takes to collect N ranks' reports and give each its verdict,
# and how many descriptors and how much memory it holds meanwhile, with its open-file limit at 1,024
# soft and hard. The ranks are fakes in one asyncio process (tests/unit/preflight/fake_ranks.py) speaking
# the real protocol over loopback TCP, HMAC included, with a token file; rank 0 is the real binary.
#   bench/preflight_join/run.sh [build-dir] [worlds...]     (default: 1024 2048 4096)
# LINKS=1 also runs the link steps (the fakes have no rail: each step is one exchange per rank, no task).
# Exits 1 unless every rank joined and got its verdict. Prints a markdown table: world, wall seconds (rank 0's start to its exit), rank 0's peak descriptors
# (sampled every 5 ms), peak RSS, CPU seconds, exchanges and "come back later" answers.
set -euo pipefail
build=${1:-build}
shift || true
worlds=("${@:-1024 2048 4096}")
cli=$build/tools/railscope
[ -x "$cli" ] || { echo "build $cli first: cmake --build $build --target railscope" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
fakes=$here/../../tests/unit/preflight/fake_ranks.py
links=()
[ "${LINKS:-0}" = 1 ] && links=(--links)
echo "| world | links | wall s | rank 0 peak fds | rank 0 peak RSS MiB | rank 0 CPU s | exchanges | come back |"
echo "|---:|:--|---:|---:|---:|---:|---:|---:|"
for w in ${worlds[*]}; do
  python3 "$fakes" "$cli" "$w" --nofile 1024 --row "${links[@]}"
done
