#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_exports.sh LIB SYMBOL... — fails unless the dynamic symbols LIB defines are exactly SYMBOL...
set -euo pipefail
lib=$1; shift
actual=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
expected=$(printf '%s\n' "$@" | sort -u)
if [ "$actual" != "$expected" ]; then
  echo "exported symbols of $lib differ from the ABI list" >&2
  diff <(echo "$expected") <(echo "$actual") | sed 's/^</missing:/; s/^>/unexpected:/' >&2 || true
  exit 1
fi
echo "ok: $lib exports exactly: $*"
