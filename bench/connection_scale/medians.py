#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Medians over the rounds of bench/connection_scale (ROUNDS > 1): one row per plugin and N.
usage: medians.py LOG   (run.sh's output, or the guest's, saved to a file)"""
import re
import statistics
import sys

COLS = ["pin_KiB", "rss_KiB", "QPs", "CQs", "MRs", "fds", "conn_ms", "close_ms", "test_ns", "8B_lat_us"]
cells = {}  # (who, N) -> {column: [values]}
who = None
last = None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"== (\w+) \(round", line)
    if m:
        who = m.group(1)
        continue
    if line.startswith("== "):
        who = None
        continue
    fields = line.split()
    if who and len(fields) == 1 + len(COLS) and fields[0].isdigit():
        last = cells.setdefault((who, int(fields[0])), {})
        for c, v in zip(COLS, fields[1:]):
            last.setdefault(c, []).append(float(v))
        continue
    m = re.search(r"heap and anonymous ([\d.]+), verbs device ([\d.]+)", line)
    if m and who and last is not None:
        last.setdefault("heap_KiB", []).append(float(m.group(1)))
        last.setdefault("dev_KiB", []).append(float(m.group(2)))
if not cells:
    sys.exit("no conn_scale tables in " + sys.argv[1])
cols = COLS + (["heap_KiB", "dev_KiB"] if any("heap_KiB" in v for v in cells.values()) else [])
print("medians over %d round(s); conn_ms per round:" % max(len(v["conn_ms"]) for v in cells.values()))
print("%-10s %6s " % ("plugin", "N") + " ".join("%10s" % c for c in cols) + "   conn_ms each round")
for (w, n), v in sorted(cells.items()):
    row = " ".join("%10.1f" % statistics.median(v[c]) if c in v else "%10s" % "-" for c in cols)
    print("%-10s %6d %s   %s" % (w, n, row, " ".join("%.1f" % x for x in v["conn_ms"])))
