#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guest side of scripts/demo.sh's netbench step (one test-bed boot): `railscope netbench --pair
# rxe0,rxe1` (ARGS), then ib_write_bw and ib_send_bw on the same pair in the same boot at a few sizes,
# and one table: railscope's rows with perftest's bandwidth beside them and the ratios, so a reader
# knows what the emulated figures mean (soft-RoCE under QEMU/TCG: only ratios within a boot compare).
# usage: demo-netbench.sh RAILSCOPE_CLI [NETBENCH ARGS...]      env: PERFTEST_SIZES="64K 1M 4M"
set -uo pipefail
. "$TESTBED_LIB"
RS=$1; shift
out=$TESTBED_SCRATCH/demo-netbench
mkdir -p "$out"
"$RS" netbench --pair rxe0,rxe1 "$@" --json > "$out/netbench.json" || echo "netbench exited $?"
tb_gid_index_v4 rxe0 g0
tb_gid_index_v4 rxe1 g1
port=18600
bytes() { case $1 in *M) echo $(( ${1%M} << 20 ));; *K) echo $(( ${1%K} << 10 ));; *) echo "$1";; esac; }
for size in ${PERFTEST_SIZES:-64K 1M 4M}; do
    b=$(bytes "$size")
    n=$(( (64 << 20) / b )); (( n < 16 )) && n=16; (( n > 2000 )) && n=2000
    for tool in ib_write_bw ib_send_bw; do
        port=$((port + 1))
        timeout 120 "$tool" -d rxe0 -x "$g0" -s "$b" -n "$n" -F -p $port > "$out/$tool-$b.server" 2>&1 &
        spid=$!
        tb_wait_tcp_listen $port 30
        timeout 120 "$tool" -d rxe1 -x "$g1" -s "$b" -n "$n" -F -p $port 10.0.0.1 > "$out/$tool-$b.txt" 2>&1
        wait $spid
    done
done
python3 - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])

def perftest_gbps(tool, size):  # perftest's BW average is in MB/sec = 2^20 bytes/s
    p = out / f"{tool}-{size}.txt"
    if not p.exists():
        return None
    for line in p.read_text(errors="replace").splitlines():
        c = line.split()
        if len(c) >= 5 and c[0].isdigit() and c[1].isdigit():
            try:
                return float(c[3]) * 2**20 / 1e9
            except ValueError:
                pass
    return None

try:
    j = json.loads((out / "netbench.json").read_text())
except (OSError, ValueError):
    sys.exit("no netbench results")
print(f"# railscope netbench {j['client_device']} -> {j['server_device']} beside perftest, same boot "
      "(GB/s = 10^9 bytes/s; ratio = railscope / perftest)")
print(f"# {'size':>8} {'msgs':>6} {'GB/s':>8} {'p50 us':>8}  {'ib_write_bw':>11} {'ratio':>6}  "
      f"{'ib_send_bw':>10} {'ratio':>6}")
for r in j["results"]:
    s = r["size"]
    name = f"{s >> 20}M" if s >= 1 << 20 else f"{s >> 10}K" if s >= 1 << 10 else str(s)
    gb = r.get("gbs")
    cols = [f"{name:>10}", f"{r['bw_messages']:>6}", f"{gb:8.4f}" if gb else f"{'-':>8}",
            f"{r['lat_p50_us']:8.1f}" if "lat_p50_us" in r else f"{'-':>8}"]
    for tool, width in (("ib_write_bw", 11), ("ib_send_bw", 10)):
        ref = perftest_gbps(tool, s)
        cols.append(f" {ref:{width}.4f} {gb / ref:6.2f}" if ref and gb else f" {'':>{width}} {'':>6}")
    mark = "   (few samples)" if r.get("few_samples") else ""
    print(" ".join(cols) + mark)
PY
