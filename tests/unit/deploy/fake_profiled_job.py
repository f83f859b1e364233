#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for an NCCL job under `railscope ab`: instead of running collectives it writes the
profile files railscope's profiler would write (one JSON Lines file per rank into
RAILSCOPE_PROFILE_DIR), with a busbw that depends on which transport the environment selects.

It checks the environment `railscope ab` gives it, so a wrong variable fails the test:
  railscope run: NCCL_NET=railscope, NCCL_NET_PLUGIN=<something railscope>, NCCL_PROFILER_PLUGIN set
  baseline run:  NCCL_NET=IB|Socket, NCCL_NET_PLUGIN=none,               NCCL_PROFILER_PLUGIN set
Options: --fail-on NET (exit 7 when NCCL_NET is NET), --drop-size-on NET (leave out the largest size
when NCCL_NET is NET), --no-profile-on NET (write nothing, as when the profiler was not loaded).

With RAILSCOPE_TUNER_CALIBRATION set (`railscope ab --calibration`'s calibrated variant; it must name a
file) the tuner "chose" TREE/LL128 from 64 KiB on, at --calibrated-gain times the busbw; below, and in
runs without it, RING/SIMPLE. Iteration i runs at (1 + 0.01 i) times the base busbw, so each size's
median is 1.02 and its spread (half the interquartile range over collectives) 0.01 times the base.
"""
import argparse
import json
import os
import sys

SIZES = [8, 1024, 65536, 1 << 20]
OPS = {"AllReduce": 2.0, "AllGather": 1.0}  # busbw factor (n-1)/n * k for n = 2 ranks
RANKS = 2
ITERS = 5
# "Link speed" per transport in GB/s: railscope is 1.5x IB here, Socket is slower.
LINK = {"railscope": 30.0, "IB": 20.0, "Socket": 5.0}


def fail(msg, code=9):
    print(f"fake_profiled_job: {msg}", file=sys.stderr)
    sys.exit(code)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fail-on")
    ap.add_argument("--drop-size-on")
    ap.add_argument("--no-profile-on")
    ap.add_argument("--calibrated-gain", type=float, default=1.0)
    args = ap.parse_args()

    net = os.environ.get("NCCL_NET", "")
    plugin = os.environ.get("NCCL_NET_PLUGIN", "")
    profiler = os.environ.get("NCCL_PROFILER_PLUGIN", "")
    out = os.environ.get("RAILSCOPE_PROFILE_DIR", "")
    if net not in LINK:
        fail(f"unexpected NCCL_NET={net!r}")
    if not profiler or profiler == "none":
        fail("NCCL_PROFILER_PLUGIN must name railscope's profiler in both variants")
    if net == "railscope":
        if "railscope" not in plugin:
            fail(f"railscope run with NCCL_NET_PLUGIN={plugin!r}")
        if os.environ.get("NCCL_NET_PLUGIN_REF_COUNT") != "1":
            fail("railscope run without NCCL_NET_PLUGIN_REF_COUNT=1")
    elif plugin != "none":
        fail(f"baseline run with NCCL_NET_PLUGIN={plugin!r}")
    calibration = os.environ.get("RAILSCOPE_TUNER_CALIBRATION")
    if calibration is not None and not os.path.isfile(calibration):
        fail(f"RAILSCOPE_TUNER_CALIBRATION={calibration!r} is not a file")
    if not out or not os.path.isdir(out):
        fail(f"RAILSCOPE_PROFILE_DIR={out!r} is not an existing folder")
    print(f"fake job: NCCL_NET={net} writing into {out}")

    if args.fail_on == net:
        fail("failing on purpose", 7)
    if args.no_profile_on == net:
        return
    sizes = SIZES[:-1] if args.drop_size_on == net else SIZES
    tag = os.environ.get("RAILSCOPE_PROFILE_TAG", "")
    if not tag:
        fail("RAILSCOPE_PROFILE_TAG is not set")
    for rank in range(RANKS):
        # One file per process, named <hostname>-<pid>.jsonl as docs/profile-format.md says.
        with open(os.path.join(out, f"fakehost-{os.getpid() + rank}.jsonl"), "w") as f:
            f.write(json.dumps({"type": "header", "schema": "railscope.profile", "version": 1,
                                "railscope_version": "0.1.0", "hostname": "fakehost",
                                "pid": os.getpid() + rank, "start_unix_ns": 0, "tag": tag,
                                "net": net, "net_plugin": plugin}) + "\n")
            f.write(json.dumps({"type": "comm", "comm": "0x00000000000000aa", "name": "", "rank": rank,
                                "nranks": RANKS, "nnodes": RANKS, "abi": 5, "mask": 0,
                                "unix_ns": 0}) + "\n")
            # An op seen only at enqueue: no duration, must be ignored by the comparison.
            f.write(json.dumps({"type": "coll", "op": "Broadcast", "bytes": 4, "rank": rank,
                                "nranks": RANKS, "time_us": None, "timing": "enqueue",
                                "algbw_gbs": None, "busbw_gbs": None, "complete": True}) + "\n")
            seq = 0
            for op, factor in OPS.items():
                for size in sizes:
                    for i in range(ITERS):
                        # Small sizes are latency-bound: scale busbw down, add per-iteration jitter.
                        eff = LINK[net] * min(1.0, size / 65536.0) * (1.0 + 0.01 * i)
                        algo, proto = "RING", "SIMPLE"
                        if calibration and size >= 65536:
                            algo, proto = "TREE", "LL128"
                            eff *= args.calibrated_gain
                        algbw = eff / (factor * (RANKS - 1) / RANKS)
                        time_us = size / (algbw * 1e3)
                        f.write(json.dumps({"type": "coll", "comm": "0x00000000000000aa",
                                            "rank": rank, "nranks": RANKS, "nnodes": RANKS,
                                            "seq": seq, "op": op, "dtype": "ncclFloat32",
                                            "count": size // 4, "bytes": size, "root": -1,
                                            "algo": algo, "proto": proto, "channels": 2,
                                            "graph": False, "time_us": time_us, "timing": "gpu",
                                            "algbw_gbs": algbw, "busbw_gbs": eff,
                                            "complete": True}) + "\n")
                        seq += 1


if __name__ == "__main__":
    main()
