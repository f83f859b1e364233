#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns a table of published all_reduce_perf figures (fixtures/published/*.txt: ranks, nodes, algorithm,
protocol, size and one or more busbw figures per line) into railscope profile files
(docs/profile-format.md), one file per table line, one AllReduce record per figure, as the profiler would
have written them on rank 0 of a run with NCCL_ALGO/NCCL_PROTO forced, so `railscope tuner calibrate`
reads published results through the same reader as its own profiles."""
import json
import os
import sys


def convert(table, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    lines = [l.split() for l in open(table) if l.strip() and not l.lstrip().startswith("#")]
    for n, (ranks, nodes, algo, proto, size, *figures) in enumerate(lines):
        ranks, nodes, size = int(ranks), int(nodes), int(size)
        comm = f"0x{n + 1:016x}"
        with open(os.path.join(out_dir, f"published-{n}.jsonl"), "w") as f:
            f.write(json.dumps({"type": "header", "schema": "railscope.profile", "version": 1,
                                "railscope_version": "0.1.0", "hostname": f"published{n}", "pid": n + 1,
                                "start_unix_ns": 0, "tag": os.path.basename(table), "net": "",
                                "net_plugin": ""}) + "\n")
            f.write(json.dumps({"type": "comm", "comm": comm, "name": "", "rank": 0, "nranks": ranks,
                                "nnodes": nodes, "abi": 5, "mask": 0, "unix_ns": 0}) + "\n")
            for i, busbw in enumerate(float(x) for x in figures):
                algbw = busbw * ranks / (2 * (ranks - 1))  # nccl-tests' AllReduce bus factor
                f.write(json.dumps({"type": "coll", "comm": comm, "rank": 0, "nranks": ranks,
                                    "nnodes": nodes, "seq": i, "ord": i, "op": "AllReduce",
                                    "dtype": "ncclFloat32", "count": size // 4, "bytes": size, "root": -1,
                                    "algo": algo.upper(), "proto": proto.upper(), "channels": 0,
                                    "graph": False, "time_us": size / (algbw * 1e3), "timing": "gpu",
                                    "algbw_gbs": algbw, "busbw_gbs": busbw, "complete": True}) + "\n")


if __name__ == "__main__":
    convert(sys.argv[1], sys.argv[2])
