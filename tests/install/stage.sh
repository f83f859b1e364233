#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# stage.sh BUILD STAGE LIBDIR BINDIR DOCDIR — `cmake --install BUILD --prefix STAGE` into an empty STAGE,
# then checks that every file a user and NCCL need is where the docs say (README, docs/pytorch.md).
set -euo pipefail
build=$1 stage=$2 libdir=$3 bindir=$4 docdir=$5
rm -rf "$stage"
cmake --install "$build" --prefix "$stage" >"$stage.log" 2>&1 || { cat "$stage.log" >&2; exit 1; }
bad=0
for f in "$libdir/libnccl-net-railscope.so" "$libdir/libnccl-tuner-railscope.so" \
         "$libdir/libnccl-profiler-railscope.so" "$bindir/railscope" \
         "$libdir/cmake/railscope/railscopeConfig.cmake" "$libdir/cmake/railscope/railscopeConfigVersion.cmake" \
         "$docdir/README.md" "$docdir/compatibility.md" "$docdir/pytorch.md" "$docdir/examples/allreduce_sweep.py"; do
  if [ ! -f "$stage/$f" ]; then echo "missing in the installed tree: $f" >&2; bad=1; fi
done
[ -x "$stage/$bindir/railscope" ] || { echo "$bindir/railscope is not executable" >&2; bad=1; }
# Nothing of the build tree may leak into the installed CLI (an RPATH into build/ would hide a broken install).
if readelf -d "$stage/$bindir/railscope" | grep -E 'R(UN)?PATH' | grep -q "$build"; then
  echo "$bindir/railscope keeps an RPATH into the build tree" >&2; bad=1
fi
[ $bad = 0 ] && echo "ok: installed into $stage: $(cd "$stage" && find . -type f | sort | tr '\n' ' ')"
exit $bad
