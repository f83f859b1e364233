#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_needed.sh LIB ALLOWED... — fails if LIB needs (DT_NEEDED) a library whose name does not start
# with one of ALLOWED. The plugins are guests in a training process: whatever they need must be on
# every host NCCL runs on (libcuda only through dlopen; libibverbs only where RDMA is the point).
set -euo pipefail
lib=$1; shift
mapfile -t needed < <(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ ${#needed[@]} -gt 0 ] || { echo "readelf found no NEEDED entries in $lib" >&2; exit 1; }
bad=0
for n in "${needed[@]}"; do
  ok=0
  for a in "$@"; do [[ $n == "$a"* ]] && ok=1; done
  if [ $ok = 0 ]; then echo "$lib needs $n (allowed: $*)" >&2; bad=1; fi
done
[ $bad = 0 ] && echo "ok: $lib needs only: ${needed[*]}"
exit $bad
