#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# spdx_test.sh SOURCE_DIR SCRATCH — scripts/add-spdx.sh on a copy of SOURCE_DIR's tracked files (never on
# the checkout itself): after one run --check passes, a second run changes nothing, each changed file got
# exactly one line (the first, or the one after #!), modes are kept, test inputs are untouched, and
# --check names a file that lacks the line.
set -euo pipefail
src=$(cd "$1" && pwd) scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch/tree"
tree=$scratch/tree
git -C "$src" ls-files -z | (cd "$src" && tar --null -T - -cf -) | tar -xf - -C "$tree"
# The script under test is the checkout's, also when it is not committed yet.
cp "$src/scripts/add-spdx.sh" "$tree/scripts/add-spdx.sh"
cd "$tree"
git init -q
git add -A
git -c user.name=test -c user.email=test@invalid commit -qm before
fail() { echo "FAIL: $*" >&2; exit 1; }
id='SPDX-License-Identifier: Apache-2.0'

bash scripts/add-spdx.sh >"$scratch/run1.txt"
cat "$scratch/run1.txt"
bash scripts/add-spdx.sh --check || fail "--check after a run"
sum1=$(git ls-files -z | xargs -0 sha1sum | sha1sum)
bash scripts/add-spdx.sh >"$scratch/run2.txt"
grep -q 'added the line to 0 files' "$scratch/run2.txt" || fail "second run: $(cat "$scratch/run2.txt")"
[ "$sum1" = "$(git ls-files -z | xargs -0 sha1sum | sha1sum)" ] || fail "a second run changed files"

# Every changed file: one line added, none removed, at line 1 or after the #! line; mode unchanged.
# (On a tree that has the lines already, the first run changes nothing and this part checks nothing.)
changed=$(git diff --name-only)
bad=$(git diff --numstat | awk '$1 != 1 || $2 != 0 { print $3 }')
[ -z "$bad" ] || fail "not exactly one added line: $bad"
[ -z "$(git diff --summary)" ] || fail "modes changed: $(git diff --summary)"
# One awk over the diff (a process per file is slow here): the added line has the file's comment leader,
# and it went first unless line 1 is #!, where it went second.
bad=$(git diff -U0 | awk -v id="$id" '
  function lead(f) { return f ~ /\.(cpp|h|js|h\.in)$/ ? "//" : "#" }
  /^\+\+\+ b\// { f = substr($0, 7); next }
  /^@@ / { at = $3; next }
  /^\+/ {
    l1 = ""; l2 = ""; getline l1 < f; getline l2 < f; close(f)
    if (substr($0, 2) != lead(f) " " id) print f ": added " $0
    else if (at == "+1" && l2 ~ /^#!/) print f ": #! line moved"
    else if (at == "+2" && l1 !~ /^#!/) print f ": line 2, but line 1 is not #!"
    else if (at != "+1" && at != "+2") print f ": added at " at
  }')
[ -z "$bad" ] || fail "$bad"

# The kinds of file it is for all carry the line now; test inputs are as they were.
lacking=$(git ls-files -z '*.cpp' '*.h' 'CMakeLists.txt' '*/CMakeLists.txt' '*.cmake' '*.sh' '*.py' |
  xargs -0 grep -L -e "$id" || true)
[ -z "$lacking" ] || fail "lack the line: $lacking"
inputs=$(git ls-files | grep -E '/(fixtures|corpus|reproducers|schemas|npm)/' || true)
[ -n "$inputs" ] || fail "no test inputs found in the copy"
[ -z "$(git diff --name-only -- $inputs)" ] || fail "test inputs changed: $(git diff --name-only -- $inputs)"

# --check names what lacks the line and fails.
sed -i '/SPDX-License-Identifier/d' scripts/fuzz.sh
if out=$(bash scripts/add-spdx.sh --check); then fail "--check passed with scripts/fuzz.sh lacking the line"; fi
grep -qx 'scripts/fuzz.sh' <<<"$out" || fail "--check did not name scripts/fuzz.sh: $out"
echo "ok: $(grep -c . <<<"$changed" || true) files got the line; idempotent; test inputs untouched"
