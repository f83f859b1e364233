#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks one `railscope doctor --watch 3 --json` output from watch_loss.sh.

usage: check_watch.py healthy|lossy WATCH.json EXIT_STATUS
  healthy: exit 0, no fabric.* finding, traffic on both rxe ports. A healthy rxe stream may show a lost-packet
           event or two (an ACK timeout of the slow emulated guest): shown, below node::fabric_findings' floor.
  lossy:   loss deltas non-zero on rxe1:1 (vethB, where netem drops) and shown; when they pass the floor
           (8 events in the window) the finding is fabric.packet_loss naming rxe1:1 and the exit status 1.
           At 2 % loss rxe crawls at one or two events a second, so the finding itself is not required.
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
    loss_findings = [f for f in j["findings"] if f["id"] == "fabric.packet_loss"]
    if case == "healthy":
        check(rc == 0, f"exit {rc} == 0")
        check(not [f for f in j["findings"] if f["id"].startswith("fabric.")], "no fabric.* finding")
    else:
        check(ports["rxe1:1"]["totals"]["loss"] > 0, "loss deltas on rxe1:1 (vethB)")
        check(any(c["category"] == "loss" and c["delta"] > 0 for c in ports["rxe1:1"]["counters"]),
              "the loss counters of rxe1:1 are listed")
        check(all("rxe1:1:" in f["detail"] for f in loss_findings if "rxe0" not in f["detail"]),
              "a fabric.packet_loss finding, if any, names the port")
        check(rc == (1 if loss_findings else 0), f"exit {rc} follows the findings")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
