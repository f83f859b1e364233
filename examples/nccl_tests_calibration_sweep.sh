#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Calibration sweep: nccl-tests' all_reduce_perf once per algorithm/protocol pair, NCCL_ALGO and
# NCCL_PROTO forced, under the railscope profiler, then `railscope tuner calibrate` over the profiles.
# The tuner then reads the calibration (RAILSCOPE_TUNER_CALIBRATION) and overrides NCCL's choice only
# where the measured best beats it by more than the spread (docs/tuner.md "Calibration").
#
#   LAUNCH="mpirun -np 16 -H node1:8,node2:8 -x NCCL_PROFILER_PLUGIN -x RAILSCOPE_PROFILE_DIR \
#           -x RAILSCOPE_PROFILE_TAG -x NCCL_ALGO -x NCCL_PROTO" \
#   NCCL_TESTS=/opt/nccl-tests/build OUT=calib examples/nccl_tests_calibration_sweep.sh
#
# Environment: LAUNCH (the launcher and its flags, passing the variables above to every rank),
# NCCL_TESTS (directory of all_reduce_perf), OUT (output directory, default ./calibration-sweep),
# MIN_BYTES / MAX_BYTES (default 8 and 1G), ITERS (iterations per size, default 20: the samples),
# ALGOS (default "Tree Ring"), PROTOS (default "LL LL128 Simple"), CALIBRATE_FLAGS (e.g.
# "--gpu H100 --nic ConnectX-7 --nic-gbit 400 --nics 8": the cluster fingerprint).
set -euo pipefail
: "${LAUNCH:?set LAUNCH to the launcher command, e.g. mpirun -np 16 -H a:8,b:8 -x ...}"
: "${NCCL_TESTS:?set NCCL_TESTS to the nccl-tests build directory}"
OUT=${OUT:-./calibration-sweep}
MIN_BYTES=${MIN_BYTES:-8}
MAX_BYTES=${MAX_BYTES:-1G}
ITERS=${ITERS:-20}
ALGOS=${ALGOS:-"Tree Ring"}
PROTOS=${PROTOS:-"LL LL128 Simple"}
mkdir -p "$OUT/profiles"
export NCCL_PROFILER_PLUGIN=${NCCL_PROFILER_PLUGIN:-railscope}
for algo in $ALGOS; do
  for proto in $PROTOS; do
    echo "== NCCL_ALGO=$algo NCCL_PROTO=$proto" >&2
    # Each pair gets its own profile directory, so a failed pair (unsupported here) loses nothing else.
    export NCCL_ALGO=$algo NCCL_PROTO=$proto RAILSCOPE_PROFILE_TAG="sweep-$algo-$proto"
    export RAILSCOPE_PROFILE_DIR="$OUT/profiles/$algo-$proto"
    mkdir -p "$RAILSCOPE_PROFILE_DIR"  # on a shared file system, as every rank writes here
    # -c 0: no result check (the sweep measures); -n ITERS collectives per size are the samples.
    $LAUNCH "$NCCL_TESTS/all_reduce_perf" -b "$MIN_BYTES" -e "$MAX_BYTES" -f 2 -g 1 -c 0 -w 5 -n "$ITERS" \
      >"$OUT/$algo-$proto.txt" 2>&1 || echo "   failed (see $OUT/$algo-$proto.txt); skipped" >&2
  done
done
unset NCCL_ALGO NCCL_PROTO
# shellcheck disable=SC2086  # CALIBRATE_FLAGS is a list of flags
railscope tuner calibrate "$OUT"/profiles/* -o "$OUT/calibration.txt" ${CALIBRATE_FLAGS:-}
echo "next: railscope tuner explain --nodes N --gpus-per-node G --calibration $OUT/calibration.txt" >&2
