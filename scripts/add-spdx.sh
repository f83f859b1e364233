#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Adds the SPDX licence line (https://spdx.dev/learn/handling-license-info/) to railscope's own files:
#   C, C++ and JavaScript (also the .h.in templates)   // SPDX-License-Identifier: Apache-2.0
#   CMake, shell and Python (also extensionless scripts with a sh/bash/python #! line)
#                                                      # SPDX-License-Identifier: Apache-2.0
# on the first line, or the line after a #! line (and after a Python coding line). Files that already carry
# an SPDX-License-Identifier in their first lines are left alone, so running it twice changes nothing.
# Left out: test inputs (fixtures/, the fuzz corpus and reproducers, JSON schemas, npm lock files), which
# tests read byte for byte, and everything that is not a tracked file (build trees).
#
#   scripts/add-spdx.sh [--check] [DIR]    DIR: a checkout (default: this script's), its tracked files; a
#                                          tree that is not a git checkout: every file under it
# --check changes nothing, lists the files that lack the line and exits 1 if there are any.
set -euo pipefail
check=0
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
root=${1:-"$(dirname "$0")/.."}
cd "$root"

readonly ID="SPDX-License-Identifier: Apache-2.0"

list_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z
  else
    find . -path './build*' -prune -o -path ./.git -prune -o -type f -printf '%P\0'
  fi
}

skipped() {
  case "/$1" in
  */fixtures/* | */tests/fuzz/corpus/* | */tests/fuzz/reproducers/* | */schemas/* | */npm/* | \
    */node_modules/*) return 0 ;;
  esac
  return 1
}

# Sets lead to the comment leader of a file that gets the line, or to nothing. (Functions here set
# variables rather than print: a command substitution per file is a fork per file.)
lead=
leader() {
  lead=
  case "$1" in
  *.cpp | *.cc | *.c | *.h | *.hpp | *.h.in | *.js) lead='//' ;;
  CMakeLists.txt | */CMakeLists.txt | *.cmake | *.cmake.in | *.sh | *.py) lead='#' ;;
  *)
    case "${1##*/}" in *.*) return 0 ;; esac
    local first
    IFS= read -r first <"$1" || true
    case "$first" in
    '#!'*sh | '#!'*sh\ * | '#!'*python* | '#!'*bash*) lead='#' ;;
    esac
    ;;
  esac
}

# The file's first three lines, read without a subprocess (the tree has ~800 files).
head3=()
read_head() { mapfile -t -n 3 head3 <"$1" || true; }

has_line() {
  local l
  for l in "${head3[@]}"; do
    [[ $l == *SPDX-License-Identifier:* ]] && return 0
  done
  return 1
}

# Sets n to the line after which the SPDX line goes: 0, or after #! and a Python coding line.
n=0
insert_after() {
  n=0
  if [[ ${head3[0]:-} == '#!'* ]]; then n=1; fi
  if [[ ${head3[n]:-} =~ ^#.*coding[:=] ]]; then n=$((n + 1)); fi
}

missing=()
added=0
# Files to change, grouped by leader and line (one sed over each group: a process per file is minutes here).
groups=$(mktemp -d)
trap 'rm -rf "$groups"' EXIT
while IFS= read -r -d '' f; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  skipped "$f" && continue
  leader "$f"
  [ -n "$lead" ] || continue
  read_head "$f"
  has_line && continue
  if [ $check = 1 ]; then
    missing+=("$f")
    continue
  fi
  insert_after
  if [ "${#head3[@]}" -gt "$n" ]; then
    printf '%s\0' "$f" >>"$groups/${lead//\//slash}.$n"
  else  # n lines or fewer: the line goes at the end, on a line of its own
    if [ -s "$f" ] && [ -n "$(tail -c 1 "$f")" ]; then echo >>"$f"; fi
    printf '%s\n' "$lead $ID" >>"$f"
  fi
  added=$((added + 1))
done < <(list_files)
for g in "$groups"/*; do
  [ -e "$g" ] || continue
  lead=${g##*/}
  n=${lead##*.}
  lead=${lead%.*}
  lead=${lead//slash//}
  # sed -i edits each file on its own (line numbers restart) and keeps its mode.
  xargs -0 sed -i "$((n + 1))i\\$lead $ID" <"$g"
done

if [ $check = 1 ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "lack the line '$ID' (run: scripts/add-spdx.sh):"
    printf '%s\n' "${missing[@]}"
    exit 1
  fi
  echo "spdx: ok"
else
  echo "spdx: added the line to $added files"
fi
