#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/net_vs_build: NEW/BASE per row from the folders guest.sh wrote. Each NEW run is compared with
the mean of the BASE runs right before and after it; the table gives the median of those ratios, as
speed (bandwidth: NEW/BASE; latency: BASE/NEW, so > 1 is faster for both)."""
import json
import statistics
import sys
from pathlib import Path


def value(path, row):
    try:
        r = json.loads(Path(path).read_text())["results"][0]
        return r["bytes_per_s"] / 2**20 if row.startswith("bw") else r["lat_p50_us"]
    except (OSError, ValueError, KeyError, IndexError):
        return None


def main(folders):
    rows = {}
    for folder in folders:
        runs = []
        for line in (Path(folder) / "manifest.txt").read_text().splitlines():
            seq, which, row, f = line.split(maxsplit=3)
            runs.append((int(seq), which, row, value(f, row)))
        for i, (_, which, row, v) in enumerate(runs):
            if which != "new" or v is None:
                continue
            nb = [r[3] for r in (runs[i - 1], runs[i + 1] if i + 1 < len(runs) else None)
                  if r and r[1] == "base" and r[2] == row and r[3]]
            if not nb:
                continue
            b = statistics.mean(nb)
            speed = v / b if row.startswith("bw") else b / v
            rows.setdefault(row, []).append((b, v, speed))
    unit = {True: "MiB/s", False: "us p50"}
    print(f"{'row':<12} {'unit':<7} {'base (median)':>14} {'new (median)':>13} {'speed new/base':>15} {'runs':>5}")
    for row, vals in rows.items():
        print(f"{row:<12} {unit[row.startswith('bw')]:<7} {statistics.median(x[0] for x in vals):>14.2f} "
              f"{statistics.median(x[1] for x in vals):>13.2f} {statistics.median(x[2] for x in vals):>15.3f} "
              f"{len(vals):>5}")


if __name__ == "__main__":
    main(sys.argv[1:])
