#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails if any of railscope's C++ files is not clang-formatted (.clang-format at the root), or if one of
# its own source, CMake, shell or Python files lacks the SPDX licence line (scripts/add-spdx.sh adds it).
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.cpp' '*.h' '*.hpp' '*.cc')
[ -n "$files" ] || exit 0
bad=$(echo "$files" | xargs clang-format --dry-run 2>&1 | grep -oE '^[^:]+\.(cpp|h|hpp|cc)' | sort -u || true)
if [ -n "$bad" ]; then
  echo "not clang-formatted (run: clang-format -i <file>):"; echo "$bad"; exit 1
fi
echo "format: ok"
bash scripts/add-spdx.sh --check
