#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Profiler GPU check, meant to be called as a section of tools/gpu-check.sh on a GPU host:
#   tools/report/gpu_check_profiler.sh BUILD_DIR
# Two processes share the one GPU, each with its own NCCL_HOSTID so NCCL treats them as two nodes
# (Socket transport over loopback); they run AllReduce/AllGather/ReduceScatter sweeps 8 B–256 MiB
# through torch.distributed with the railscope profiler loaded. Passes when, for every op and size
# ≥ 1 MiB, the profile's median busbw is within 10 % of the busbw the script measured itself.
# Needs: python3 with torch (CUDA build), the built plugin and `railscope` CLI in BUILD_DIR.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:?usage: $0 BUILD_DIR}"
plugin="$build/plugin/profiler/libnccl-profiler-railscope.so"
cli="$build/tools/railscope"
[ -f "$plugin" ] || { echo "gpu-check(profiler): FAIL: $plugin not built" >&2; exit 1; }
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
  { echo "gpu-check(profiler): FAIL: python3 torch with CUDA is required" >&2; exit 1; }
out="$(mktemp -d /tmp/railscope-gpu-profiler.XXXXXX)"
echo "== profiler GPU check (output in $out)"
pids=()
for rank in 0 1; do
  env RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 CUDA_VISIBLE_DEVICES=0 \
    NCCL_HOSTID="railscope-node-$rank" NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=WARN \
    NCCL_PROFILER_PLUGIN="$plugin" RAILSCOPE_PROFILE_DIR="$out/profile" RAILSCOPE_PROFILE_TAG=gpu-check \
    python3 "$root/tools/report/gpu_sweep.py" "$out" > "$out/rank$rank.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { cat "$out"/rank*.log >&2; echo "gpu-check(profiler): FAIL: a rank failed" >&2; exit 1; }; done
"$cli" report "$out/profile" --json > "$out/report.json"
"$cli" report "$out/profile" --html "$out/report.html" | tee "$out/report.txt"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
script = {}
for r in (0, 1):
    for row in json.load(open(os.path.join(out, f"script-rank{r}.json"))):
        script.setdefault((row["op"], row["bytes"]), []).append(row["busbw_gbs"])
prof = {(s["op"], s["bytes"]): s["busbw_p50_gbs"] for s in json.load(open(os.path.join(out, "report.json")))["sizes"]}
bad = 0
print(f"{'op':<14} {'bytes':>11} {'script GB/s':>12} {'profile GB/s':>13} {'diff':>7}")
for (op, size), vals in sorted(script.items()):
    mine = sorted(vals)[len(vals) // 2]
    p = prof.get((op, size))
    diff = None if p is None or mine == 0 else (p - mine) / mine
    flag = ""
    if size >= 1 << 20 and (diff is None or abs(diff) > 0.10):
        bad += 1
        flag = "  <-- FAIL"
    print(f"{op:<14} {size:>11} {mine:>12.2f} {p if p is not None else float('nan'):>13.2f} "
          f"{'' if diff is None else f'{diff * 100:+.1f}%':>7}{flag}")
print("gpu-check(profiler):", "OK" if bad == 0 else f"FAIL ({bad} sizes >= 1 MiB differ by more than 10 %)")
sys.exit(1 if bad else 0)
PY
