#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`railscope preflight` end to end on this host: several processes over loopback TCP, each with its own
fake sysfs tree (--sysfs-root) and --host-name, started with a torchrun-style environment or flags.
Cases: healthy (no preflight finding; with the job's secret, and without it on loopback), a rail rate that
differs on one node, a rank that never starts, connections that never become a rank (a connect-and-close
probe beside a healthy run; without a secret: malformed frames; with one: strangers claiming rank 1 with
another secret or none, a modified and a replayed frame: dropped at info severity, no error), findings sent by rank (a host named "r" gets none of another's), usage errors (an --html
page that cannot be written, a token file others can read, no secret beyond loopback), and links measured
through netbench's loopback TCP test plugin (--html: its heat map; one rank given a plugin that does not
load: link.failed names the pair).
Usage: preflight_cli_test.py RAILSCOPE LOOPBACK_PLUGIN"""
import hashlib
import hmac
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import time

CLI = sys.argv[1]
LOOPBACK = sys.argv[2]
FAILS = []
TOKEN = os.urandom(24).hex()  # the job's secret of most cases (RAILSCOPE_PREFLIGHT_TOKEN)
MAGIC = 0x52535033


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def put(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fake_node(root, devs):
    """devs: (name, netdev, ipv4, rate text) per RoCE device."""
    for name, netdev, ip, rate in devs:
        p = f"class/infiniband/{name}/ports/1/"
        put(root, f"class/infiniband/{name}/node_guid", "b8a4:02ff:fe11:2233\n")
        put(root, f"class/infiniband/{name}/fw_ver", "20.1.1\n")
        put(root, p + "state", "4: ACTIVE\n")
        put(root, p + "phys_state", "5: LinkUp\n")
        put(root, p + "link_layer", "Ethernet\n")
        put(root, p + "rate", rate + "\n")
        put(root, p + "lid", "0x0\n")
        put(root, p + "gids/0", "fe80:0000:0000:0000:b8a4:02ff:fe11:2233\n")
        a, b, c, d = (int(x) for x in ip.split("."))
        put(root, p + "gids/1", f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}\n")
        for i in (0, 1):
            put(root, p + f"gid_attrs/types/{i}", "RoCE v2\n")
            put(root, p + f"gid_attrs/ndevs/{i}", netdev + "\n")
        put(root, f"class/net/{netdev}/mtu", "1500\n")


def free_port():
    # Below the kernel's ephemeral range: a port the kernel handed out with bind(0) and that was closed
    # again is the next outgoing connection's local port as soon as any other test (ctest -j2 runs the
    # TCP engine's tests beside this one) connects, before rank 0 binds it.
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(max(1024, low - 12000), max(1025, low))
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            s.close()
    raise SystemExit("no free port below the ephemeral range")


def connect(port, timeout):
    """A connection to rank 0's port on 127.0.0.1, tried again while rank 0 starts (10 s at most)."""
    for _ in range(100):
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=timeout)
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


def read_exactly(sock, n):
    data = b""
    while len(data) < n:
        got = sock.recv(n - len(data))
        if not got:
            return None
        data += got
    return data


class Peer:
    """A connection to rank 0 speaking the frames of tools/preflight/frame_auth.h, written here from its
    description: hellos with nonces, then frames tagged with HMAC-SHA256 under the key derived from token
    (none: untagged)."""

    def __init__(self, port, token=None, rank=1, hello=True):
        self.s = connect(port, 30)
        self.key = hmac.new(token.encode(), b"railscope.preflight/2 job key", hashlib.sha256).digest() if token else None
        self.rank, self.sent, self.got = rank, 0, 0
        head = read_exactly(self.s, 16)
        _, typ, _, n = struct.unpack(">IIII", head)
        body = read_exactly(self.s, n)
        assert typ == 5 and n == 33, (typ, n)
        self.rank0_authenticated = body[0] == 1
        self.n0, self.n1 = body[1:], os.urandom(32)
        if hello:
            self.send_quietly(struct.pack(">IIII", MAGIC, 5, rank, 33) + bytes([1 if self.key else 0]) + self.n1)

    def tag(self, from_rank0, seq, header, payload):
        data = (b"railscope.preflight/2 frame" + (b"\x02" if from_rank0 else b"\x01") + seq.to_bytes(8, "big") +
                self.n0 + self.n1 + header + payload)
        return hmac.new(self.key, data, hashlib.sha256).digest()

    def frame(self, typ, body):
        """The bytes of the next frame this peer sends."""
        header = struct.pack(">IIII", MAGIC, typ, self.rank, len(body))
        out = header + body + (self.tag(False, self.sent, header, body) if self.key else b"")
        self.sent += 1
        return out

    def send(self, typ, obj):
        self.s.sendall(self.frame(typ, json.dumps(obj).encode()))

    def receive(self):
        """(type, JSON) of rank 0's next frame, its tag checked; None at the end."""
        head = read_exactly(self.s, 16)
        if head is None:
            return None
        _, typ, rank, n = struct.unpack(">IIII", head)
        body = read_exactly(self.s, n + (32 if self.key else 0))
        if self.key:
            assert hmac.compare_digest(body[n:], self.tag(True, self.got, head, body[:n])), "rank 0's tag"
        self.got += 1
        return typ, json.loads(body[:n])

    def send_quietly(self, data):
        """A stranger's send: rank 0 may have refused and closed the connection already."""
        try:
            self.s.sendall(data)
        except OSError:
            pass

    def close(self):
        self.s.close()


def report_of(root, host):
    """The node report `railscope preflight` sends from the fake sysfs tree root (run as a world of one)."""
    return json.loads(subprocess.run([CLI, "preflight", "--sysfs-root", root, "--host-name", host, "--rank", "0",
                                      "--world-size", "1", "--no-links", "--json"],
                                     capture_output=True, text=True).stdout)["nodes"][0]


def node_trees(tmp, n, slow_rank=-1):
    roots = []
    for r in range(n):
        root = os.path.join(tmp, f"node{r}")
        devs = []
        for rail in range(2):
            rate = "5 Gb/sec (1X DDR)" if (r == slow_rank and rail == 1) else "10 Gb/sec (1X QDR)"
            devs.append((f"rxe{2 * r + rail}", f"veth{r}_{rail}", f"10.0.{rail}.{r + 1}", rate))
        fake_node(root, devs)
        roots.append(root)
    return roots


def start(rank, world, port, root, extra=(), env_style=True, timeout=20, links=False, hca=None, more_env=None, token=TOKEN,
          host=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "RANK", "WORLD_SIZE", "MASTER_", "OMPI_", "PMI_", "SLURM_", "RAILSCOPE_PREFLIGHT_"))}
    if token:
        env["RAILSCOPE_PREFLIGHT_TOKEN"] = token
    args = [CLI, "preflight", "--sysfs-root", root, "--host-name", host or f"host{chr(65 + rank)}", "--timeout", str(timeout)]
    if not links:
        args.append("--no-links")
    if env_style:
        env.update(RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    else:
        args += ["--rank", str(rank), "--world-size", str(world), "--rendezvous", f"127.0.0.1:{port}"]
    env["NCCL_IB_HCA"] = hca or f"=rxe{2 * rank},rxe{2 * rank + 1}"  # per node, not compared
    env.update(more_env or {})
    return subprocess.Popen(args + list(extra), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs):
    outs = []
    for p in procs:
        o, e = p.communicate(timeout=120)
        outs.append((p.returncode, o, e))
    return outs


def preflight_ids(verdict):
    return [f["id"] for f in verdict["findings"] if f["id"].startswith(("preflight.", "link."))]


with tempfile.TemporaryDirectory() as tmp:
    # 1. Healthy, torchrun-style environment, 3 ranks, rank 0 started last.
    roots = node_trees(tmp, 3)
    port = free_port()
    procs = [start(r, 3, port, roots[r], ["--json"] if r == 0 else []) for r in (1, 2)]
    time.sleep(0.5)
    procs.insert(0, start(0, 3, port, roots[0], ["--json"]))
    outs = finish(procs)
    v = json.loads(outs[0][1])
    check(v["schema"] == "railscope.preflight/2" and v["joined"] == 3 and v["missing"] == [], "healthy: 3 of 3 joined")
    check(v["launcher"] == "torchrun", "healthy: launcher torchrun")
    check(preflight_ids(v) == [], f"healthy: no preflight finding ({preflight_ids(v)})")
    check([n["host"] for n in v["nodes"]] == ["hostA", "hostB", "hostC"], "healthy: nodes by rank")
    check([c["device"] for c in v["nodes"][1]["nics"]] == ["rxe2", "rxe3"], "healthy: hostB's rails rxe2, rxe3")
    check(all(rc == v["exit_code"] for rc, _, _ in outs), f"healthy: every rank exits {v['exit_code']}: {[o[0] for o in outs]}")
    check(outs[1][1].startswith("railscope preflight: rank 1 (hostB): cluster"), "healthy: rank 1 prints its line: " + outs[1][1][:80])
    check(v["authenticated"] is True and not any("unauthenticated" in e or "refused" in e for _, _, e in outs),
          f"healthy: authenticated with the job's secret, nothing on stderr ({[e.strip()[-120:] for _, _, e in outs]})")

    # 1a. No secret on any rank: loopback only, said plainly on stderr, the same verdict.
    port = free_port()
    outs = finish([start(r, 2, port, roots[r], ["--json"] if r == 0 else [], token=None) for r in range(2)])
    v = json.loads(outs[0][1])
    check(v["joined"] == 2 and preflight_ids(v) == [] and v["authenticated"] is False, f"no secret: joined, no finding ({preflight_ids(v)})")
    check(all("this run is unauthenticated" in e for _, _, e in outs) and "listening on loopback only" in outs[0][2],
          f"no secret: every rank says the run is unauthenticated ({[e.strip()[-160:] for _, _, e in outs]})")
    # One rank with the secret, one without: its connection dropped and named, the rank missing; it says why.
    port = free_port()
    outs = finish([start(0, 2, port, roots[0], ["--json"], timeout=4), start(1, 2, port, roots[1], token=None, timeout=4)])
    v = json.loads(outs[0][1])
    check(v["missing"] == [1] and v["exit_code"] == 2 and
          any("has no job secret" in f["detail"] for f in v["findings"] if f["id"] == "preflight.connection_dropped"),
          f"secret on rank 0 only: rank 1 dropped, named and missing ({v['findings'][:2]})")
    check(outs[1][0] == 2 and "rank 0 holds a job secret and this process has none" in outs[1][2], f"secret on rank 0 only: rank 1 says why ({outs[1][2].strip()[-200:]})")

    # 1a'. A port scanner or a load balancer's health check beside a healthy run: connect and close, and a
    #      connection that sends a few bytes and closes. Both logged and counted at info severity; the
    #      cluster is healthy and every rank exits 0.
    port = free_port()
    r0 = start(0, 2, port, roots[0], ["--json"])
    connect(port, 5).close()
    probe = connect(port, 5)
    probe.sendall(b"PING\r\n")
    probe.close()
    outs = finish([r0, start(1, 2, port, roots[1])])
    v = json.loads(outs[0][1])
    dropped = [f for f in v["findings"] if f["id"] == "preflight.connection_dropped"]
    check(v["joined"] == 2 and v["exit_code"] == 0 and [rc for rc, _, _ in outs] == [0, 0],
          f"probes: the healthy cluster exits 0 ({[rc for rc, _, _ in outs]}, {preflight_ids(v)})")
    check(len(dropped) == 1 and dropped[0]["severity"] == "info" and dropped[0]["detail"].startswith("2 connection(s)") and
          preflight_ids(v) == ["preflight.connection_dropped"], f"probes: counted at info severity ({dropped})")
    check(outs[0][2].count("dropped a connection") == 2 and "refused" not in outs[0][2],
          f"probes: each logged on rank 0's stderr ({outs[0][2].strip()[-300:]})")

    # 1b. NCCL_* values the same on both ranks, one in Latin-1 and one longer than a report's 255-byte cap with
    #     non-ASCII in it: rank 0 prints its verdict (nlohmann's dump() threw on such bytes) and the two
    #     ranks' values agree (no finding).
    port = free_port()
    odd = {"NCCL_TEST_LATIN1": "caf\udce9", "NCCL_TEST_LONG": "/" + "\u00e9" * 300}
    outs = finish([start(r, 2, port, roots[r], ["--json"] if r == 0 else [], more_env=odd) for r in range(2)])
    v = json.loads(outs[0][1]) if outs[0][1].startswith("{") else {}
    check(v.get("joined") == 2, f"odd env: rank 0 prints its verdict ({outs[0][0]}, {outs[0][2].strip()[-200:]})")
    check(preflight_ids(v) == [] and outs[0][0] == outs[1][0], f"odd env: no finding ({preflight_ids(v)})")
    env0 = v["nodes"][0]["nccl_env"] if v else {}
    check(env0.get("NCCL_TEST_LATIN1") == "caf\ufffd" and len(env0.get("NCCL_TEST_LONG", "").encode()) == 255,
          f"odd env: well-formed within the cap ({env0.get('NCCL_TEST_LATIN1')!r})")

    # 2. hostC's rail 1 trained at half the rate; flags instead of the environment.
    roots = node_trees(os.path.join(tmp, "slow"), 3, slow_rank=2)
    port = free_port()
    procs = [start(r, 3, port, roots[r], ["--json"] if r == 0 else [], env_style=False) for r in range(3)]
    outs = finish(procs)
    v = json.loads(outs[0][1])
    rate = [f for f in v["findings"] if f["id"] == "preflight.rail_rate"]
    check(len(rate) == 1 and "hostC/rxe5:1 is 5000" in rate[0]["detail"], f"rail rate: names hostC/rxe5:1 ({rate})")
    check(v["exit_code"] == 2 and outs[2][0] == 2, "rail rate: exit 2 at rank 0 and rank 2")
    check("[preflight.rail_rate]" in outs[2][1], "rail rate: rank 2's line carries its finding")

    # 3. Rank 2 never starts: named after --timeout, the others reported.
    port = free_port()
    t0 = time.time()
    procs = [start(r, 3, port, roots[r], ["--json"] if r == 0 else [], timeout=3) for r in range(2)]
    outs = finish(procs)
    v = json.loads(outs[0][1])
    miss = [f for f in v["findings"] if f["id"] == "preflight.node_missing"]
    check(v["missing"] == [2] and len(miss) == 1 and "rank 2 of 3 never joined" in miss[0]["detail"], f"missing: rank 2 named ({miss})")
    check(v["joined"] == 2 and outs[0][0] == 2 and outs[1][0] == 2, "missing: exit 2, rank 1 gets the verdict")
    check(time.time() - t0 < 15, "missing: done within the timeout")

    # 4. Hostile connections to rank 0's port (no secret: untagged frames), then the real rank 1.
    port = free_port()
    r0 = start(0, 2, port, roots[0], ["--json"], timeout=15, token=None)
    def hostile(payload, hello=True):
        if hello:
            p = Peer(port)
            p.send_quietly(payload)
            p.close()
        else:
            s = connect(port, 5)
            try:
                s.sendall(payload)
            except OSError:
                pass
            s.close()
    good = report_of(roots[1], "x")
    frame = lambda typ, body, rank=1: struct.pack(">IIII", MAGIC, typ, rank, len(body)) + body
    hostile(b"GET / HTTP/1.0\r\n\r\n", hello=False)
    hostile(struct.pack(">III", 0x52535046, 1, 20) + b"{" + b" " * 18 + b"}", hello=False)
    hostile(struct.pack(">IIII", MAGIC, 1, 1, 1 << 30))
    hostile(frame(1, b"{not json"))
    hostile(frame(1, json.dumps(dict(good, rank=7)).encode(), rank=7))
    hostile(frame(1, json.dumps(dict(good, host="a\u0001b", rank=1)).encode()))
    r1 = start(1, 2, port, roots[1], timeout=15, token=None)
    outs = finish([r0, r1])
    v = json.loads(outs[0][1])
    refused = [f["detail"] for f in v["findings"] if f["id"] == "preflight.node_refused"]
    dropped = [f["detail"] for f in v["findings"] if f["id"] == "preflight.connection_dropped"]
    check(v["joined"] == 2 and v["missing"] == [], "hostile: the real rank 1 still joined")
    for why in ("bad magic", "an older railscope preflight", "over the cap", "not JSON", "host: control characters"):
        check(len(dropped) == 1 and why in dropped[0], f"hostile: dropped and named: {why}")
    check(len(refused) == 1 and "rank 7 is outside" in refused[0] and v["exit_code"] == 2,
          f"hostile: a well-formed report for rank 7 of a world of 2 is refused, an error ({refused})")
    check(outs[0][2].count("dropped a connection") == 5 and outs[0][2].count("refused a connection") == 1,
          "hostile: each logged on stderr")

    # 4b. With the job's secret: strangers that connect first and claim rank 1 (hostB, a forged memlock
    #     error, NCCL_PROTO=LL) with no secret, another secret, no hello; a frame of a real rank modified
    #     after its tag, and one replayed on another connection: all refused, logged, none counted; the
    #     real rank 1 joins and the verdict carries nothing of theirs.
    port = free_port()
    r0 = start(0, 2, port, roots[0], ["--json"], timeout=20)
    forged = dict(good, rank=1, host="hostB", nccl_env=dict(good["nccl_env"], NCCL_PROTO="LL"),
                  findings=[{"id": "memlock.too_low", "severity": "error", "detail": "forged"}], doctor_exit=2)
    body = json.dumps(forged).encode()
    for token, hello in ((None, True), (os.urandom(24).hex(), True), (TOKEN, False)):
        stranger = Peer(port, token=token, hello=hello)
        stranger.send_quietly(stranger.frame(1, body))
        stranger.close()
    modified = Peer(port, token=TOKEN)
    recorded = modified.frame(1, body)
    modified.send_quietly(recorded[:100] + bytes([recorded[100] ^ 1]) + recorded[101:])
    modified.close()
    replay = Peer(port, token=TOKEN)
    replay.send_quietly(recorded)  # sealed under the previous connection's nonces
    replay.close()
    r1 = start(1, 2, port, roots[1], timeout=20)
    outs = finish([r0, r1])
    v = json.loads(outs[0][1])
    refused = [f["detail"] for f in v["findings"] if f["id"] == "preflight.node_refused"]
    dropped = [f["detail"] for f in v["findings"] if f["id"] == "preflight.connection_dropped"]
    check(v["joined"] == 2 and v["missing"] == [] and v["authenticated"] and outs[1][0] == v["exit_code"],
          f"strangers: the real rank 1 joined ({v['joined']}, {outs[1][2].strip()[-200:]})")
    check(not any(f["id"] in ("memlock.too_low", "preflight.nccl_env") for f in v["findings"]) and
          not any(f["detail"] == "forged" for n in v["nodes"] for f in n["findings"]) and
          "NCCL_PROTO" not in v["nodes"][1]["nccl_env"] and v["nodes"][1]["host"] == "hostB",
          f"strangers: nothing forged in the verdict ({[f['id'] for f in v['findings']]})")
    check(refused == [] and len(dropped) == 1 and dropped[0].startswith("5 connection(s)") and
          dropped[0].count("authentication code does not match") == 3 and dropped[0].count("has no job secret") == 1 and
          dropped[0].count("before the hello") == 1, f"strangers: five dropped, each named ({dropped})")
    check(outs[0][2].count("dropped a connection") == 5 and outs[0][0] == 0 and v["exit_code"] == 0,
          f"strangers: each logged on stderr, the healthy cluster exits 0 ({outs[0][0]})")
    check("[memlock.too_low]" not in outs[1][1] and "NCCL_PROTO" not in outs[1][1], f"strangers: rank 1's line carries nothing forged ({outs[1][1]})")

    # 4c. Findings go to their rank: hostB sets NCCL_PROTO=LL; the rank named "r" (a substring of the
    #     finding's words) gets nothing of it, hostB gets it.
    port = free_port()
    roots = node_trees(os.path.join(tmp, "byrank"), 3)
    outs = finish([start(r, 3, port, roots[r], ["--json"] if r == 0 else [], host="r" if r == 2 else None,
                         more_env={"NCCL_PROTO": "LL"} if r == 1 else None) for r in range(3)])
    v = json.loads(outs[0][1])
    env_f = [f["detail"] for f in v["findings"] if f["id"].startswith("preflight.")]
    check(len(env_f) == 1 and "NCCL_PROTO of hostB is LL" in env_f[0], f"by rank: one preflight.nccl_env naming hostB ({env_f})")
    check("[preflight.nccl_env] NCCL_PROTO of hostB" in outs[1][1], f"by rank: hostB's line carries it ({outs[1][1]})")
    check(outs[2][1].startswith("railscope preflight: rank 2 (r): cluster") and "hostB" not in outs[2][1],
          f"by rank: r's line carries nothing of hostB's ({outs[2][1]})")

    # 5. Usage errors: exit 64 (EX_USAGE) with one clear line; an --html page that cannot be written: 73
    # (EX_CANTCREAT), before anything is measured.
    open_token = os.path.join(tmp, "token.open")
    with open(open_token, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(open_token, 0o644)
    lone = ["--rank", "0", "--world-size", "2", "--timeout", "1", "--no-links", "--rendezvous", f"127.0.0.1:{free_port()}"]
    for env, args, text in (({}, ["--token-file", open_token], "mode 0644 lets group or others read"),
                            ({"RAILSCOPE_PREFLIGHT_TOKEN": "short"}, [], "RAILSCOPE_PREFLIGHT_TOKEN: the job's token is 5 bytes"),
                            ({}, lone + ["--bind", "0.0.0.0"], "is not a loopback address and there is no job secret"),
                            ({"RAILSCOPE_PREFLIGHT_TOKEN": TOKEN}, ["--unauthenticated"], "--unauthenticated and a job secret"),
                            ({"RANK": "5", "WORLD_SIZE": "2", "MASTER_ADDR": "h"}, [], "not below the world size"),
                            ({"RANK": "0"}, [], "WORLD_SIZE is not"),
                            ({}, ["--world-size", "2"], "no rank")):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE", "MASTER_", "OMPI_", "PMI_", "SLURM_", "RAILSCOPE_PREFLIGHT_"))}
        e.update(env)
        p = subprocess.run([CLI, "preflight", "--sysfs-root", roots[0]] + args, env=e, capture_output=True, text=True)
        check(p.returncode == 64 and text in p.stderr and "usage error" in p.stderr, f"usage: {text} -> exit 64 ({p.returncode}: {p.stderr.strip()})")
    p = subprocess.run([CLI, "preflight", "--sysfs-root", roots[0], "--rank", "0", "--world-size", "1", "--html", "/nonexistent/dir/p.html"],
                       env=e, capture_output=True, text=True)
    check(p.returncode == 73 and "--html /nonexistent/dir/p.html: cannot write there" in p.stderr and p.stdout == "",
          f"--html unwritable -> exit 73, nothing on stdout ({p.returncode}: {p.stderr.strip()})")
    # Their twins: the same token file private, and --unauthenticated beyond loopback (rank 1 never comes).
    os.chmod(open_token, 0o600)
    e = {k: v for k, v in os.environ.items() if not k.startswith(("RANK", "WORLD_SIZE", "MASTER_", "RAILSCOPE_PREFLIGHT_"))}
    for args, what in ((["--token-file", open_token, "--bind", "0.0.0.0"], "a private --token-file"),
                       (["--unauthenticated", "--bind", "0.0.0.0"], "--unauthenticated")):
        p = subprocess.run([CLI, "preflight", "--sysfs-root", roots[0], "--json"] + lone + args,
                           env=e, capture_output=True, text=True)
        v = json.loads(p.stdout) if p.stdout.startswith("{") else {}
        check(v.get("missing") == [1] and "usage error" not in p.stderr and v.get("authenticated") == (what != "--unauthenticated"),
              f"usage twin: {what} listens on every address ({p.returncode}, {p.stderr.strip()[-200:]})")

    # 6. Links through netbench and the loopback TCP test plugin: two nodes whose one NIC "lo" has the
    #    addresses 127.0.0.1 / 127.0.0.2 (the netbench out-of-band TCP binds and connects to them).
    lo_roots = []
    for r in range(2):
        root = os.path.join(tmp, f"lo{r}")
        fake_node(root, [("lo", "lo", f"127.0.0.{r + 1}", "10 Gb/sec (1X QDR)")])
        put(root, "class/infiniband/lo/ports/1/counters/symbol_error", "0\n")  # sampled around each test
        lo_roots.append(root)
    link_args = ["--plugin", LOOPBACK, "--link-size", "65536", "--link-bytes", "4194304", "--link-timeout", "20",
                 "--min-line-percent", "0"]
    port = free_port()
    page = os.path.join(tmp, "preflight.html")
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("keep me\n")
    os.symlink(victim, page + ".tmp")  # planted at the name the page was once written through
    outs = finish([start(r, 2, port, lo_roots[r], link_args + (["--json", "--html", page] if r == 0 else []), links=True, hca="=lo") for r in range(2)])
    v = json.loads(outs[0][1])
    links = v["links"]
    html = open(page).read() if os.path.exists(page) else ""
    check(html.count('class="rail-heatmap"') == 1 and html.count('<rect class="cell') == 2, "links: --html writes one heat map with 2 cells")
    check(open(victim).read() == "keep me\n", "links: --html writes nothing through a link planted at <page>.tmp")
    check(v["links_measured"] and len(links) == 2, f"links: two directions measured ({links})")
    check({(l["from"], l["to"]) for l in links} == {("hostA/lo:1", "hostB/lo:1"), ("hostB/lo:1", "hostA/lo:1")},
          "links: hostA -> hostB and back")
    check(all(l["error"] is None and l["gbs"] > 0 for l in links), "links: bandwidth measured")
    check(any(l["lat_us"] for l in links), "links: latency measured")
    check(all(l["counters"][e] and l["counters"][e]["port"] == "lo:1" and l["counters"][e]["readable"] and l["counters"][e]["moved"] == {}
              for l in links for e in ("from", "to")), f"links: both ends' counters sampled, nothing moved ({links[0]['counters']})")
    check(preflight_ids(v) == [] and outs[0][0] == outs[1][0], f"links: healthy, no finding ({preflight_ids(v)})")
    # Progress in a log (stderr is a pipe here): one line per step at rank 0; the netbench children's own
    # chatter ("netbench server: waiting on ...") reaches nobody below --log-level debug.
    steps = [line for line in outs[0][2].splitlines() if line.startswith("railscope: info: preflight: step ")]
    check(len(steps) >= 1 and all(" of 2 links measured" in line for line in steps) and "step 1 of " in steps[0],
          f"links: one progress line per step ({outs[0][2].strip()[-400:]})")
    check(all("waiting on" not in e for _, _, e in outs), f"links: no child chatter ({[e.strip()[-200:] for _, _, e in outs]})")
    # Rank 1 cannot load its plugin: every link fails and is named.
    port = free_port()
    bad = list(link_args)
    bad[1] = "/nonexistent/libnccl-net-none.so"
    bad[bad.index("--link-timeout") + 1] = "3"
    bad.append("--no-latency")
    good_args = bad[:1] + [LOOPBACK] + bad[2:]
    outs = finish([start(0, 2, port, lo_roots[0], good_args + ["--json"], links=True, hca="=lo"),
                   start(1, 2, port, lo_roots[1], bad, links=True, hca="=lo")])
    v = json.loads(outs[0][1])
    failed = [f["detail"] for f in v["findings"] if f["id"] == "link.failed"]
    check(len(failed) == 2 and any(d.startswith("hostA/lo:1 → hostB/lo:1 (rail 0): hostB: netbench server on lo: exit status") for d in failed),
          f"links: a plugin that does not load fails both links, named ({failed})")
    check(outs[0][0] == 2 and outs[1][0] == 2, "links: exit 2 everywhere")
    # A rank that joined and answers a link step with a message of another shape (its "schema" a number,
    # which nlohmann's json::value() throws on): rank 0 names the rank and ends with its verdict.
    port = free_port()
    r0 = start(0, 2, port, lo_roots[0], good_args + ["--json"], links=True, hca="=lo")
    report = report_of(lo_roots[1], "hostB")
    fake = Peer(port, token=TOKEN)
    fake.send(1, dict(report, rank=1))
    frames = []
    while True:  # one exchange per connection: a frame each way
        got = fake.receive()
        fake.close()
        if got is None:
            break
        typ, body = got
        frames.append(typ)
        if typ == 2:  # the verdict
            break
        fake = Peer(port, token=TOKEN)
        if typ == 3:  # a step: answered with results whose schema is a number
            fake.send(4, {"schema": 1, "step": body["step"], "results": []})
        elif typ == 7:  # come back later
            time.sleep(body["ms"] / 1000)
            fake.send(6, {})
    (rc, o, e), = finish([r0])
    check(rc == 2 and o.startswith("{"), f"odd results: rank 0 ends with its verdict, exit 2 ({rc}, {e.strip()[-300:]})")
    check("rank 1 (hostB) did not answer step 0: not step results" in e, f"odd results: rank 1 named ({e.strip()[-300:]})")
    check(frames == [3, 2], f"odd results: one step, no more once lost, then the verdict ({frames})")
    v = json.loads(o) if o.startswith("{") else {"findings": []}
    lost = [f["detail"] for f in v["findings"] if f["id"] == "preflight.node_lost"]
    failed = [f["detail"] for f in v["findings"] if f["id"] == "link.failed"]
    check(len(lost) == 1 and lost[0].startswith("rank 1 (hostB) did not answer step 0"),
          f"odd results: preflight.node_lost names rank 1 ({lost})")
    check(failed and all("rank 1 (hostB) did not answer step 0" in d for d in failed) and "no netbench client" not in e,
          f"odd results: every link with rank 1 blames it, rank 0 runs none of its later tasks ({failed}, {e.strip()[-300:]})")

print("FAILED: %d" % len(FAILS) if FAILS else "all passed")
sys.exit(1 if FAILS else 0)
