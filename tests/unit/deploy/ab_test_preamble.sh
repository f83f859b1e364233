# SPDX-License-Identifier: Apache-2.0
# Sourced by the `railscope ab` end-to-end tests: their two arguments (the railscope binary, the fake
# job), a scratch folder removed on exit, and `fail`.
set -euo pipefail
RAILSCOPE=$1
JOB=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
