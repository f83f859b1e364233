#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One rank of the profiler GPU check (run by gpu_check_profiler.sh, two ranks on one GPU).

Runs AllReduce / AllGather / ReduceScatter sweeps (8 B .. 256 MiB) through torch.distributed (NCCL
backend), times each op with CUDA events, computes busbw exactly as nccl-tests does, and writes
{op, bytes, busbw_gbs} medians to OUT/script-rank<r>.json for the comparison step.
"""
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist


def busbw_factor(op, n):
    return 2.0 * (n - 1) / n if op == "AllReduce" else (n - 1) / n


def main():
    out_dir = sys.argv[1]
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(0)
    dist.init_process_group("nccl")
    results = []
    size = 8
    while size <= 256 << 20:
        for op in ("AllReduce", "AllGather", "ReduceScatter"):
            total = max(size, 4 * world) // (4 * world) * (4 * world)  # divisible by n floats
            full = torch.ones(total // 4, dtype=torch.float32, device="cuda")
            part = torch.ones(total // 4 // world, dtype=torch.float32, device="cuda")
            iters = 20 if total < (1 << 20) else 5
            times = []
            for i in range(iters + 2):
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                if op == "AllReduce":
                    dist.all_reduce(full)
                elif op == "AllGather":
                    dist.all_gather_into_tensor(full, part)
                else:
                    dist.reduce_scatter_tensor(part, full)
                stop.record()
                stop.synchronize()
                if i >= 2:  # warm-up excluded
                    times.append(start.elapsed_time(stop) * 1e3)  # us
            t = statistics.median(times)
            algbw = total / (t * 1e3)  # bytes/ns = GB/s; S = the full buffer for all three ops
            results.append({"op": op, "bytes": total, "time_us": t, "busbw_gbs": algbw * busbw_factor(op, world)})
        size *= 4
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"script-rank{rank}.json"), "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
