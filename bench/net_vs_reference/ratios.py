#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/net_vs_reference: one table from one or more boots (folders written by guest.sh).

Within a boot, each railscope run is divided by the mean of the reference runs just before and just after it
in the same cell (size, window), so drift within the boot cancels; railscope/perftest divides the cell's
railscope median by the median of the boot's perftest runs of that size (before and after the block). Each
boot gives one ratio per cell (the median of its pairs); the table quotes the median over boots.
Latency cells pool all runs of all boots (single runs are bimodal on a loaded host) and divide the medians.
Variants (railscope[NAME], railscope run again with an environment, guest.sh VARIANTS=) are paired with their
reference neighbours the same way. Below the medians, each boot's railscope / ib_write_bw and reference /
ib_write_bw (its median run over the boot's ib_write_bw: what a bandwidth target against perftest is judged by), so the scatter between boots shows.
Packets: the packets both ports sent during a run (rxe: RoCE packets; a host's NIC: port_xmit_packets), per
message (warm-up included), where guest.sh recorded them: what each message costs on the wire whatever the host load.
Bandwidth in MiB/s (perftest's "MB/sec" is 2^20 B/s), latency p50 in microseconds."""
import json
import math
import statistics
import sys
from pathlib import Path


def perftest_value(path, tool):
    """BW average [MiB/s] for *_bw, t_typical [us] for *_lat; None for a run without a finite, positive one
    (perftest prints inf when it could not calibrate its cycle counter, as on a guest clocked by the HPET)."""
    for line in Path(path).read_text(errors="replace").splitlines():
        cols = line.split()
        if len(cols) >= 5 and cols[0].isdigit() and cols[1].isdigit():
            try:
                v = float(cols[3]) if tool.endswith("_bw") else float(cols[4])
                return v if math.isfinite(v) and v > 0 else None
            except ValueError:
                continue
    return None


def netbench_value(path, mode):
    try:
        r = json.loads(Path(path).read_text())["results"][0]
        return r["bytes_per_s"] / 2**20 if mode == "bw" else r["lat_p50_us"]
    except (OSError, ValueError, KeyError, IndexError):
        return None


def packets_per_message(path, mode):
    """Packets both ports sent during the run / messages (bw) or round trips (lat) netbench put on the
    wire: its bw_messages_total / lat_round_trips_total (warm-ups, and a first pass shorter than
    --min-time, included). Runs of a netbench without them: the timed pass and its warm-up only
    (bandwidth warm-up min(16, max(n/8, 1)), latency warm-up min(n/10, 10)), which over-counts a run
    that passed twice."""
    try:
        before, after = [[int(x) for x in line.split()] for line in Path(path + ".pkts").read_text().splitlines()]
        r = json.loads(Path(path).read_text())["results"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    if len(before) != 2 or len(after) != 2:
        return None
    if mode == "bw":
        n = r.get("bw_messages_total") or r["bw_messages"] + min(16, max(r["bw_messages"] // 8, 1))
    else:
        n = r.get("lat_round_trips_total") or r["lat_iters"] + min(r["lat_iters"] // 10, 10)
    return (sum(after) - sum(before)) / n if n else None


def load(folder):
    runs = []
    for line in (Path(folder) / "manifest.txt").read_text().splitlines():
        seq, tool, size, window, f = line.split(maxsplit=4)
        if tool.startswith(("railscope", "reference-")):
            who, mode = tool.rsplit("-", 1)
            if mode == "lat" and window == "1":  # the poll mode (guest.sh LAT_POLLS); 1 = spin, the default
                window = "spin"
            runs.append((int(seq), who, mode, size, window, netbench_value(f, mode), f))
        else:
            runs.append((int(seq), tool, "lat" if tool.endswith("_lat") else "bw", size, window,
                         perftest_value(f, tool), f))
    return runs


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def over_perftest(per, who, tool):
    """Each boot's median `who` run ("rs", "ref") over that boot's `tool` result (None where either is missing)."""
    return [median(c[who]) / c[tool] if c.get(tool) and c[who] else None for c in per]


def fmt(x, width, digits=2):
    return f"{x:>{width}.{digits}f}" if x is not None else f"{'-':>{width}}"


def boot_cells(runs):
    """{(mode, size, window): {"rs": [...], "ref": [...], "pair": [...], "write": x, "send": x}}"""
    cells = {}
    for i, (seq, who, mode, size, window, v, f) in enumerate(runs):
        if not who.startswith(("railscope", "reference")):
            continue
        c = cells.setdefault((mode, size, window), {"rs": [], "ref": [], "pair": []})
        if v is None:
            print(f"WARNING: {f}: no result", file=sys.stderr)
            continue
        key = {"railscope": "rs", "reference": "ref"}.get(who, who)
        c.setdefault(key, []).append(v)
        c.setdefault("pkts:" + key, []).append(packets_per_message(f, mode))
        if who == "reference":
            continue
        same = lambda r: r[1] == "reference" and r[3] == size and r[4] == window and r[5]
        before = [r[5] for r in runs[:i] if same(r)][-1:]
        after = [r[5] for r in runs[i + 1:] if same(r)][:1]
        if before or after:
            c.setdefault("pair" if who == "railscope" else "pair:" + who, []).append(
                v / statistics.mean(before + after))
    for (mode, size, window), c in cells.items():
        for tool in (("ib_write_bw", "ib_send_bw") if mode == "bw" else ("ib_write_lat",)):
            c[tool] = median(r[5] for r in runs if r[1] == tool and r[3] == size)
    return cells


def guest_info(folder, prefix, default):
    """The rest of the line of the boot's guest-info.txt that starts with `prefix`; `default` before
    guest.sh recorded it."""
    try:
        for line in (Path(folder) / "guest-info.txt").read_text(errors="replace").splitlines():
            if line.startswith(prefix):
                return line[len(prefix):].strip()
    except OSError:
        pass
    return default


def bw_poll(folder):
    """netbench's --poll in the boot's bandwidth runs (guest.sh BW_POLL)."""
    return guest_info(folder, "bandwidth runs: --poll ", "spin")


def recvs(folder):
    """Buffers per receive in the boot's bandwidth runs (guest.sh RECVS, netbench --recvs)."""
    return guest_info(folder, "buffers per receive (netbench --recvs): ", "1")


def pinning(folder):
    """The CPUs each end ran on (guest.sh PIN_CPUS: server,client), or "none"."""
    return guest_info(folder, "ends pinned to CPUs (server,client): ", "none")


def steering(folder):
    """rps_cpus of vethA and vethB in the boot (guest.sh WIRE_CPUS): the vCPUs taking each port's packets."""
    return guest_info(folder, "receive steering (rps_cpus of vethA, vethB): ", "1,1")


def softirq_share(folder):
    """Each vCPU's share of the softirq time (rxe's kernel work) during the boot's runs, as "0:97% 1:3%";
    None before guest.sh recorded it."""
    ticks = guest_info(folder, "softirq ticks by vCPU during the runs:", None)
    if not ticks:
        return None
    values = [int(t) for t in ticks.split() if t.isdigit()]
    total = sum(values)
    return " ".join(f"{i}:{100 * v / total:.0f}%" for i, v in enumerate(values)) if total else None


def main(folders):
    polls = sorted({bw_poll(f) for f in folders})
    if len(polls) > 1:
        print(f"ratios.py: these boots' bandwidth runs polled differently ({', '.join(polls)}): "
              "pass the boots of one BW_POLL at a time", file=sys.stderr)
        return 2
    groups = sorted({recvs(f) for f in folders})
    if len(groups) > 1:
        print(f"ratios.py: these boots' bandwidth runs posted different buffers per receive ({', '.join(groups)}): "
              "pass the boots of one RECVS at a time", file=sys.stderr)
        return 2
    pins = sorted({pinning(f) for f in folders})
    if len(pins) > 1:
        print(f"ratios.py: these boots pinned the ends differently ({', '.join(pins)}): "
              "pass the boots of one PIN_CPUS at a time", file=sys.stderr)
        return 2
    wires = sorted({steering(f) for f in folders})
    if len(wires) > 1:
        print(f"ratios.py: these boots steered the ports' packets differently ({', '.join(wires)}): "
              "pass the boots of one WIRE_CPUS at a time", file=sys.stderr)
        return 2
    boots = [boot_cells(load(f)) for f in folders]
    keys = sorted({k for b in boots for k in b},
                  key=lambda k: (k[0], int(k[1][:-1]) << (20 if k[1].endswith("M") else 10)
                                 if k[1][-1] in "KM" else int(k[1]), int(k[2]) if k[2].isdigit() else 0))
    print(f"{len(folders)} boot(s); medians over boots of each boot's median "
          "(bandwidth MiB/s, latency p50 us; ratios railscope/x: > 1 is faster for bandwidth, < 1 for latency); "
          f"bandwidth runs: netbench --poll {polls[0] if polls else 'spin'}, "
          f"--recvs {groups[0] if groups else '1'}; "
          f"ends pinned to CPUs (server,client): {pins[0] if pins else 'none'}; "
          f"rps_cpus of vethA, vethB: {wires[0] if wires else '1,1'}")
    shares = [softirq_share(f) for f in folders]
    if any(shares):
        print("softirq time (rxe's packet work) by vCPU, per boot: " + " | ".join(s or "-" for s in shares))
    head = (f"{'metric':<22} {'railscope':>9} {'reference':>9} {'ib_write':>9} {'ib_send':>9} "
            f"{'rs/ref':>7} {'rs/write':>8} {'rs/send':>8}  runs  per-boot rs/ref")
    print(head)
    for k in keys:
        mode, size, window = k
        per = [b[k] for b in boots if k in b]
        rs = median(median(c["rs"]) for c in per)
        ref = median(median(c["ref"]) for c in per)
        pairs = [median(c["pair"]) for c in per]
        rs_ref = median(pairs)
        cols = ("ib_write_bw", "ib_send_bw") if mode == "bw" else ("ib_write_lat", None)
        pt = [median(c.get(t) for c in per) if t else None for t in cols]
        rs_pt = [median(over_perftest(per, "rs", t)) if t else None for t in cols]
        if mode == "lat":
            # A loaded host makes single latency runs bimodal (a run's median either is the transport's or
            # a scheduler tick's, ~4 ms, whichever plugin): the median of all runs of all boots, pooled.
            rs = median(v for c in per for v in c["rs"])
            ref = median(v for c in per for v in c["ref"])
            rs_ref = rs / ref if rs and ref else None
            rs_pt = [rs / pt[0] if rs and pt[0] else None, None]
            pairs = [v for c in per for v in c["rs"]] + [None] + [v for c in per for v in c["ref"]]
        name = f"bw {size} w{window}" if mode == "bw" else f"lat {size} B ({window})"
        nruns = sum(len(c["rs"]) + len(c["ref"]) for c in per)
        print(f"{name:<22} {fmt(rs, 9)} {fmt(ref, 9)} {fmt(pt[0], 9)} {fmt(pt[1], 9)} {fmt(rs_ref, 7, 3)} "
              f"{fmt(rs_pt[0], 8, 3)} {fmt(rs_pt[1], 8, 3)}  {nruns:>4}  "
              + (" ".join(f"{p:.3f}" if p else "-" for p in pairs) if mode == "bw" else
                 "p50s: " + " ".join(f"{p:.0f}" if p else "| ref:" for p in pairs)))
    variants = sorted({k for b in boots for c in b.values() for k in c if k.startswith("railscope[")})
    if variants:
        print()
        print("railscope variants (same boots, paired with the same reference runs):")
        print(f"{'metric':<22} {'variant':<16} {'value':>9} {'var/ref':>8} {'var/rs':>8}  per-boot var/ref")
        for k in keys:
            per = [b[k] for b in boots if k in b]
            for var in variants:
                vals = [median(c.get(var, [])) for c in per]
                if not any(vals):
                    continue
                pairs = [median(c.get("pair:" + var, [])) for c in per]
                vs_rs = median(median(c.get(var, [])) / median(c["rs"]) if c.get(var) and c["rs"] else None
                               for c in per)
                mode, size, window = k
                if mode == "lat":  # pooled, as above
                    v_all = median(v for c in per for v in c.get(var, []))
                    rs_all = median(v for c in per for v in c["rs"])
                    ref_all = median(v for c in per for v in c["ref"])
                    vals = [v_all]
                    pairs = [v_all / ref_all if v_all and ref_all else None]
                    vs_rs = v_all / rs_all if v_all and rs_all else None
                name = f"bw {size} w{window}" if mode == "bw" else f"lat {size} B ({window})"
                print(f"{name:<22} {var:<16} {fmt(median(vals), 9)} {fmt(median(pairs), 8, 3)} "
                      f"{fmt(vs_rs, 8, 3)}  " + " ".join(f"{p:.3f}" if p else "-" for p in pairs))
    bw_keys = [k for k in keys if k[0] == "bw"]
    if bw_keys:
        # A bandwidth target against perftest is against ib_write_bw of the same boot: each boot's reading, both plugins,
        # so the scatter between boots shows beside the medians above.
        print()
        print("against ib_write_bw of the same boot: median over boots, "
              "then each boot's (its median run / ib_write_bw)")
        print(f"{'metric':<22} {'rs/write':>8} {'ref/write':>9}  per-boot rs/write | ref/write")
        for k in bw_keys:
            mode, size, window = k
            per = [b[k] for b in boots if k in b]
            each = {w: over_perftest(per, w, "ib_write_bw") for w in ("rs", "ref")}
            name = f"bw {size} w{window}"
            print(f"{name:<22} {fmt(median(each['rs']), 8, 3)} {fmt(median(each['ref']), 9, 3)}  "
                  + " ".join(f"{p:.3f}" if p else "-" for p in each["rs"]) + " | "
                  + " ".join(f"{p:.3f}" if p else "-" for p in each["ref"]))
    whos = ["rs", "ref"] + variants
    if any(median(c.get("pkts:" + w, [])) for b in boots for c in b.values() for w in whos):
        print()
        print("Packets sent by both ports (rxe: RoCE packets) per message (bw) or per round trip (lat), "
              "median over runs:")
        print(f"{'metric':<22} " + " ".join(f"{w:>16}" for w in ["railscope", "reference"] + variants))
        for k in keys:
            mode, size, window = k
            name = f"bw {size} w{window}" if mode == "bw" else f"lat {size} B ({window})"
            vals = [median(median(c.get("pkts:" + w, [])) for c in (b[k] for b in boots if k in b)) for w in whos]
            print(f"{name:<22} " + " ".join(f"{v:>16.2f}" if v is not None else f"{'-':>16}" for v in vals))
    return 0 if keys else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
