#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/net_instructions: user-space instructions per message of railscope's verbs engine against the reference
# plugin (NCCL's IB transport, bench/net_vs_reference/build-reference.sh), counted by callgrind inside the
# soft-RoCE test bed, per NCCL entry point (isend, irecv, test) and per object (plugin, libibverbs, rxe provider,
# libc, vDSO); railscope also with its fabric sampler off (RAILSCOPE_NET_FABRIC_SAMPLING=0). One boot, then the
# table (table.py). Not a test: instruction counts are exact where timings under TCG are not, but the number of
# idle test() calls depends on timing; table.py separates them (README.md).
# usage: bench/net_instructions/run.sh [BUILD_DIR] REF_PLUGIN=/path/libnccl-net-ref.so (not needed with WHO=railscope)
#        env: OUT=<folder>  CELLS="8:1000 64K:300" (size:round trips or messages)  MODES="fast slow"
#             SIDES="pingpong" (or "send recv": the two ends of a window-1 stream; guest.sh)
#             VARIANTS="nosample:RAILSCOPE_NET_FABRIC_SAMPLING=0"  TOP=12 (functions listed per side)
#             WHO="railscope reference" (the plugins measured; WHO=railscope skips the reference's runs)
#             CG_OPTS="--dump-instr=yes" (more callgrind options: per-instruction counts, for
#             annotate.py)  TESTBED_LOCK=<file> (the lock held while the guest runs)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=bench/lib/reference_args.sh
source "$root/bench/lib/reference_args.sh"
[[ ${WHO:-railscope reference} == *reference* ]] || reference_optional=1
reference_args "$@"
command -v valgrind > /dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
# Per-function counts need the symbol tables (.symtab): a stripped plugin would show as one '???'.
for so in "$build/plugin/net/libnccl-net-railscope.so" ${REF_PLUGIN:+"$REF_PLUGIN"}; do
  [[ -n $(nm "$so" 2> /dev/null | head -1) ]] || { echo "$so has no symbol table (stripped?)" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d /var/tmp/net_instructions.XXXXXX)}
scratch=$out/boot1
# shellcheck source=bench/lib/stage_build.sh
source "$root/bench/lib/stage_build.sh"
stage_build "$build" "$scratch/build"
mkdir -p "$scratch/ref"
ref=$scratch/ref/none  # guest.sh's REF argument, unused with WHO=railscope
[[ -z $REF_PLUGIN ]] || { cp "$REF_PLUGIN" "$scratch/ref/"; ref=$scratch/ref/$(basename "$REF_PLUGIN"); }
echo "== one boot (results in $scratch); host: $(uptime)"
flock "${TESTBED_LOCK:-/tmp/railscope-testbed.lock}" "$root/tests/testbed/testbed" run --scratch "$scratch" --timeout 3600 \
  --env "CELLS=${CELLS:-8:1000 64K:300}" --env "MODES=${MODES:-fast slow}" --env "SIDES=${SIDES:-pingpong}" \
  --env "WHO=${WHO:-railscope reference}" --env "CG_OPTS=${CG_OPTS-}" \
  --env "VARIANTS=${VARIANTS-nosample:RAILSCOPE_NET_FABRIC_SAMPLING=0}" -- \
  "$root/bench/net_instructions/guest.sh" "$scratch/build/tools/railscope" \
  "$scratch/build/plugin/net/libnccl-net-railscope.so" "$ref" "$scratch/runs"
python3 "$root/bench/net_instructions/table.py" --top "${TOP:-12}" "$scratch/runs"
