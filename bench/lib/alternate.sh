# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Alternated A/B runs for the guest side of a bench (sourced): each row runs base, new, base, new, ...
# base (ROUNDS pairs), so every "new" run sits between two "base" runs of the same boot and a drift of
# the host shows on both sides. The two sides differ by one variable: VAR is BASE_VALUE for "base"
# runs and NEW_VALUE for "new" runs, set (and exported) while COMMAND runs, so COMMAND may read it
# (a build folder) or the program it starts may (an environment variable such as
# RAILSCOPE_NET_FABRIC_SAMPLING). Run i of a row writes COMMAND's stdout to OUT/iii-WHICH-ROW.json,
# its stderr next to it (.err), and the line "i WHICH ROW FILE" to OUT/manifest.txt, the format
# bench/net_vs_build/ratios.py reads.
# usage: source bench/lib/alternate.sh
#        alternate_init OUT ROUNDS VAR BASE_VALUE NEW_VALUE COMMAND
#        alternate_row NAME ARGS...      (COMMAND ARGS... per run)
#        alternate_done

alternate_init() {
  ALT_OUT=$1 ALT_ROUNDS=$2 ALT_VAR=$3 ALT_BASE=$4 ALT_NEW=$5 ALT_CMD=$6
  mkdir -p "$ALT_OUT"
  ALT_MANIFEST=$ALT_OUT/manifest.txt
  : > "$ALT_MANIFEST"
  ALT_SEQ=0
}

alternate_run() {  # base|new ROW ARGS...
  local which=$1 row=$2 f value=$ALT_NEW
  shift 2
  [[ $which == base ]] && value=$ALT_BASE
  local -x "$ALT_VAR=$value"
  f=$ALT_OUT/$(printf '%03d' "$ALT_SEQ")-$which-$row.json
  "$ALT_CMD" "$@" > "$f" 2> "$f.err"
  echo "$ALT_SEQ $which $row $f" >> "$ALT_MANIFEST"
  ALT_SEQ=$((ALT_SEQ + 1))
}

alternate_row() {  # NAME ARGS...: B N B N ... B
  local name=$1 r
  shift
  alternate_run base "$name" "$@"
  for ((r = 0; r < ALT_ROUNDS; r++)); do
    alternate_run new "$name" "$@"
    alternate_run base "$name" "$@"
  done
}

alternate_done() { echo "guest: $ALT_SEQ runs, manifest $ALT_MANIFEST"; }
