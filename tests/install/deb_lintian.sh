#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deb_lintian.sh DEBDIR — lintian on the .deb that install.deb built in DEBDIR: no error and no warning.
# Overrides are the package's own (/usr/share/lintian/overrides/railscope, from cmake/deb/), each with the
# reason NCCL's plugin naming needs it; lintian lists what it overrode, printed here for the log.
set -euo pipefail
dir=$1
command -v lintian >/dev/null || { echo "lintian is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
shopt -s nullglob
debs=("$dir"/railscope_*.deb)
[ ${#debs[@]} -eq 1 ] || { echo "expected one railscope_*.deb in $dir (install.deb builds it)" >&2; exit 1; }
# --show-overrides lists what the overrides silenced; lintian then counts those towards --fail-on, so the
# verdict is read from its tags: E: (error) and W: (warning) lines fail, O: (overridden) and N: do not.
rc=0
out=$(lintian --fail-on none --show-overrides "${debs[0]}" 2>&1) || rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "lintian itself failed (exit $rc)" >&2; exit 1; }
if grep -qE '^[EW]: ' <<<"$out"; then
  echo "lintian: errors or warnings in $(basename "${debs[0]}"):" >&2
  grep -E '^[EW]: ' <<<"$out" >&2
  exit 1
fi
echo "ok: lintian reports no error and no warning on $(basename "${debs[0]}")"
