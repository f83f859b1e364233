#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The PyTorch example compiles, and its size plan (which needs no torch) is 8 B .. 1 GiB by doubling.
set -euo pipefail
ROOT=$1
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for f in "$ROOT"/examples/*.py; do
  python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
    "$f" "$OUT/$(basename "$f")c"
done
sizes=$(python3 "$ROOT/examples/allreduce_sweep.py" --list-sizes)
set -- $sizes
[ "$1" = 8 ] || { echo "FAIL: first size $1, want 8"; exit 1; }
[ "${!#}" = 1073741824 ] || { echo "FAIL: last size ${!#}, want 1 GiB"; exit 1; }
[ $# -eq 28 ] || { echo "FAIL: $# sizes, want 28"; exit 1; }
if python3 "$ROOT/examples/allreduce_sweep.py" --list-sizes --min-bytes 6 2>/dev/null; then
  echo "FAIL: a size that is not a multiple of 4 was accepted"; exit 1
fi
echo "examples: ok"
