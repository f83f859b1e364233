#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`railscope preflight` rank 0 with more ranks than open files: its open-file limit soft and hard 1,024 (as
in many containers), worlds of 1,100 (reports and verdicts) and 600 (with the link steps) of fake ranks
(fake_ranks.py: the real protocol, HMAC included). Each run must end with every rank joined and given its
verdict, and rank 0's open descriptors must stay near kMaxHeldCallers (512) plus its own. The healthy twin,
a world of 20: every rank held, none told to come back.
Usage: preflight_scale_test.py RAILSCOPE"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_ranks  # noqa: E402

CLI = sys.argv[1]
FAILS = []
MAX_FDS = 512 + 64  # held connections, then the listening socket, its spare, stdio, what libraries open


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def run(world, links):
    r = fake_ranks.run_rank0_and_fakes(CLI, world, links=links, nofile=1024, timeout=120)
    v, s = r["verdict"] or {}, r["stats"]
    what = f"world {world}{' with links' if links else ''}"
    print(f"{what}: {r['seconds']:.1f} s, rank 0 peak {r['peak_fds']} fds, {r['peak_rss_kib'] // 1024} MiB, "
          f"{s.exchanges} exchanges, {s.later} told to come back", flush=True)
    ids = sorted({f["id"] for f in v.get("findings", [])})
    # Rank 0's own tree is empty: its doctor's device.none is the one finding of a healthy run.
    check(r["verdict"] is not None and len(v["nodes"]) == world and v["missing"] == [] and ids == ["device.none"],
          f"{what}: every rank joined, no preflight finding ({ids}, missing {len(v.get('missing', []))}, "
          f"{r['stderr'].strip()[-400:]})")
    check(len(s.verdicts) == world - 1 and not s.errors and
          all(j["joined"] == world for j in s.verdicts.values()),
          f"{what}: every fake rank got its verdict ({len(s.verdicts)}, {s.errors[:3]})")
    check(r["peak_fds"] <= MAX_FDS, f"{what}: rank 0's descriptors stay bounded ({r['peak_fds']} <= {MAX_FDS})")
    check("dropped a connection" not in r["stderr"] and "could not send" not in r["stderr"],
          f"{what}: nothing dropped ({r['stderr'].strip()[-400:]})")
    return s


s = run(20, links=True)
check(s.later == 0 and s.steps > 0, f"world 20: every rank held, none told to come back ({s.later}, {s.steps} steps)")
s = run(1100, links=False)
check(s.later > 0, f"world 1,100: the ranks beyond 512 told to come back ({s.later})")
s = run(600, links=True)
check(s.later > 0 and s.steps > 0, f"world 600 with links: steps taken by polling ranks ({s.later}, {s.steps})")

print("FAILED: %d" % len(FAILS) if FAILS else "all passed")
sys.exit(1 if FAILS else 0)
