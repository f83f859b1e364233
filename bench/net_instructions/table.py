#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table of bench/net_instructions: user-space instructions per message of each plugin, from the callgrind files
guest.sh wrote (collection only inside the plugin's isend, irecv and test).

Every run of a cell sends N messages with window 1, so each message costs exactly one isend that returns a
request (sender) or one irecv (receiver) and one test() that reports it done; every other call of an entry
point found nothing to do (an idle poll: a test() before the completion is there, an isend the plugin answered
"not now"). Their number depends on timing, not on the plugin, so the same cell runs twice with different idle
counts (guest.sh: a fast peer and a sleeping measured process, a slow peer and a busy-polling one), and for
each entry point
    Ir = N * work + idle_calls * idle,       idle_calls = calls - N
gives `work` (the instructions of the call that does the message's work) and `idle` (one call that finds
nothing). Instructions per message = isend work + test work (sender), irecv work + test work (receiver).
The same split per object (plugin, libibverbs, rxe provider, libc, vDSO) and per function uses the run's idle
calls of all entry points together as the one regressor.
usage: table.py [--top N] RUNS_DIR"""

import argparse
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_file  # noqa: E402

ENTRIES = {  # who -> entry point -> callee name pattern (the names guest.sh toggles collection on)
    "railscope": {
        "isend": r"^railscope::net::\(anonymous namespace\)::isend\(",
        "irecv": r"^railscope::net::\(anonymous namespace\)::irecv\(",
        "test": r"^railscope::net::abi::test\(",
    },
    "reference": {"isend": r"^ncclIbIsend$", "irecv": r"^ncclIbIrecv$", "test": r"^ncclIbTest$"},
}
# side -> entry point -> calls that do a message's work, per message (or per round trip, pingpong)
SIDE_ENTRIES = {
    "pingpong": {"isend": 1, "irecv": 1, "test": 2},
    "send": {"isend": 1, "test": 1},
    "recv": {"irecv": 1, "test": 1},
}
TARGET = 0.8  # the target: railscope at most 0.8 x the reference's instructions per message


def kind_of(who):
    return "reference" if who == "reference" else "railscope"


def object_group(obj):
    base = os.path.basename(obj or "???")
    if base.startswith("libnccl-net"):
        return "plugin"
    if base.startswith("libibverbs"):
        return "libibverbs"
    if base.startswith("librxe"):
        return "rxe provider"
    if base.startswith(("libc.so", "libc-")):
        return "libc"
    if base.startswith("libstdc++"):
        return "libstdc++"
    if "vdso" in base or base == "???":
        return "vDSO/other"
    return base


class Run:
    def __init__(self, fields):
        self.seq, self.who, self.side, self.size = fields[0], fields[1], fields[2], fields[3]
        self.n, self.mode, self.file, self.rc = int(fields[4]), fields[5], fields[6], int(fields[7])
        self.prof = callgrind_file.read(self.file)
        self.calls, self.ir = {}, {}
        for e in SIDE_ENTRIES[self.side]:
            self.calls[e], self.ir[e] = self.prof.entries(ENTRIES[kind_of(self.who)][e])
        self.idle = sum(self.calls[e] - self.n * k for e, k in SIDE_ENTRIES[self.side].items())

    def check(self):
        """Problems that make the run unusable: a failed run, missing calls, Ir outside the entry points."""
        if self.rc != 0:
            return "exit status %d" % self.rc
        for e, k in SIDE_ENTRIES[self.side].items():
            if self.calls[e] < self.n * k:
                return "%d %s calls for %d messages" % (self.calls[e], e, self.n)
        inside = sum(self.ir.values())
        if self.prof.total and abs(inside - self.prof.total) > 0.01 * self.prof.total:
            return "entry points hold %d of %d Ir collected" % (inside, self.prof.total)
        return None


def split(points, base, n):
    """points: [(idle_calls, Ir)] of the runs of one cell; base: the point of the run with the fewest idle calls
    of all entry points (every column of a cell comes from that one run: which call takes a completion varies
    between runs, an irecv in one, a test() in another). Returns (work per message, Ir of one idle call or
    None, exact). When the runs' idle counts are too close to give the idle cost, the base run's idle calls
    stay in: an upper bound (exact=False), unless it had none."""
    pts = sorted(points)
    (i1, t1), (i2, t2) = pts[0], pts[-1]
    idle = (t2 - t1) / (i2 - i1) if i2 - i1 >= max(0.25 * n, 10) else None
    bi, bt = base
    if idle is None:
        return bt / n, None, bi == 0
    return (bt - bi * idle) / n, idle, True


def fmt(v, digits=0, exact=True):
    if v is None:
        return "-"
    return ("" if exact else "≤ ") + "{:,.{d}f}".format(v, d=digits)


def load(runs_dir):
    runs, bad = [], []
    with open(os.path.join(runs_dir, "manifest.txt")) as f:
        for line in f:
            fields = line.split()
            if len(fields) < 8:
                continue
            try:
                r = Run(fields)
            except OSError as e:
                bad.append("%s: %s" % (fields[6], e))
                continue
            why = r.check()
            if why:
                bad.append("%s: %s" % (os.path.basename(r.file), why))
            else:
                runs.append(r)
    return runs, bad


def cells_of(runs):
    cells = collections.OrderedDict()
    for r in runs:
        cells.setdefault((r.who, r.side, r.size), []).append(r)
    return cells


def cell_summary(rs):
    n = rs[0].n
    b = min(range(len(rs)), key=lambda i: rs[i].idle)  # the base run
    out = {"n": n, "entries": {}, "idle": " ".join("%s:%.1f" % (r.mode, r.idle / n) for r in rs),
           "base": rs[b].mode}
    for e, k in SIDE_ENTRIES[rs[0].side].items():
        pts = [(r.calls[e] - n * k, r.ir[e]) for r in rs]
        work, idle, exact = split(pts, pts[b], n)
        out["entries"][e] = (work / k, idle, exact)  # per call that does work
    out["per_msg"] = sum(v[0] * SIDE_ENTRIES[rs[0].side][e] for e, v in out["entries"].items())
    out["exact"] = all(v[2] for v in out["entries"].values())
    per_run = []
    for r in rs:
        per = collections.Counter()
        for obj, ir in r.prof.object_ir().items():
            per[object_group(obj)] += ir
        per_run.append(per)
    out["objects"] = {}
    for g in set().union(*per_run):
        pts = [(r.idle, per[g]) for r, per in zip(rs, per_run)]
        out["objects"][g] = split(pts, pts[b], n)[0]
    funcs = {}
    keys = set()
    for r in rs:
        keys |= set(r.prof.self_ir)
    for k in keys:
        pts = [(r.idle, r.prof.self_ir.get(k, 0)) for r in rs]
        funcs[k] = split(pts, pts[b], n)[0]
    out["functions"] = funcs
    return out


def short(fn, width=90):
    fn = re.sub(r"\(anonymous namespace\)", "(anon)", fn)
    fn = re.sub(r"std::span<([^,<>]*), 18446744073709551615ul>", r"std::span<\1>", fn)
    return fn if len(fn) <= width else fn[: width - 3] + "..."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("runs_dir")
    a = ap.parse_args()
    runs, bad = load(a.runs_dir)
    for b in bad:
        print("skipped: " + b)
    cells = cells_of(runs)
    summ = {k: cell_summary(v) for k, v in cells.items()}

    print("\n## Instructions per message (user space; work: a call that does a message's work, idle: one that "
          "finds nothing)\n")
    print("Every column of a row comes from its run with the fewest idle calls (base), less those calls.\n")
    print("| plugin | side | size | N | idle calls per message, per run | isend | irecv | test (work) | test (idle) "
          "| per message (pingpong: per round trip) | railscope / reference |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (who, side, size), s in summ.items():
        ent = s["entries"]
        cell = lambda e: fmt(ent[e][0], exact=ent[e][2]) if e in ent else ""  # noqa: E731
        ratio = ""
        ref = summ.get(("reference", side, size))
        if who != "reference" and ref and ref["per_msg"] > 0:
            q = s["per_msg"] / ref["per_msg"]
            ratio = "**%.2f×** %s" % (q, "≤ %.1f ✓" % TARGET if q <= TARGET else "> %.1f ✗" % TARGET)
        print("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            who, side, size, s["n"], s["idle"], cell("isend"), cell("irecv"), cell("test"), fmt(ent["test"][1]),
            fmt(s["per_msg"], exact=s["exact"]), ratio))
    sides = {k[1] for k in summ}
    if {"send", "recv"} <= sides:
        print("\nSender + receiver per message (send + recv rows):")
        for size in dict.fromkeys(k[2] for k in summ):
            line = []
            for who in sorted({k[0] for k in summ}):
                both = [summ.get((who, side, size)) for side in ("send", "recv")]
                if all(both):
                    line.append("%s %s" % (who, fmt(sum(b["per_msg"] for b in both))))
            print("- %s: %s" % (size, ", ".join(line)))

    print("\n## Raw runs (all calls of the entry points, idle ones included)\n")
    print("| plugin | side | size | run | N | calls per message: isend / irecv / test | Ir per message |")
    print("|---|---|---|---|---|---|---|")
    for (who, side, size), rs in cells.items():
        for r in rs:
            calls = " / ".join("%.2f" % (r.calls[e] / r.n) if e in r.calls else "-" for e in ("isend", "irecv", "test"))
            print("| %s | %s | %s | %s | %d | %s | %s |" % (who, side, size, r.mode, r.n, calls,
                                                           fmt(sum(r.ir.values()) / r.n)))

    groups = ["plugin", "libibverbs", "rxe provider", "libc", "libstdc++", "vDSO/other"]
    print("\n## Where a message's instructions go, per object (work per message)\n")
    print("| plugin | side | size | " + " | ".join(groups) + " | other |")
    print("|---|---|---|" + "---|" * (len(groups) + 1))
    for (who, side, size), s in summ.items():
        o = s["objects"]
        other = sum(v for g, v in o.items() if g not in groups)
        print("| %s | %s | %s | %s | %s |" % (who, side, size, " | ".join(fmt(o.get(g)) for g in groups),
                                             fmt(other)))

    variants = [k for k in summ if k[0].startswith("railscope[")]
    if variants:
        print("\n## railscope against its variants: test() per call\n")
        print("| variant | side | size | test (work): railscope | variant | test (idle): railscope | variant |")
        print("|---|---|---|---|---|---|---|")
        for who, side, size in variants:
            base, v = summ.get(("railscope", side, size)), summ[(who, side, size)]
            if base:
                bt, vt = base["entries"]["test"], v["entries"]["test"]
                print("| %s | %s | %s | %s | %s | %s | %s |" % (who, side, size, fmt(bt[0], 1), fmt(vt[0], 1),
                                                               fmt(bt[1], 1), fmt(vt[1], 1)))

    print("\n## Top functions per message (instructions in the function itself, work per message)\n")
    for (who, side, size), s in summ.items():
        if who not in ("railscope", "reference"):
            continue
        rs = cells[(who, side, size)]
        top = sorted(s["functions"].items(), key=lambda kv: -kv[1])[: a.top]
        print("%s %s %s (per message %s):" % (who, side, size, fmt(s["per_msg"])))
        for (obj, fn), v in top:
            name = short(fn)
            if fn.startswith("0x"):  # a stripped library: name it by its caller
                by = collections.Counter()
                for r in rs:
                    by.update(r.prof.callers.get(fn, {}))
                if by:
                    name += " (called by %s)" % short(by.most_common(1)[0][0], 60)
            print("  %8s  %-12s %s" % (fmt(v), object_group(obj), name))
        print()

if __name__ == "__main__":
    main()
