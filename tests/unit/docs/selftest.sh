#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_doc_paths.py catches what it is for: a planted markdown file naming a missing path, a missing
# brace-expanded file, a broken link and a missing docs/ page fails; the same file with real paths passes.
# A machine folder or an issue number in a markdown file or a source comment fails; the same words in code,
# system paths and numbered things pass.
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
# Pieces joined at run time, so that this file's own comments name no machine folder.
w=/wo; w=$w"rk/scratch/x"; h=/ho; h=$h"me/alice/x"; s=testbed-; s=$s"scratch.Ab12"; i=issu; i=$i"e #12"
cat > "$tmp/clean.cpp" <<EOC
// Reads /sys/class/infiniband and /dev/shm/x; AllReduce #5 waits; see nccl-tests#206.
const char* dir = "$w"; // the temp folder is code: mkdtemp("/tmp/x.XXXXXX")
const char* url = "http://example.com/$i"; /* a block comment with no finding */
EOC
cat > "$tmp/clean.sh" <<EOC
echo "$w \$# \${#x}" # a runtime path in code is fine
EOC
python3 "$here/check_doc_paths.py" "$root" "$tmp/clean.cpp" "$tmp/clean.sh" || fail "code or system paths reported"
# One run over every planted file (the checker starts in about a second on a loaded host): each must be
# reported at its own line.
n=0 files=() want=()
for bad in "$w" "$h" "$s" "$i" "(#41)" "fixes #7"; do
  n=$((n + 1))
  printf 'Text %s here.\n' "$bad" > "$tmp/bad$n.md"
  printf 'int x;  // %s\n' "$bad" > "$tmp/bad$n.cpp"
  printf '/* one\n * %s\n */\n' "$bad" > "$tmp/badblock$n.h"
  printf 'x=1  # %s\n' "$bad" > "$tmp/bad$n.sh"
  printf '"""Doc.\n\n%s\n"""\n' "$bad" > "$tmp/bad$n.py"
  for f in "bad$n.md:1" "bad$n.cpp:1" "badblock$n.h:2" "bad$n.sh:1" "bad$n.py:3"; do
    files+=("$tmp/${f%:*}") want+=("$f|$bad")
  done
done
out=$(python3 "$here/check_doc_paths.py" "$root" "${files[@]}") && fail "planted machine folders and issues not caught"
for fw in "${want[@]}"; do
  echo "$out" | grep -qF "${fw%%|*}:" || fail "not caught in ${fw%%|*}: ${fw#*|}"
done
echo "selftest passed"
