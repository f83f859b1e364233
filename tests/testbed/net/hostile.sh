#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A hostile peer process against the plugin (hostile_peer.cpp), both in the test bed guest.
# usage: hostile.sh HOSTILE_PEER MODE
set -u
bin=$1 mode=$2
dir="$TESTBED_SCRATCH/hostile-$mode"
rm -rf "$dir" && mkdir -p "$dir"
timeout 150 "$bin" hostile "$mode" "$dir" > "$dir/hostile.log" 2>&1 &
hostile=$!
timeout 150 "$bin" victim "$mode" "$dir"
victim_rc=$?
wait "$hostile"
hostile_rc=$?
cat "$dir/hostile.log"
echo "victim rc=$victim_rc hostile rc=$hostile_rc"
[ "$victim_rc" = 0 ] && [ "$hostile_rc" = 0 ]
