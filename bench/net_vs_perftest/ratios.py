#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/net_vs_perftest: side-by-side table and ratios from one or more boots (folders written by
guest.sh). Each netbench run is compared with the mean of the perftest runs of the same kind just
before and just after it (the guest's speed drifts within a boot); the median over runs and boots is
quoted. Bandwidth in MiB/s (perftest's "MB/sec" is 2^20 B/s), latency in microseconds (median)."""
import json
import statistics
import sys
from pathlib import Path


def perftest_value(path, tool):
    """BW average [MiB/s] for *_bw, t_typical [us] for *_lat."""
    for line in Path(path).read_text(errors="replace").splitlines():
        cols = line.split()
        if len(cols) >= 5 and cols[0].isdigit() and cols[1].isdigit():
            try:
                return float(cols[3]) if tool.endswith("_bw") else float(cols[4])
            except ValueError:
                continue
    return None


def netbench_value(path, mode):
    try:
        j = json.loads(Path(path).read_text())
        r = j["results"][0]
        return r["bytes_per_s"] / 2**20 if mode.startswith("bw") else r["lat_p50_us"]
    except (OSError, ValueError, KeyError, IndexError):
        return None


def load(folder):
    runs = []
    for line in (Path(folder) / "manifest.txt").read_text().splitlines():
        seq, tool, size, f = line.split(maxsplit=3)
        if tool.startswith("netbench_"):
            v = netbench_value(f, tool.split("_")[1])
        else:
            v = perftest_value(f, tool)
        runs.append((int(seq), tool, size, v, f))
    return runs


def neighbours(runs, i, tool, size):
    before = [r for r in runs[:i] if r[1] == tool and r[2] == size and r[3]]
    after = [r for r in runs[i + 1:] if r[1] == tool and r[2] == size and r[3]]
    vals = ([before[-1][3]] if before else []) + ([after[0][3]] if after else [])
    return statistics.mean(vals) if vals else None


def main(folders):
    table = {}  # (size, ref) -> list of (netbench, ref, ratio)
    raw = []
    for folder in folders:
        runs = load(folder)
        for i, (seq, tool, size, v, f) in enumerate(runs):
            boot = Path(folder).parent.name if Path(folder).name == "runs" else Path(folder).name
            raw.append((boot, seq, tool, size, v))
            if not tool.startswith("netbench_"):
                continue
            if v is None:
                print(f"WARNING: {f}: no result", file=sys.stderr)
                continue
            refs = {"netbench_bw": ["ib_write_bw", "ib_send_bw"], "netbench_bw-sleep": ["ib_write_bw"]}.get(
                tool, ["ib_write_lat"])
            for ref in refs:
                m = neighbours(runs, i, ref, size)
                if m:
                    ratio = v / m
                    table.setdefault((tool, size, ref), []).append((v, m, ratio))
    print("raw runs (boot, order, tool, size, value):")
    for b, seq, tool, size, v in raw:
        unit = "us" if "lat" in tool else "MiB/s"
        print(f"  {b:>8} {seq:>3} {tool:<14} {size:>4} {v if v is None else round(v, 2)} {unit}")
    print("(a perftest value of 0 or none is a failed run and is left out; a latency median above 1000 us\n"
          " fell into the guest's scheduler tick: such a run says nothing about the transport)")
    print()
    print(f"{'metric':<34} {'netbench':>10} {'perftest':>10} {'ratio':>7}  runs  target")
    ok = True
    for (tool, size, ref), vals in sorted(table.items()):
        nb = statistics.median(v for v, _, _ in vals)
        pt = statistics.median(m for _, m, _ in vals)
        ratio = statistics.median(r for _, _, r in vals)
        if tool == "netbench_bw":
            name = f"bandwidth {size} MiB/s vs {ref}"
            target = ">= 1.0" if ref == "ib_write_bw" else "(ref)"
            met = ratio >= 1.0 if ref == "ib_write_bw" else True
        elif tool == "netbench_bw-sleep":  # idle processes sleep, as ib_write_bw's server does
            name = f"bw {size} sleeping when idle vs {ref}"
            target = "(info)"
            met = True
        elif tool == "netbench_lat-spin":  # busy-polling, as ib_write_lat does
            name = f"latency {size} B p50 us vs {ref}"
            target = "<= 1.3"
            met = ratio <= 1.3
        else:  # netbench's default: sched_yield when idle, as NCCL's proxy thread does
            name = f"lat {size} B yielding when idle vs {ref}"
            target = "(info)"
            met = True
        ok &= met
        print(f"{name:<34} {nb:>10.2f} {pt:>10.2f} {ratio:>7.3f}  {len(vals):>4}  {target}{'' if met else '  MISSED'}")
    return 0 if table else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
