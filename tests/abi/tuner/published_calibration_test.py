#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Published nccl-tests results (fixtures/published/gb200_nvl_partitions.txt) through
published_to_profile.py, `railscope tuner calibrate` and `railscope tuner explain --calibration`: at every
published size and shape the calibrated tuner picks the algorithm that was published faster (there, Tree
over the Ring NCCL chose itself)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from published_to_profile import convert  # noqa: E402

RAILSCOPE = sys.argv[1]
TABLE = os.path.join(HERE, "fixtures", "published", "gb200_nvl_partitions.txt")


def published_best():
    """(ranks, nodes, bytes) -> (algo, proto) with the highest mean published busbw."""
    best = {}
    for line in open(TABLE):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        ranks, nodes, algo, proto, size, *figures = line.split()
        key = (int(ranks), int(nodes), int(size))
        mean = sum(float(x) for x in figures) / len(figures)
        if key not in best or mean > best[key][0]:
            best[key] = (mean, algo, proto)
    return {k: (a, p) for k, (_, a, p) in best.items()}


with tempfile.TemporaryDirectory() as work:
    convert(TABLE, os.path.join(work, "profiles"))
    cal = os.path.join(work, "cal.txt")
    made = subprocess.run([RAILSCOPE, "tuner", "calibrate", os.path.join(work, "profiles"), "-o", cal],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    best = published_best()
    assert len(best) == 2, best
    for (ranks, nodes, size), (algo, proto) in sorted(best.items()):
        r = subprocess.run([RAILSCOPE, "tuner", "explain", "--nodes", str(nodes), "--gpus-per-node",
                            str(ranks // nodes), "--nics", str(ranks // nodes), "--nic-gbit", "400",
                            "--calibration", cal, "--json", "--min-bytes", str(size), "--max-bytes", str(size)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        (row,) = json.loads(r.stdout)["rows"]
        assert row["bytes"] == size, row
        assert (row["measured_best"]["algo"], row["measured_best"]["proto"]) == (algo, proto), row
        assert (row["choice"]["algo"], row["choice"]["proto"]) == (algo, proto), (ranks, nodes, row)
        print(f"{ranks} ranks on {nodes} nodes, {size} B: {algo}/{proto} as published ({row['why']})")
print("published calibration: ok")
