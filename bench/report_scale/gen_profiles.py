#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Synthetic railscope profiles of a large job, in the profiler's format (docs/profile-format.md).

One file per rank, `<host>-<pid>.jsonl`, written as plugin/profiler/core/jsonl_format.cpp writes them:
a header, a `comm` record per communicator, one `coll` record per collective (with `ord`, `seq`,
`waits` of a ring's channel 0), and a `summary` per communicator at finalize.

Communicators, as a Megatron-style job lays them out (8 ranks per host):
  world  all ranks                                   AllReduce every 10th step
  tp     the 8 ranks of a host (one per host)        2 AllReduce per step
  dp     ranks with the same local rank (8 of them)  ReduceScatter + AllGather per step
so a rank's profile holds --colls collectives spread over 521 communicators at 4,096 ranks.

--hang-rank R: the job's last collective is a world AllReduce that rank R never calls: R's profile ends
before it, every other rank writes a coll.hang diagnosis for it and no summary (the job was killed),
so `railscope report` names R (job.rank_absent) and `report --follow` says "hang".

usage: gen_profiles.py OUT_DIR --ranks N --colls C [--hang-rank R] [--jobs J]
"""

import argparse
import multiprocessing
import os
import random
import sys

RANKS_PER_HOST = 8
BASE_NS = 1_764_470_000_000_000_000
STEP_NS = 50_000_000  # one training step: 50 ms


def comm_hash(kind, index):
    # Stable, distinct 64-bit ids per communicator (NCCL's are hashes of the unique id).
    return (0x5E1F000000000000 | (kind << 40) | index) & 0xFFFFFFFFFFFFFFFF


def layout(rank, nranks):
    """The rank's communicators: (name, hash, rank in it, nranks, nnodes, ring prev, ring next)."""
    hosts = (nranks + RANKS_PER_HOST - 1) // RANKS_PER_HOST
    host, local = divmod(rank, RANKS_PER_HOST)
    tp_n = min(RANKS_PER_HOST, nranks)
    comms = {
        "world": (comm_hash(1, 0), rank, nranks, hosts),
        "tp": (comm_hash(2, host), local, tp_n, 1),
        "dp": (comm_hash(3, local), host, hosts, hosts),
    }
    return host, comms


def schedule(colls):
    """The calls of one rank, in order: (comm name, op, count, dtype size, dtype name)."""
    out = []
    step = 0
    while len(out) < colls:
        calls = [("tp", "AllReduce", 4_194_304, 2, "ncclBfloat16"),
                 ("dp", "ReduceScatter", 1_048_576, 4, "ncclFloat32"),
                 ("tp", "AllReduce", 4_194_304, 2, "ncclBfloat16"),
                 ("dp", "AllGather", 1_048_576, 2, "ncclBfloat16")]
        if step % 10 == 9:
            calls.append(("world", "AllReduce", 1, 4, "ncclFloat32"))  # a loss / grad-norm reduction
        for c in calls:
            out.append((step, c))
        step += 1
    out = out[:colls]
    # The job's last collective is a world AllReduce, so that --hang-rank has every rank meet there.
    out[-1] = (out[-1][0], ("world", "AllReduce", 1, 4, "ncclFloat32"))
    return out


def bus_factor(op, n):
    if op == "AllReduce":
        return 2.0 * (n - 1) / n if n > 0 else 0.0
    return (n - 1) / n if n > 0 else 0.0


def write_rank(args):
    out_dir, rank, nranks, colls, hang_rank = args
    host_index, comms = layout(rank, nranks)
    host = f"node-{host_index:04d}"
    pid = 10_000 + rank
    rng = random.Random(rank)
    lines = [
        '{"type":"header","schema":"railscope.profile","version":1,"railscope_version":"0.1.0",'
        f'"hostname":"{host}","pid":{pid},"start_unix_ns":{BASE_NS},"tag":"","net":"",'
        '"net_plugin":"railscope"}\n'
    ]
    for name in ("world", "tp", "dp"):
        h, r, n, nodes = comms[name]
        lines.append(f'{{"type":"comm","comm":"0x{h:016x}","rank":{r},"nranks":{n},"nnodes":{nodes},'
                     f'"name":"","abi":5,"mask":222,"unix_ns":{BASE_NS + 100_000_000}}}\n')
    ords = {k: 0 for k in comms}
    seqs = {}
    written = {k: 0 for k in comms}
    calls = schedule(colls)
    hung = hang_rank is not None
    for i, (step, (cname, op, count, tsize, dtype)) in enumerate(calls):
        h, r, n, nodes = comms[cname]
        ordv = ords[cname]
        ords[cname] += 1
        seq = seqs.get((cname, op), 0)
        seqs[(cname, op)] = seq + 1
        last = i == len(calls) - 1
        nbytes = count * tsize * (n if op in ("AllGather", "ReduceScatter") else 1)
        start = BASE_NS + 200_000_000 + step * STEP_NS + (i % 5) * 8_000_000 + rng.randrange(0, 20_000)
        if rank % 97 == 13:
            start += 150_000  # a few ranks are habitually late: the straggler table names them
        comm = f"0x{h:016x}"
        if hung and last:
            if rank == hang_rank:
                break  # never calls it
            lines.append(
                f'{{"type":"diag","id":"coll.hang","severity":"error","comm":"{comm}","rank":{r},'
                f'"op":"{op}","seq":{seq},"ord":{ordv},"count":{count},"dtype":"{dtype}","bytes":{nbytes},'
                f'"start_unix_ns":{start},"detail":"AllReduce seq {seq} in flight for 300 s; 1 of 2 '
                f'channels done","fix":"see the waiting list","unix_ns":{start + 300_000_000_000},'
                f'"waiting":[{{"ch":0,"peer":{(r + n - 1) % n},"dir":"recv","state":"RecvWait",'
                f'"since_us":300000000,"meaning":"peer_late_or_dead"}}]}}\n')
            break
        time_us = (nbytes / 20e3) * (1.0 + rng.random() * 0.1) + 8.0
        if rank % 211 == 7:
            time_us *= 1.3  # a few slow ranks: the per-size table's min rank
        algbw = nbytes / (time_us * 1e3)
        busbw = algbw * bus_factor(op, n)
        end = start + int(time_us * 1000)
        prev, nxt = (r + n - 1) % n, (r + 1) % n
        chunk = nbytes // max(n, 1)
        steps = 2 * (n - 1) if op == "AllReduce" else n - 1
        pw, nw = rng.random() * time_us * 0.2, rng.random() * time_us * 0.5
        waits = (f'"waits":[{{"ch":0,"peer":{nxt},"dir":"send","steps":{steps},"bytes":{chunk * steps},'
                 f'"peer_wait_us":{pw:.3f},"net_us":{nw:.3f},"gpu_wait_us":{time_us * 0.05:.3f}}},'
                 f'{{"ch":0,"peer":{prev},"dir":"recv","steps":{steps},"bytes":{chunk * steps},'
                 f'"peer_wait_us":{pw * 0.7:.3f},"net_us":{nw * 0.2:.3f},"gpu_wait_us":{time_us * 0.02:.3f}}}'
                 '],"waits_dropped":0')
        lines.append(
            f'{{"type":"coll","comm":"{comm}","rank":{r},"nranks":{n},"nnodes":{nodes},"seq":{seq},'
            f'"op":"{op}","dtype":"{dtype}","count":{count},"bytes":{nbytes},"ord":{ordv},"root":-1,'
            f'"algo":"RING","proto":"SIMPLE","channels":2,"graph":false,"start_unix_ns":{start},'
            f'"end_unix_ns":{end},"time_us":{time_us:.6g},"timing":"gpu","algbw_gbs":{algbw:.6g},'
            f'"busbw_gbs":{busbw:.6g},"complete":true,{waits}}}\n')
        written[cname] += 1
    if not hung:
        drops = '"coll":0,"p2p":0,"proxy_op":0,"proxy_step":0,"kernel_ch":0,"net":0,"queue":0'
        end_ns = BASE_NS + 200_000_000 + (calls[-1][0] + 2) * STEP_NS
        for name in ("world", "tp", "dp"):
            h, r, _, _ = comms[name]
            lines.append(f'{{"type":"summary","comm":"0x{h:016x}","rank":{r},"colls":{written[name]},'
                         f'"p2ps":0,"incomplete":0,"dropped":{{{drops}}},"pxn_proxy_ops":0,'
                         f'"unix_ns":{end_ns}}}\n')
    path = os.path.join(out_dir, f"{host}-{pid}.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return sum(len(s) for s in lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--colls", type=int, required=True, help="collectives per rank")
    p.add_argument("--hang-rank", type=int, default=None)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    if a.ranks < 2 or a.colls < 1 or (a.hang_rank is not None and not 0 <= a.hang_rank < a.ranks):
        sys.exit("gen_profiles.py: need --ranks >= 2, --colls >= 1, 0 <= --hang-rank < --ranks")
    os.makedirs(a.out_dir, exist_ok=True)
    work = [(a.out_dir, r, a.ranks, a.colls, a.hang_rank) for r in range(a.ranks)]
    with multiprocessing.Pool(a.jobs) as pool:
        total = sum(pool.imap_unordered(write_rank, work, chunksize=16))
    print(f"{a.ranks} ranks x {a.colls} collectives: {total} bytes in {a.out_dir}")


if __name__ == "__main__":
    main()
