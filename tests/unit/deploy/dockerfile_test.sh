#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Lints deploy/Dockerfile: dockerfile-utils (npm, syntax and instruction checks) and the project's
# checklist (dockerfile_checklist.py: pinned tags, multi-stage, apt hygiene, non-root, runtime libs).
# Both must also flag a deliberately bad Dockerfile, so a linter that checks nothing fails this test.
set -euo pipefail
ROOT=$1
TOOLS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
rc=0
node "$HERE/dockerfile_lint.js" "$TOOLS" "$ROOT/deploy/Dockerfile" || rc=1
python3 "$HERE/dockerfile_checklist.py" "$ROOT/deploy/Dockerfile" || rc=1

cat > "$WORK/Dockerfile.bad" <<'BAD'
from nvidia/cuda:latest
RUN apt-get install -y libibverbs1
WORKDIR relative
ADD https://example.invalid/x.tgz /x
COPY --chwon=1 a b
CMD railscope doctor
BAD
if node "$HERE/dockerfile_lint.js" "$TOOLS" "$WORK/Dockerfile.bad" > "$WORK/lint.out"; then
  echo "FAIL: dockerfile-utils accepted a bad Dockerfile"; rc=1
fi
grep -q "code" "$WORK/lint.out" || { echo "FAIL: no dockerfile-utils diagnostics"; rc=1; }
python3 "$HERE/dockerfile_checklist.py" "$WORK/Dockerfile.bad" > "$WORK/check.out" && {
  echo "FAIL: checklist accepted a bad Dockerfile"; rc=1; }
for rule in DL3007 DL3015 DL3009 DL3000 DL3020 DL3025 DL3002 "not multi-stage"; do
  grep -q "$rule" "$WORK/check.out" || { echo "FAIL: checklist missed $rule"; cat "$WORK/check.out"; rc=1; }
done
[ $rc -eq 0 ] && echo "dockerfile lint: ok"
exit $rc
