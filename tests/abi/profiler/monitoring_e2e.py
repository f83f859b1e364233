#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fleet monitoring end to end with real components: Prometheus and node_exporter (Debian's packages) on
loopback, node_exporter's textfile collector reading the folder the profiler plugin writes, and
deploy/prometheus's rules (their durations shortened: `for: 5m` becomes 5 s, `[5m]` 5 s).

Two fake jobs of two ranks each (monitoring_rank: the real plugin through its ABI, one process per rank,
RANK/LOCAL_RANK set as torchrun does), each with its own fake sysfs tree of one RoCE port:
  sick     rank 1 stops progressing while rank 0 waits for it in a collective, and the port counts
           packet loss (out_of_sequence rising);
  healthy  both ranks progress, the port's counters stay still.
Beside each rank 1, the file the net plugin writes for that process naming the port it drives
(railscope_net_process_ports_info, written here: the net plugin needs an RDMA device), joined by pid.
Prometheus must raise exactly RailscopeRankStopped for job sick, rank 1 on this host, naming port
mlx5_1:1, and RailscopePacketLoss for job sick, this host, mlx5_1 port 1 — and nothing for the healthy job.
Usage: monitoring_e2e.py MONITORING_RANK RULES"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from prom_stack import PromStack, missing_tools, put

RANK_BIN, RULES = sys.argv[1], sys.argv[2]
JOB_SECONDS = 45
DEADLINE = 40  # seconds to see the alerts fire


def fake_port(root, loss):
    """A ConnectX RoCE port as the kernel lays it out (the fabric tests' fixture): mlx5_1 port 1, ACTIVE."""
    p = f"{root}/class/infiniband/mlx5_1/ports/1/"
    put(p + "state", "4: ACTIVE\n")
    put(p + "phys_state", "5: LinkUp\n")
    put(p + "link_layer", "Ethernet\n")
    put(p + "rate", "200 Gb/sec (4X HDR)\n")
    for name in ("symbol_error", "link_downed", "port_xmit_discards"):
        put(p + "counters/" + name, "0\n")
    put(p + "counters/port_xmit_data", "1000\n")
    put(p + "hw_counters/out_of_sequence", f"{loss}\n")
    put(p + "hw_counters/np_ecn_marked_roce_packets", "0\n")


def net_ports_file(folder, job, pid):
    """The net plugin's file of process `pid` as it names the ports it drives (no launcher rank: -1)."""
    host = socket.gethostname()
    labels = f'job="{job}",host="{host}",rank="-1",local_rank=""'
    put(f"{folder}/railscope-net-{host}-{pid}.prom",
        "# HELP railscope_net_process_ports_info The ports this process's connections use.\n"
        "# TYPE railscope_net_process_ports_info gauge\n"
        f'railscope_net_process_ports_info{{{labels},pid="{pid}",ports="mlx5_1:1"}} 1\n')


def main():
    missing = missing_tools()
    if missing:
        print(missing)
        return 1
    work = tempfile.mkdtemp(prefix="railscope-monitoring-")
    textfiles = f"{work}/textfiles"
    os.makedirs(textfiles)
    procs = []
    stack = None
    try:
        stack = PromStack(work, RULES, textfiles)
        loss = 0
        for job in ("sick", "healthy"):
            fake_port(f"{work}/sys-{job}", 0)
            for rank, mode in ((0, "wait" if job == "sick" else "progress"), (1, "stop" if job == "sick" else "progress")):
                env = dict(os.environ, RAILSCOPE_PROFILE_PROM=textfiles, RAILSCOPE_PROFILE_PROM_SECONDS="1",
                           RAILSCOPE_PROFILE_FABRIC_SECONDS="1", RAILSCOPE_PROFILE_TAG=job,
                           RAILSCOPE_PROFILE_DIR=f"{work}/profile-{job}", RAILSCOPE_SYSFS_ROOT=f"{work}/sys-{job}",
                           RANK=str(rank), LOCAL_RANK=str(rank))
                for v in ("RAILSCOPE_EXPECTED_BUSBW", "NCCL_IB_HCA", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"):
                    env.pop(v, None)
                procs.append(subprocess.Popen([RANK_BIN, str(rank), mode, str(JOB_SECONDS)], env=env,
                                              stdout=subprocess.DEVNULL, stderr=open(f"{work}/rank-{job}-{rank}.log", "w")))
                if rank == 1:
                    net_ports_file(textfiles, job, procs[-1].pid)
        host = socket.gethostname()
        want = {("RailscopeRankStopped", "sick", host, "1", "", "", "mlx5_1:1"),
                ("RailscopePacketLoss", "sick", host, "0", "mlx5_1", "1", "")}
        start = time.time()
        firing = set()
        alerts = []
        settled = None
        while time.time() - start < DEADLINE:
            loss += 1000  # the sick port keeps losing packets
            put(f"{work}/sys-sick/class/infiniband/mlx5_1/ports/1/hw_counters/out_of_sequence", f"{loss}\n")
            time.sleep(0.5)
            alerts = stack.alerts()
            firing = {(a["labels"]["alertname"], a["labels"].get("job", ""), a["labels"].get("host", ""),
                       a["labels"].get("rank", ""), a["labels"].get("device", ""), a["labels"].get("port", ""),
                       a["labels"].get("ports", ""))
                      for a in alerts if a["state"] == "firing"}
            if want <= firing:
                if settled is None:
                    settled = time.time()  # a few more evaluations: nothing else may join
                elif time.time() - settled > 3:
                    break
        elapsed = time.time() - start
        print(f"after {elapsed:.1f} s, Prometheus's alerts (firing and pending):")
        stack.print_alerts(alerts)
        ok = True
        if firing != want:
            print(f"FAIL: want exactly {sorted(want)}\n      got {sorted(firing)}")
            ok = False
        healthy = [a for a in alerts if a["labels"].get("job") == "healthy"]
        if healthy:
            print(f"FAIL: the healthy job has alerts: {healthy}")
            ok = False
        for r in stack.query('count by (job,rank) ({__name__=~"railscope_.*"})'):
            print(f"  series scraped for job {r['metric'].get('job')} rank {r['metric'].get('rank')}: {r['value'][1]}")
        if not ok:
            for log in sorted(os.listdir(work)):
                if log.endswith(".log"):
                    print(f"--- {log}\n" + open(f"{work}/{log}").read()[-2000:])
        return 0 if ok else 1
    finally:
        if stack:
            stack.stop()
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
