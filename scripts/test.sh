#!/usr/bin/env bash
# Runs every test: installs dependencies, builds (build/), then ctest — unit, ABI and the soft-RoCE
# test bed tests. Usage: scripts/test.sh [ctest args...]   (e.g. -L unit, -LE testbed)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# Warnings are errors for railscope's own tests and CI (RAILSCOPE_WERROR is OFF for users' builds).
# Release (-O3): the tests run what users and packagers build, and GCC's optimizer-dependent warnings
# (-Wrestrict, -Wstringop-*, -Warray-bounds: GCC bug 105329 broke the Release build of the profiler once)
# show up here rather than in a user's build.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRAILSCOPE_WERROR=ON
cmake --build build
cd build
ctest --output-on-failure --timeout 900 "$@"
