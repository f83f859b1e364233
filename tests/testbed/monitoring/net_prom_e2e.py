#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fleet monitoring end to end from the net plugin on real soft-RoCE: Prometheus and node_exporter run on
this host (tests/abi/profiler/prom_stack.py) over a folder of the test bed's scratch share, into which the
net plugin of two jobs in the guest (two_jobs.sh, `testbed run --rails 2`) writes its textfiles
(RAILSCOPE_NET_PROM) while they stream: job sick on rail 0 with 2 % packet loss on vethB0, job healthy on
rail 1. Prometheus must raise RailscopePacketLoss for job sick on rail 0's ports, from the net plugin's
own series (railscope_net_port_events_total), and nothing else — nothing for the healthy job.
Usage: net_prom_e2e.py TESTBED RAILSCOPE_CLI RULES"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "abi", "profiler"))
from prom_stack import PromStack, missing_tools  # noqa: E402

TESTBED, RS, RULES = sys.argv[1], sys.argv[2], sys.argv[3]
LIMIT = 150  # seconds the guest streams at most
SETTLE = 5  # seconds the wanted alerts must fire alone


def main():
    missing = missing_tools()
    if missing:
        print(missing)
        return 1
    work = tempfile.mkdtemp(prefix="railscope-netprom-")
    scratch = f"{work}/scratch"
    os.makedirs(f"{scratch}/textfiles")
    stack = None
    guest = None
    try:
        stack = PromStack(work, RULES, f"{scratch}/textfiles")
        guest = subprocess.Popen(
            [TESTBED, "run", "--rails", "2", "--timeout", str(LIMIT + 60), "--scratch", scratch, "--",
             os.path.join(os.path.dirname(os.path.abspath(__file__)), "two_jobs.sh"), RS, str(LIMIT)],
            stdout=open(f"{work}/guest.log", "w"), stderr=subprocess.STDOUT)
        start = time.time()
        firing, alerts, settled = set(), [], None
        while time.time() - start < LIMIT and guest.poll() is None:
            time.sleep(1)
            alerts = stack.alerts()
            firing = {(a["labels"]["alertname"], a["labels"].get("job", ""), a["labels"].get("device", ""),
                       a["labels"].get("port", "")) for a in alerts if a["state"] == "firing"}
            wanted = {f for f in firing if f[0] == "RailscopePacketLoss" and f[1] == "sick" and
                      f[2] in ("rxe0", "rxe1") and f[3] == "1"}
            if wanted and wanted == firing:
                settled = settled or time.time()
                if time.time() - settled >= SETTLE:
                    break
            else:
                settled = None
        elapsed = time.time() - start
        series = stack.query('count by (job, device) ({__name__=~"railscope_net_port_.*"})')
        open(f"{scratch}/stop", "w").close()
        try:
            rc = guest.wait(timeout=LIMIT + 120)
        except subprocess.TimeoutExpired:
            guest.kill()
            rc = -1
        print(f"after {elapsed:.1f} s, Prometheus's alerts (firing and pending):")
        stack.print_alerts(alerts)
        for r in series:
            print(f"  net plugin port series scraped: job {r['metric'].get('job')} device "
                  f"{r['metric'].get('device')}: {r['value'][1]}")
        print("--- the guest (two_jobs.sh):\n" + open(f"{work}/guest.log").read()[-6000:])
        ok = rc == 0
        if not ok:
            print(f"FAIL: the guest ended with status {rc}")
        if not settled:
            print("FAIL: want RailscopePacketLoss for job sick on rxe0:1 or rxe1:1 and no other alert firing "
                  f"for {SETTLE} s; firing at the end: {sorted(firing)}")
            ok = False
        jobs = {r["metric"].get("job") for r in series}
        if jobs != {"sick", "healthy"}:
            print(f"FAIL: want the net plugin's port series of both jobs, got jobs {sorted(jobs)}")
            ok = False
        if not ok:
            stack.print_logs()
        return 0 if ok else 1
    finally:
        if guest and guest.poll() is None:
            guest.kill()
        if stack:
            stack.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
