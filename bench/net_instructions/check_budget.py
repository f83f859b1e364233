#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares railscope's instructions per message (the runs of check.sh, split by table.py into a call's work and
one idle call) with the budget in budget.json: prints budget, measured and their ratio per figure and exits 1
when a figure is above its budget by more than its tolerance, 2 when the runs cannot give a figure.
A figure well below its budget is reported (the budget can then be lowered with --record), never a failure.
usage: check_budget.py [--budget FILE] [--record] RUNS_DIR"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import table  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def measured_figures(summary):
    """figure name -> (instructions, exact) from table.cell_summary: each entry point's work per call that does a
    message's work, its idle call where the runs give one, and the whole round trip."""
    out = {}
    for entry, (work, idle, exact) in summary["entries"].items():
        out[entry + " work"] = (work, exact)
        if idle is not None:
            out[entry + " idle"] = (idle, True)
    out["round trip"] = (summary["per_msg"], summary["exact"])
    return out


def compare(budget, figures):
    """Rows (name, budget, measured, ratio, verdict) and whether any figure is over its budget or missing."""
    rows, failed = [], False
    for name, b in budget["figures"].items():
        limit = b["instructions"] * (1 + b.get("tolerance", budget["tolerance"]))
        if name not in figures:
            rows.append((name, b["instructions"], None, None, "not measured"))
            failed = True
            continue
        v, exact = figures[name]
        ratio = v / b["instructions"]
        if v > limit:
            verdict, failed = "OVER (limit %.0f)" % limit, True
        elif ratio < 1 - b.get("tolerance", budget["tolerance"]):
            verdict = "below: lower the budget (--record)"
        else:
            verdict = "ok"
        if not exact:
            verdict += ", upper bound (idle calls kept in)"
        rows.append((name, b["instructions"], v, ratio, verdict))
    return rows, failed


def check_cell(budget, cell, runs, runs_dir, record):
    """One cell of the budget against the runs: prints its table; returns 0 ok, 1 over or missing, 2 no runs."""
    rs = table.cells_of(runs).get((cell["who"], cell["side"], cell["size"]))
    if not rs or len({r.mode for r in rs}) < 2:
        print("no %s %s %s cell with two runs (fast and slow) in %s" % (cell["who"], cell["side"], cell["size"],
                                                                       runs_dir))
        return 2
    figures = measured_figures(table.cell_summary(rs))
    if record:
        for name, b in budget["figures"].items():
            if name in figures:
                b["instructions"] = round(figures[name][0])
    rows, failed = compare(budget, figures)
    print("\n## Instruction budget: %s %s %s B, N=%d\n" % (cell["who"], cell["side"], cell["size"], rs[0].n))
    print("| figure | budget | measured | measured / budget | |")
    print("|---|---:|---:|---:|---|")
    for name, b, v, ratio, verdict in rows:
        print("| %s | %s | %s | %s | %s |" % (name, table.fmt(b), table.fmt(v, 1), table.fmt(ratio, 3), verdict))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", default=os.path.join(HERE, "budget.json"))
    ap.add_argument("--record", action="store_true", help="write the measured figures as the new budget")
    ap.add_argument("runs_dir")
    a = ap.parse_args()
    with open(a.budget) as f:
        doc = json.load(f)
    runs, bad = table.load(a.runs_dir)
    for b in bad:
        print("unusable run: " + b)
    # Each cell is one protocol's path (the eager protocol by default, the receiver-driven one in the
    # `railscope[rd]` variant); every cell must be measured and within its budget.
    worst = 0
    for entry in doc["cells"]:
        entry.setdefault("tolerance", doc["tolerance"])
        worst = max(worst, check_cell(entry, entry["cell"], runs, a.runs_dir, a.record))
    if a.record and worst != 2:
        with open(a.budget, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print("recorded the measured figures in " + a.budget)
    print("\n" + ("ok: every figure within budget" if worst == 0 else
                  "FAIL: no runs for a cell" if worst == 2 else "FAIL: a figure is over its budget or missing"))
    return worst


if __name__ == "__main__":
    sys.exit(main())
