#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Guest-side check of `railscope doctor --json` against `ibv_devinfo -v` and sysfs.

Runs inside the soft-RoCE test bed (rxe0@vethA <-> rxe1@vethB). Every device, port and GID that
doctor reports must match what ibv_devinfo (libibverbs, a separate implementation) and sysfs say; the
GID index doctor selects must be the IPv4-mapped RoCE v2 entry found independently in sysfs; extra
expectations (active MTUs, findings, exit status) come from the command line. Prints one line per
failure and exits 1 if there is any.
"""
import argparse
import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
import time

SYS = "/sys/class/infiniband"
WIDTH = {1: 1, 2: 4, 4: 8, 8: 12, 16: 2}
LANE = {1: 2500, 2: 5000, 4: 10000, 8: 10000, 16: 14000, 32: 25000, 64: 50000, 128: 100000, 256: 200000}
failures = []
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)


def eq(actual, expected, what):
    check(actual == expected, f"{what}: doctor says {actual!r}, reference says {expected!r}")


def norm_gid(text):
    text = text.strip()
    if re.fullmatch(r"([0-9a-fA-F]{4}:){7}[0-9a-fA-F]{4}", text):
        return str(ipaddress.IPv6Address(int(text.replace(":", ""), 16)))
    return str(ipaddress.IPv6Address(text))


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def paren_int(value):
    m = re.search(r"\((\d+)\)", value)
    return int(m.group(1)) if m else None


def parse_devinfo(text):
    devs, dev, port = {}, None, None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("hca_id:"):
            dev = devs.setdefault(s.split(":", 1)[1].strip(), {"ports": {}})
            port = None
            continue
        if dev is None:
            continue
        m = re.match(r"port:\s*(\d+)", s)
        if m:
            port = dev["ports"].setdefault(int(m.group(1)), {"gids": {}})
            continue
        m = re.match(r"GID\[\s*(\d+)\]:\s*([0-9a-fA-F:.]+)(?:,\s*(.*))?", s)
        if m and port is not None:
            port["gids"][int(m.group(1))] = (norm_gid(m.group(2)), (m.group(3) or "").strip())
            continue
        m = re.match(r"([a-z_]+):\s+(.*)", s)
        if m:
            (port if port is not None else dev)[m.group(1)] = m.group(2).strip()
    return devs


def run_doctor(exe, args=(), env=None):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("NCCL_"):
            del e[k]
    e.update(env or {})
    t0 = time.monotonic()
    p = subprocess.run([exe, "doctor", *args], capture_output=True, text=True, env=e, timeout=120)
    wall = time.monotonic() - t0
    return p.returncode, p.stdout, p.stderr, wall


def doctor_json(exe, args=(), env=None, label="default"):
    rc, out, err, wall = run_doctor(exe, ["--json", *args], env)
    print(f"doctor {label}: exit {rc}, {wall * 1000:.0f} ms", flush=True)
    try:
        return rc, json.loads(out)
    except json.JSONDecodeError as ex:
        check(False, f"doctor {label}: output is not JSON ({ex}); stderr: {err[-500:]}")
        return rc, None


def ids(report):
    return [f["id"] for f in report["findings"]]


def compare_with_references(report):
    devinfo = parse_devinfo(subprocess.run(["ibv_devinfo", "-v"], capture_output=True, text=True,
                                           timeout=60).stdout)
    devices = {d["name"]: d for d in report["sections"]["devices"]["devices"]}
    eq(sorted(devices), sorted(devinfo), "device list")
    eq(sorted(devices), sorted(os.listdir(SYS)), "device list vs sysfs")
    gid_ports = {(p["device"], p["port"]): p for p in report["sections"]["gids"]["ports"]}
    mtu_ports = {(p["device"], p["port"]): p for p in report["sections"]["mtu"]["ports"]}
    for name, ref in devinfo.items():
        d = devices.get(name)
        if d is None:
            continue
        base = f"{SYS}/{name}"
        eq(d["fw_ver"], ref.get("fw_ver") or None, f"{name} fw_ver")
        eq(d["node_guid"], ref.get("node_guid"), f"{name} node_guid")
        eq(d["node_guid"], read(f"{base}/node_guid"), f"{name} node_guid vs sysfs")
        eq(d["sys_image_guid"], ref.get("sys_image_guid"), f"{name} sys_image_guid")
        eq(int(d["vendor_part"], 0), int(ref.get("vendor_part_id", "-1")), f"{name} vendor_part_id")
        eq(d["max_qp"], int(ref.get("max_qp", "-1")), f"{name} max_qp")
        has_pci = os.path.exists(f"{base}/device")
        eq(d["virtual"], not has_pci, f"{name} virtual")
        if not has_pci:
            eq(d["pci_path"], "virtual", f"{name} pci_path")
        ports = {p["port"]: p for p in d["ports"]}
        eq(sorted(ports), sorted(ref["ports"]), f"{name} ports")
        for num, rp in ref["ports"].items():
            p = ports.get(num)
            if p is None:
                continue
            where = f"{name}:{num}"
            eq(p["state"], rp["state"].split()[0].replace("PORT_", ""), f"{where} state")
            eq(p["phys_state"], paren_int(rp["phys_state"]), f"{where} phys_state")
            eq(p["link_layer"], rp["link_layer"], f"{where} link_layer")
            eq(p["active_mtu"], int(rp["active_mtu"].split()[0]), f"{where} active_mtu")
            eq(p["max_mtu"], int(rp["max_mtu"].split()[0]), f"{where} max_mtu")
            eq(p["gid_tbl_len"], int(rp["gid_tbl_len"]), f"{where} gid_tbl_len")
            wbits, sbits = paren_int(rp["active_width"]), paren_int(rp["active_speed"])
            eq(p["width"], WIDTH.get(wbits), f"{where} width")
            eq(p["speed_mbps"], WIDTH.get(wbits, 0) * LANE.get(sbits, 0) or None, f"{where} speed_mbps")
            pb = f"{base}/ports/{num}"
            ndev = read(f"{pb}/gid_attrs/ndevs/0")
            eq(p["netdev"], ndev, f"{where} netdev vs sysfs")
            eq(p["netdev_mtu"], int(read(f"/sys/class/net/{ndev}/mtu")), f"{where} netdev_mtu vs sysfs")
            # GID table: doctor vs ibv_devinfo vs sysfs, entry by entry.
            g = gid_ports.get((name, num))
            check(g is not None, f"{where} missing from the gids section")
            if g is None:
                continue
            table = {e["index"]: e for e in g["table"]}
            eq(sorted(table), sorted(rp["gids"]), f"{where} GID indices vs ibv_devinfo")
            v4v2 = None
            for idx, (gid, gtype) in rp["gids"].items():
                e = table.get(idx)
                if e is None:
                    continue
                eq(norm_gid(e["gid"]), gid, f"{where} GID[{idx}] vs ibv_devinfo")
                if gtype:
                    eq(e["type"], gtype, f"{where} GID[{idx}] type vs ibv_devinfo")
                eq(norm_gid(read(f"{pb}/gids/{idx}")), gid, f"{where} GID[{idx}] vs sysfs")
                eq(e["type"], read(f"{pb}/gid_attrs/types/{idx}"), f"{where} GID[{idx}] type vs sysfs")
                eq(e["netdev"], read(f"{pb}/gid_attrs/ndevs/{idx}"), f"{where} GID[{idx}] netdev vs sysfs")
                eq(e["link_local"], gid.startswith("fe80:"), f"{where} GID[{idx}] link_local")
                eq(e["family"], "AF_INET" if gid.startswith("::ffff:") else "AF_INET6", f"{where} GID[{idx}] family")
                if v4v2 is None and gid.startswith("::ffff:") and read(f"{pb}/gid_attrs/types/{idx}") == "RoCE v2":
                    v4v2 = idx
            eq(g["selected_index"], v4v2, f"{where} selected GID index (first IPv4 RoCE v2 in sysfs)")
            m = mtu_ports.get((name, num))
            check(m is not None, f"{where} missing from the mtu section")
            check_qos_port(report, name, num, ndev)
    check_gpu_pcie(report)


def check_gpu_pcie(report):
    """The guest's PCI bus (QEMU's virtio devices) has no NVIDIA GPU: the gpu_pcie section lists as many as
    sysfs shows (vendor 0x10de, class 0x03xx), and says nothing."""
    gpus = []
    for d in sorted(os.listdir("/sys/bus/pci/devices")):
        base = f"/sys/bus/pci/devices/{d}"
        if read(f"{base}/vendor") == "0x10de" and (read(f"{base}/class") or "").startswith("0x03"):
            gpus.append(d)
    sec = report["sections"]["gpu_pcie"]
    eq([g["pci_address"] for g in sec["gpus"]], gpus, "gpu_pcie: the NVIDIA GPUs sysfs shows")
    eq(sec["count"], len(gpus), "gpu_pcie count")
    found = [f["id"] for f in report["findings"] if f["section"] == "gpu_pcie"]
    check(not found, f"gpu_pcie: no finding on the guest, got {found}")


def check_qos_port(report, dev, num, ndev):
    """rxe's netdev is a veth: no dcbnl_ops, so the kernel answers RTM_GETDCB with EOPNOTSUPP and the
    qos section must say "not available on this device", with ECN and rdma_cm's ToS as sysfs has them."""
    where = f"{dev}:{num}"
    ports = {(p["device"], p["port"]): p for p in report["sections"]["qos"]["ports"]}
    q = ports.get((dev, num))
    check(q is not None, f"{where} missing from the qos section")
    if q is None:
        return
    eq(q["netdev"], ndev, f"{where} qos netdev")
    eq(q["dcb"], "not_supported", f"{where} qos dcb (veth has no DCB)")
    eq(q["verdict"], "not available", f"{where} qos verdict")
    ecn = f"/sys/class/net/{ndev}/ecn/roce_np/enable/3"
    eq(q["ecn"]["np"][3], {"1": True, "0": False}.get(read(ecn)), f"{where} qos ECN np prio 3 vs sysfs")
    tos = read(f"/sys/kernel/config/rdma_cm/{dev}/ports/{num}/default_roce_tos")
    eq(q["default_roce_tos"], int(tos) if tos is not None else None, f"{where} qos default_roce_tos vs configfs")
    qos_findings = [f["id"] for f in report["findings"] if f["section"] == "qos"]
    check(not qos_findings, f"{where}: qos section must not warn on a device without DCB, got {qos_findings}")


def expect(report, rc, args, label):
    if args.expect_exit is not None:
        eq(rc, args.expect_exit, f"{label}: exit status")
        eq(report["exit_code"], args.expect_exit, f"{label}: exit_code field")
    for f in args.expect_finding:
        check(f in ids(report), f"{label}: finding {f} expected, got {ids(report)}")
    for f in args.expect_no_finding:
        check(f not in ids(report), f"{label}: finding {f} not expected, got {ids(report)}")
    for kv in args.expect_active_mtu:
        dev, mtu = kv.split("=")
        ports = [p for d in report["sections"]["devices"]["devices"] if d["name"] == dev for p in d["ports"]]
        check(bool(ports), f"{label}: device {dev} not reported")
        for p in ports:
            eq(p["active_mtu"], int(mtu), f"{label}: {dev}:{p['port']} active_mtu")


def variants(exe):
    """Environment variants, each with what doctor must then report."""
    rc, r = doctor_json(exe, env={"NCCL_ALGO": "Ring", "NCCL_NTHREADS": "512"}, label="NCCL_ALGO")
    if r:
        check(ids(r).count("env.tuning_override") == 2, f"NCCL_ALGO+NTHREADS: two env.tuning_override, got {ids(r)}")
        check(rc >= 1, f"NCCL_ALGO: exit {rc}, expected warnings")
    rc, r = doctor_json(exe, env={"NCCL_IB_GID_INDEX": "0"}, label="GID_INDEX=0")
    if r:
        check("gid.link_local" in ids(r), f"GID_INDEX=0: gid.link_local expected, got {ids(r)}")
        check(all(p["selected_index"] == 0 and p["forced"] for p in r["sections"]["gids"]["ports"]), "GID_INDEX=0 forced")
    rc, r = doctor_json(exe, env={"NCCL_IB_GID_INDEX": "7"}, label="GID_INDEX=7")
    if r:
        check("gid.index_invalid" in ids(r) and rc == 2, f"GID_INDEX=7: gid.index_invalid + exit 2, got {ids(r)} {rc}")
    rc, r = doctor_json(exe, env={"NCCL_IB_HCA": "mlx5"}, label="HCA=mlx5")
    if r:
        check("device.filtered_out" in ids(r) and rc == 2, f"HCA=mlx5: device.filtered_out + exit 2, got {ids(r)}")
    rc, r = doctor_json(exe, env={"NCCL_IB_HCA": "=rxe1:1"}, label="HCA==rxe1:1")
    if r:
        eq([(p["device"], p["port"]) for p in r["sections"]["gids"]["ports"]], [("rxe1", 1)], "HCA==rxe1:1 ports")
    rc, r = doctor_json(exe, env={"NCCL_IB_ADDR_RANGE": "10.0.0.2/32"}, label="ADDR_RANGE")
    if r:
        sel = {p["device"]: p["selected_index"] for p in r["sections"]["gids"]["ports"]}
        eq(sel, {"rxe0": 0, "rxe1": 1}, "ADDR_RANGE=10.0.0.2/32 selection")
    rc, r = doctor_json(exe, env={"NCCL_IB_ADDR_RANGE": "nonsense"}, label="bad ADDR_RANGE")
    if r:
        check("config.bad_env" in ids(r), f"bad ADDR_RANGE: config.bad_env expected, got {ids(r)}")
    # The qos section on rxe: "not available" whatever the traffic class (healthy twin of the fixtures'
    # qos.* findings); a bad NCCL_IB_TC is named.
    rc, r = doctor_json(exe, env={"NCCL_IB_TC": "106"}, label="NCCL_IB_TC=106")
    if r:
        eq(r["sections"]["qos"]["dscp"], 26, "NCCL_IB_TC=106: DSCP")
        check(not [f for f in r["findings"] if f["section"] == "qos"], f"NCCL_IB_TC=106: no qos finding, got {ids(r)}")
        check(all(p["verdict"] == "not available" for p in r["sections"]["qos"]["ports"]), "NCCL_IB_TC=106: not available")
    rc, r = doctor_json(exe, env={"NCCL_IB_TC": "999"}, label="NCCL_IB_TC=999")
    if r:
        check([f["section"] for f in r["findings"] if f["id"] == "config.bad_env"] == ["qos"],
              f"NCCL_IB_TC=999: config.bad_env in the qos section, got {r['findings']}")
    # A sysfs tree without RDMA devices (an empty folder) is a node with none; a folder that does not exist
    # is a usage error (exit 64, nothing on stdout: docs/cli.md).
    with tempfile.TemporaryDirectory() as empty:
        rc, r = doctor_json(exe, ["--sysfs-root", empty], label="no devices")
    if r:
        check(ids(r) == ["device.none"] or "device.none" in ids(r), f"no devices: device.none, got {ids(r)}")
        eq(rc, 2, "no devices: exit status")
    rc, out, err, _ = run_doctor(exe, ["--json", "--sysfs-root", "/nonexistent"], None)
    print(f"doctor missing sysfs root: exit {rc}", flush=True)
    eq(rc, 64, "a --sysfs-root that does not exist: usage error")
    check(out.strip() == "", f"a --sysfs-root that does not exist: nothing on stdout, got {out[:200]!r}")
    # sysfs-only discovery must read the same GID tables as libibverbs.
    rc1, a = doctor_json(exe, label="verbs")
    rc2, b = doctor_json(exe, ["--no-verbs"], label="sysfs only")
    if a and b:
        eq([p["table"] for p in b["sections"]["gids"]["ports"]], [p["table"] for p in a["sections"]["gids"]["ports"]],
           "GID tables: sysfs-only vs libibverbs")
        eq([p["selected_index"] for p in b["sections"]["gids"]["ports"]],
           [p["selected_index"] for p in a["sections"]["gids"]["ports"]], "selection: sysfs-only vs libibverbs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("railscope")
    ap.add_argument("--expect-exit", type=int)
    ap.add_argument("--expect-finding", action="append", default=[])
    ap.add_argument("--expect-no-finding", action="append", default=[])
    ap.add_argument("--expect-active-mtu", action="append", default=[])
    ap.add_argument("--variants", action="store_true", help="also run the environment variants")
    args = ap.parse_args()

    rc, report = doctor_json(args.railscope)
    if report is None:
        return 1
    compare_with_references(report)
    expect(report, rc, args, "default")
    trc, text, _, _ = run_doctor(args.railscope)
    eq(trc, rc, "text report exit status equals JSON's")
    check("Findings (" in text and "rxe0" in text, "text report has devices and findings")
    check("(vethA): not available on this device" in text, "text report: qos not available on vethA")
    for f in report["findings"]:
        check(f["line"] in text, f"text report shows finding line {f['line']!r}")
    if args.variants:
        variants(args.railscope)
    print(f"{checks} checks, {len(failures)} failures")
    print(json.dumps(report["findings"], indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
