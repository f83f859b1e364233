#!/usr/bin/env python3
"""Checks one `railscope doctor --watch 3 --json` output from watch_loss.sh.

usage: check_watch.py healthy|lossy WATCH.json EXIT_STATUS
  healthy: exit 0, no counters.loss finding, loss deltas zero on every port, traffic on both rxe ports;
  lossy:   exit 1, loss deltas non-zero on rxe1:1 (vethB, where netem drops), a counters.loss finding
           naming rxe1:1 with its figures.
"""
import json
import sys


def main():
    case, path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    ok = True

    def check(cond, what):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what)
        ok = ok and cond

    ports = {f'{p["device"]}:{p["port"]}': p for p in j["ports"]}
    for name, p in sorted(ports.items()):
        moved = {c["name"]: c["delta"] for c in p["counters"] if c["category"] != "traffic"}
        print(f"{case} {name} netdev={p['netdev']} ethtool={p['ethtool_available']} totals={p['totals']} {moved}")
    for f in j["findings"]:
        print(f"{case} finding: {f['line']}")
    check(j["schema"] == "railscope.doctor.watch/1", "schema")
    check(j["interval_s"] >= 3.0, f"interval {j['interval_s']:.2f} s >= 3")
    check(set(ports) >= {"rxe0:1", "rxe1:1"}, "both rxe ports watched")
    check(all(ports[p]["totals"]["traffic"] > 0 for p in ("rxe0:1", "rxe1:1") if p in ports),
          "traffic counted on both ports (the stream ran during the watch)")
    check(ports.get("rxe1:1", {}).get("netdev") == "vethB", "rxe1's netdev is vethB")
    loss_findings = [f for f in j["findings"] if f["id"] == "counters.loss"]
    if case == "healthy":
        check(rc == 0, f"exit {rc} == 0")
        check(not loss_findings, "no counters.loss finding")
        check(all(p["totals"]["loss"] == 0 for p in ports.values()), "no loss delta on any port")
    else:
        check(rc == 1, f"exit {rc} == 1")
        check(ports["rxe1:1"]["totals"]["loss"] > 0, "loss deltas on rxe1:1 (vethB)")
        check(any("rxe1:1:" in f["detail"] for f in loss_findings), "counters.loss names rxe1:1")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
