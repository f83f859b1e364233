#!/usr/bin/env bash
# Sets everything up and runs the main demo on the embedded soft-RoCE test bed (two rxe "hosts" in a
# QEMU guest): `railscope doctor` on a healthy pair, then on a pair with mismatched MTUs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build
TB=tests/testbed/testbed
RS=$PWD/build/tools/railscope
echo "=== railscope doctor on rxe0@vethA <-> rxe1@vethB (MTU 1500 both) ==="
"$TB" run -- "$RS" doctor || true
echo "=== railscope doctor with vethA MTU 9000, vethB MTU 1500 ==="
"$TB" run --mtu-a 9000 --mtu-b 1500 -- "$RS" doctor || true
