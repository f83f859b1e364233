#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fake ranks 1..N-1 of `railscope preflight` in one process (asyncio): each speaks the real protocol to a
real rank 0 over loopback TCP (tools/preflight/frame_auth.h, rank0_desk.h, written here from their
description): per exchange one connection, rank 0's hello read, this rank's hello sent, one frame sent
(the node report, a step's results, or a poll), one frame received and its HMAC-SHA256 tag checked (the
next step, the verdict, or "come back in N ms"). A fake rank reports no rail, so every link step gives it
no task and it answers with no result. Also samples rank 0's open descriptors and peak RSS from /proc.

Library: run_rank0_and_fakes(). Command line (the benchmark bench/preflight_join/run.sh):
  fake_ranks.py RAILSCOPE WORLD [--links] [--nofile N] [--json | --row]"""
import argparse
import asyncio
import hashlib
import hmac
import json
import os
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

MAGIC = 0x52535033
REPORT, VERDICT, STEP, RESULTS, HELLO, POLL, LATER = 1, 2, 3, 4, 5, 6, 7


class Stats:
    def __init__(self):
        self.verdicts = {}  # rank -> the verdict's JSON
        self.steps = 0
        self.later = 0
        self.exchanges = 0
        self.errors = []


async def exchange(port, key, rank, typ, body):
    """One connection: hellos, (typ, body) sent, rank 0's answer (type, JSON) returned; None when it
    closed without one."""
    for _ in range(600):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            break
        except OSError:
            await asyncio.sleep(0.1)
    else:
        raise RuntimeError(f"rank {rank}: cannot reach rank 0")
    try:
        head = await reader.readexactly(16)
        _, t, _, n = struct.unpack(">IIII", head)
        hello = await reader.readexactly(n)
        if t != HELLO or n != 33:
            raise RuntimeError(f"rank {rank}: rank 0 sent no hello")
        n0, n1 = hello[1:], os.urandom(32)
        out = struct.pack(">IIII", MAGIC, HELLO, rank, 33) + bytes([1]) + n1
        header = struct.pack(">IIII", MAGIC, typ, rank, len(body))

        def tag(from_rank0, header, payload):
            data = (b"railscope.preflight/2 frame" + (b"\x02" if from_rank0 else b"\x01") + (0).to_bytes(8, "big") +
                    n0 + n1 + header + payload)
            return hmac.new(key, data, hashlib.sha256).digest()

        writer.write(out + header + body + tag(False, header, body))
        await writer.drain()
        try:
            head = await reader.readexactly(16)
        except asyncio.IncompleteReadError:
            return None
        _, t, _, n = struct.unpack(">IIII", head)
        got = await reader.readexactly(n + 32)
        if not hmac.compare_digest(got[n:], tag(True, head, got[:n])):
            raise RuntimeError(f"rank {rank}: rank 0's tag does not match")
        return t, json.loads(got[:n])
    finally:
        writer.close()


async def fake_rank(port, key, rank, stats):
    report = {"schema": "railscope.preflight.node/1", "rank": rank, "host": f"fake{rank}", "nics": [],
              "nccl_env": {}, "findings": [], "doctor_exit": 0}
    typ, body = REPORT, json.dumps(report).encode()
    while True:
        stats.exchanges += 1
        got = await exchange(port, key, rank, typ, body)
        if got is None:
            raise RuntimeError(f"rank {rank}: rank 0 closed without an answer")
        t, j = got
        if t == LATER:
            stats.later += 1
            await asyncio.sleep(min(max(j["ms"], 10), 10000) / 1000)
            typ, body = POLL, b"{}"
        elif t == STEP:
            if j["tasks"]:
                raise RuntimeError(f"rank {rank}: a task for a rank without rails")
            stats.steps += 1
            typ = RESULTS
            body = json.dumps({"schema": "railscope.preflight.results/2", "step": j["step"], "results": []}).encode()
        elif t == VERDICT:
            stats.verdicts[rank] = j
            return
        else:
            raise RuntimeError(f"rank {rank}: unexpected message type {t}")


async def all_fakes(port, key, world, stats):
    async def one(rank):
        try:
            await fake_rank(port, key, rank, stats)
        except Exception as e:  # one fake's failure is counted, the others go on
            stats.errors.append(str(e))
    await asyncio.gather(*(one(r) for r in range(1, world)))


class Sampler(threading.Thread):
    """Rank 0's open descriptors (the most seen), VmHWM and CPU time, every 5 ms until it exits."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak_fds, self.peak_rss_kib, self.cpu_s, self.stop = pid, 0, 0, 0.0, False

    def run(self):
        while not self.stop:
            try:
                self.peak_fds = max(self.peak_fds, len(os.listdir(f"/proc/{self.pid}/fd")))
                with open(f"/proc/{self.pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self.peak_rss_kib = max(self.peak_rss_kib, int(line.split()[1]))
                with open(f"/proc/{self.pid}/stat") as f:  # utime, stime: fields 14, 15
                    fields = f.read().rsplit(")", 1)[1].split()
                    self.cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, ValueError):
                pass
            time.sleep(0.005)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_rank0_and_fakes(railscope, world, links=False, nofile=1024, timeout=120, port=None):
    """Rank 0 (`railscope preflight --rank 0`, its open-file limit soft and hard `nofile`) with world-1
    fake ranks. Returns a dict: rc, verdict (rank 0's --json), stderr, seconds (rank 0's start to its
    exit), peak_fds, peak_rss_kib, and the fakes' stats."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < world + 64:  # the fakes' own connections, all at once while they join
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, world + 1024), hard))
    port = port or free_port()
    with tempfile.TemporaryDirectory() as tmp:
        token = os.path.join(tmp, "token")
        with open(os.open(token, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        key = hmac.new(open(token).read().strip().encode(), b"railscope.preflight/2 job key", hashlib.sha256).digest()
        os.makedirs(os.path.join(tmp, "sysfs"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "RANK", "WORLD_SIZE", "MASTER_", "OMPI_", "PMI_", "SLURM_", "RAILSCOPE_PREFLIGHT_"))}
        args = [railscope, "preflight", "--rank", "0", "--world-size", str(world), "--rendezvous",
                f"127.0.0.1:{port}", "--token-file", token, "--sysfs-root", os.path.join(tmp, "sysfs"),
                "--host-name", "fake0", "--timeout", str(timeout), "--json", "--no-latency"]
        if not links:
            args.append("--no-links")
        t0 = time.monotonic()
        rank0 = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)))
        sampler = Sampler(rank0.pid)
        sampler.start()
        stats = Stats()
        collected = {}

        def collect():
            collected["out"], collected["err"] = rank0.communicate()
        reader = threading.Thread(target=collect)
        reader.start()
        asyncio.run(all_fakes(port, key, world, stats))
        reader.join(timeout + 120)
        seconds = time.monotonic() - t0
        sampler.stop = True
        sampler.join()
        out = collected.get("out", "")
        try:
            verdict = json.loads(out)
        except ValueError:
            verdict = None
        return {"rc": rank0.returncode, "verdict": verdict, "stderr": collected.get("err", ""), "seconds": seconds,
                "peak_fds": sampler.peak_fds, "peak_rss_kib": sampler.peak_rss_kib, "cpu_s": sampler.cpu_s,
                "stats": stats}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("railscope")
    ap.add_argument("world", type=int)
    ap.add_argument("--links", action="store_true", help="run the link steps (no task: the fakes have no rail)")
    ap.add_argument("--nofile", type=int, default=1024, help="rank 0's open-file limit, soft and hard")
    ap.add_argument("--json", action="store_true", help="one JSON line of figures")
    ap.add_argument("--row", action="store_true", help="one markdown table row (bench/preflight_join/run.sh)")
    a = ap.parse_args()
    r = run_rank0_and_fakes(a.railscope, a.world, links=a.links, nofile=a.nofile)
    v, s = r["verdict"] or {}, r["stats"]
    row = {"world": a.world, "links": a.links, "nofile": a.nofile, "rc": r["rc"], "seconds": round(r["seconds"], 2),
           "peak_fds": r["peak_fds"], "peak_rss_mib": round(r["peak_rss_kib"] / 1024, 1), "rank0_cpu_s": r["cpu_s"],
           "joined": len(v.get("nodes", [])), "missing": len(v.get("missing", [])), "verdicts": len(s.verdicts),
           "come_back": s.later, "exchanges": s.exchanges, "fake_errors": len(s.errors)}
    if a.row:
        print("| " + " | ".join(str(row[k]) for k in ("world", "links", "seconds", "peak_fds", "peak_rss_mib",
                                                       "rank0_cpu_s", "exchanges", "come_back")) + " |")
    else:
        print(json.dumps(row) if a.json else row)
    ok = r["verdict"] is not None and row["joined"] == a.world and row["verdicts"] == a.world - 1 and not s.errors
    if not ok:
        print(r["stderr"][-2000:], s.errors[:5], file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
