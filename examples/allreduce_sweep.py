#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""All-reduce sweep with torch.distributed (NCCL backend): 8 B to 1 GiB, results checked, busbw printed.

Run one process per GPU with torchrun, e.g. on each of 2 nodes with 8 GPUs:

    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \
        examples/allreduce_sweep.py

and compare railscope's transport against NCCL's built-in one with:

    railscope ab --runs 3 --html ab.html -- torchrun ... examples/allreduce_sweep.py

busbw follows nccl-tests: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n for all-reduce, in GB/s
(1e9 bytes). Only rank 0 prints. Exit status 1 if any result is wrong.
"""
import argparse
import os
import sys


def sizes_between(min_bytes, max_bytes, factor):
    sizes = []
    size = min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= factor
    return sizes


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-bytes", type=int, default=8)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--factor", type=int, default=2, help="size step (multiplier)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20, help="timed iterations per size (fewer above 64 MiB)")
    ap.add_argument("--list-sizes", action="store_true", help="print the sizes and exit (no torch needed)")
    args = ap.parse_args(argv)
    if args.min_bytes < 4 or args.min_bytes % 4 or args.max_bytes < args.min_bytes or args.factor < 2:
        ap.error("need 4 <= --min-bytes (a multiple of 4, float32) <= --max-bytes and --factor >= 2")
    return args


def iterations_for(size, iters):
    # Keep the sweep's total time bounded: large messages need fewer samples for a stable mean.
    return max(3, iters // 4) if size > (64 << 20) else iters


def main(argv=None):
    args = parse_args(argv)
    sizes = sizes_between(args.min_bytes, args.max_bytes, args.factor)
    if args.list_sizes:
        print(" ".join(str(s) for s in sizes))
        return 0

    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group(backend="nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    factor = 2.0 * (world - 1) / world  # nccl-tests: 0 for a single rank
    failures = 0
    if rank == 0:
        print(f"# all-reduce sweep: {world} ranks, float32, sum; busbw = algbw * {factor:.3f}")
        print(f"{'bytes':>12} {'iters':>6} {'time_us':>12} {'algbw_GB/s':>11} {'busbw_GB/s':>11} {'check':>6}")
    buf = torch.empty((args.max_bytes // 4,), dtype=torch.float32, device=device)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for size in sizes:
        n = size // 4
        x = buf[:n]
        x.zero_()  # zeros stay zeros: repeated sums can neither overflow nor denormalise
        for _ in range(args.warmup):
            dist.all_reduce(x)
        iters = iterations_for(size, args.iters)
        torch.cuda.synchronize()
        dist.barrier(device_ids=[local_rank])
        start.record()
        for _ in range(iters):
            dist.all_reduce(x)
        stop.record()
        torch.cuda.synchronize()
        time_us = start.elapsed_time(stop) * 1000.0 / iters

        # Check: every rank contributes rank + 1, so every element must be world * (world + 1) / 2.
        x.fill_(float(rank + 1))
        dist.all_reduce(x)
        ok = bool(torch.all(x == world * (world + 1) / 2.0).item())
        # One MAX reduction carries the slowest rank's time and any rank's failure. Its size (12 B)
        # is not one of the sweep's, so profiles keep the two apart.
        summary = torch.tensor([time_us, 0.0 if ok else 1.0, 0.0], dtype=torch.float32, device=device)
        dist.all_reduce(summary, op=dist.ReduceOp.MAX)
        time_us, wrong = summary[0].item(), summary[1].item() != 0
        failures += int(wrong)
        if rank == 0:
            algbw = size / (time_us * 1e-6) / 1e9
            print(f"{size:>12} {iters:>6} {time_us:>12.2f} {algbw:>11.3f} {algbw * factor:>11.3f} "
                  f"{'WRONG' if wrong else 'ok':>6}", flush=True)
    dist.destroy_process_group()
    if failures and rank == 0:
        print(f"# {failures} size(s) gave wrong results", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
