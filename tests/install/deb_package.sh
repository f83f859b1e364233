#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deb_package.sh BUILD OUT VERSION — builds the .deb with CPack (`cpack -G DEB`, from BUILD's
# CPackConfig.cmake, into OUT) and checks it with dpkg-deb: the three plugins under /usr/lib with the
# names NCCL looks for, the CLI under /usr/bin, its manual pages, the docs with Debian's copyright and
# changelog (whose newest entry is this version); Package, Version and a Depends computed by
# dpkg-shlibdeps (libc6 at least).
set -euo pipefail
build=$1 out=$2 version=$3
rm -rf "$out"
mkdir -p "$out"
if ! cpack --config "$build/CPackConfig.cmake" -G DEB -B "$out" >"$out/cpack.log" 2>&1; then
  cat "$out/cpack.log" >&2
  exit 1
fi
shopt -s nullglob
debs=("$out"/railscope_*.deb)
[ ${#debs[@]} -eq 1 ] || { echo "expected one railscope_*.deb in $out, found: ${debs[*]:-none}" >&2; exit 1; }
deb=${debs[0]}
contents=$(dpkg-deb -c "$deb")
bad=0
for f in ./usr/lib/libnccl-net-railscope.so ./usr/lib/libnccl-tuner-railscope.so \
         ./usr/lib/libnccl-profiler-railscope.so ./usr/bin/railscope ./usr/share/doc/railscope/README.md \
         ./usr/share/doc/railscope/compatibility.md ./usr/lib/cmake/railscope/railscopeConfig.cmake \
         ./usr/share/doc/railscope/copyright ./usr/share/doc/railscope/changelog.gz \
         ./usr/share/man/man1/railscope.1.gz ./usr/share/man/man1/railscope-doctor.1.gz \
         ./usr/share/man/man1/railscope-tuner-explain.1.gz; do
  grep -qE " ${f//./\\.}\$" <<<"$contents" || { echo "$(basename "$deb") lacks $f" >&2; bad=1; }
done
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = railscope ] || { echo "Package: $(field Package)" >&2; bad=1; }
[ "$(field Version)" = "$version" ] || { echo "Version: $(field Version), want $version" >&2; bad=1; }
grep -q 'libc6' <<<"$(field Depends)" || { echo "Depends lacks libc6: '$(field Depends)'" >&2; bad=1; }
# The changelog's newest entry names the version packaged (dpkg-parsechangelog reads it as dpkg would).
x=$out/extract
dpkg-deb -x "$deb" "$x"
logged=$(zcat "$x/usr/share/doc/railscope/changelog.gz" | dpkg-parsechangelog -l - -S Version)
[ "$logged" = "$version" ] || { echo "changelog.gz's newest entry is $logged, want $version" >&2; bad=1; }
if [ $bad = 0 ]; then
  echo "ok: $(basename "$deb") ($(stat -c %s "$deb") bytes), Depends: $(field Depends)"
  echo "$contents" | awk '{print $NF}' | grep -E 'railscope(\.so)?$'
fi
exit $bad
