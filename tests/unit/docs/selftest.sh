#!/usr/bin/env bash
# check_doc_paths.py catches what it is for: a planted markdown file naming a missing path, a missing
# brace-expanded file, a broken link and a missing docs/ page fails; the same file with real paths passes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=${1:?source root}
tmp=$(mktemp -d "$root/docs/.selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
printf 'See `lib/core/log.cpp`, `tests/abi/plugin_loader.{h,cpp}`, [arch](../architecture.md) and `tuner.md`.\n' > "$tmp/good.md"
python3 "$here/check_doc_paths.py" "$root" "$tmp/good.md" || fail "real paths reported missing"
for bad in '`lib/core/no_such_file.cpp`' '`tests/abi/plugin_loader.{h,hpp}`' '[x](../no-such-page.md)' \
           '`no-such-page.md`' '`deploy/kubernetes/base/doctor-daemonset.yaml`'; do
  printf 'Text %s here.\n' "$bad" > "$tmp/bad.md"
  out=$(python3 "$here/check_doc_paths.py" "$root" "$tmp/bad.md") && fail "missing path not caught: $bad"
  echo "$out" | grep -q "bad.md:1:" || fail "no file:line for $bad: $out"
done
echo "selftest passed"
