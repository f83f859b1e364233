#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_symbol_versions.sh FILE NAME DOC — prints the highest GLIBC_, GLIBCXX_ and CXXABI_ version FILE
# needs (its versioned dynamic symbols: objdump -T) and fails when one is newer than the row for NAME in
# DOC's table (docs/compatibility.md, section 2: | `NAME` | GLIBC_ | GLIBCXX_ | CXXABI_ |, "—" = none
# may be needed). A build that starts needing a newer glibc or libstdc++ than documented fails here.
set -euo pipefail
file=$1 name=$2 doc=$3
row=$(grep -E "^\| \`${name//./\\.}\` \|" "$doc" | head -1 || true)
[ -n "$row" ] || { echo "no row for \`$name\` in $doc" >&2; exit 1; }
IFS='|' read -r _ _ doc_glibc doc_glibcxx doc_cxxabi _ <<<"$row"
trim() { local v=$1; v=${v//[[:space:]]/}; echo "$v"; }
highest() {  # highest PREFIX_x.y version among FILE's versioned dynamic symbols, or "—"
  local v
  v=$(objdump -T "$file" | grep -oE "\(${1}_[0-9][0-9.]*\)" | tr -d '()' | sed "s/^${1}_//" | sort -uV | tail -1)
  echo "${v:-—}"
}
bad=0
report=()
for kind in GLIBC GLIBCXX CXXABI; do
  case $kind in
    GLIBC) allowed=$(trim "$doc_glibc") ;;
    GLIBCXX) allowed=$(trim "$doc_glibcxx") ;;
    CXXABI) allowed=$(trim "$doc_cxxabi") ;;
  esac
  need=$(highest "$kind")
  report+=("${kind}_${need}")
  if [ "$need" = "—" ]; then continue; fi
  if [ "$allowed" = "—" ]; then
    echo "$name needs ${kind}_$need; $doc says it needs no ${kind}_ version at all" >&2; bad=1
  elif [ "$(printf '%s\n%s\n' "$allowed" "$need" | sort -V | tail -1)" != "$allowed" ]; then
    echo "$name needs ${kind}_$need, newer than ${kind}_$allowed documented in $doc" >&2; bad=1
  fi
done
echo "$name needs at most: ${report[*]} (documented: GLIBC_$(trim "$doc_glibc") GLIBCXX_$(trim "$doc_glibcxx") CXXABI_$(trim "$doc_cxxabi"))"
exit $bad
