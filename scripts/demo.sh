#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets everything up and runs the main demo on the embedded soft-RoCE test bed (two rxe "hosts" in a
# QEMU guest): `railscope doctor` on a healthy pair, then on a pair with mismatched MTUs; then
# `railscope netbench --pair rxe0,rxe1` (bandwidth/latency through railscope's net plugin, data
# verified; beside it ib_write_bw and ib_send_bw of the same boot, as ratios) on the healthy pair and
# on the mismatched one, where the plugin warns [mtu.mismatch] and the transfer still works at the
# common MTU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
TB=tests/testbed/testbed
RS=$PWD/build/tools/railscope
# One QEMU guest at a time on this machine.
tb() { flock /tmp/railscope-testbed.lock "$TB" run "$@"; }
# Large enough to cross both MTUs many times over, small enough for a software-emulated guest.
NBARGS=(--min-size 8 --max-size 4M --iters 200 --lat-iters 100 --bytes-per-size 8M)
NB=(netbench --pair rxe0,rxe1 "${NBARGS[@]}")
echo "=== railscope doctor on rxe0@vethA <-> rxe1@vethB (MTU 1500 both) ==="
tb -- "$RS" doctor || true
echo "=== railscope doctor with vethA MTU 9000, vethB MTU 1500 ==="
tb --mtu-a 9000 --mtu-b 1500 -- "$RS" doctor || true
echo "=== railscope netbench --pair rxe0,rxe1 (MTU 1500 both), beside perftest of the same boot ==="
tb -- "$PWD/scripts/demo-netbench.sh" "$RS" "${NBARGS[@]}" || true
echo "=== railscope netbench --pair rxe0,rxe1 with vethA MTU 9000, vethB MTU 1500: warns, still works ==="
tb --mtu-a 9000 --mtu-b 1500 -- "$RS" "${NB[@]}" || true
