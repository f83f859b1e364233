#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Series per rank in the profiler's Prometheus textfile and the cost of one write: bench/prometheus_series/run.sh <build>
set -euo pipefail
build=${1:-build}
cmake --build "$build" --target prometheus_series >/dev/null
"$build/bench/prometheus_series/prometheus_series"
