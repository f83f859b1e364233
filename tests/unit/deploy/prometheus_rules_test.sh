#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/prometheus's rules: promtool parses them, its unit tests pass, and every rule has one.
# Usage: prometheus_rules_test.sh <source dir>
set -euo pipefail
src=$1
if ! command -v promtool >/dev/null; then
  echo "promtool not found: install Debian's prometheus package (scripts/install-deps.sh does)" >&2
  exit 1
fi
rules=$src/deploy/prometheus/railscope-rules.yml
tests=$src/tests/unit/deploy/prometheus/rules_test.yml
promtool check rules "$rules"
(cd "$(dirname "$tests")" && promtool test rules "$(basename "$tests")")
python3 "$src/tests/unit/deploy/prometheus/every_rule_tested.py" "$rules" "$tests"
