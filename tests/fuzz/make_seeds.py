#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora of tests/fuzz/corpus/<harness>/ from the wire formats as documented
(plugin/net/verbs/setup/handshake.h, plugin/net/tcp/wire.h, docs/tuner.md, docs/profile-format.md,
tools/preflight/*.h).
Run from the repository root: python3 tests/fuzz/make_seeds.py (the seeds are committed)."""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(harness, name, data):
    d = os.path.join(ROOT, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# --- verbs handshake (little-endian, length-prefixed strings)
def s(text):
    return bytes([len(text)]) + text.encode()


def device(name, netdev, ll, gid, gt, mtu, rkey):
    return (s(name) + s(netdev) + struct.pack("<BB", 1, ll) + gid +
            struct.pack("<HBBHIII", 3, gt, mtu, 0, 1500, 100000, rkey))


GID_V4 = bytes(10) + b"\xff\xff" + bytes([10, 0, 0, 1])
GID_LL = b"\xfe\x80" + bytes(6) + bytes(range(8))


def end(host, devs, qpns, eager=4096):
    out = s(host) + bytes([len(devs)]) + b"".join(devs)
    out += struct.pack("<BBBQI", len(qpns) or 1, 0, 0, 0x7f0000001000, eager)
    out += struct.pack("<H", len(qpns)) + b"".join(struct.pack("<I", q) for q in qpns)
    return out


def vheader(mtype, body):
    return struct.pack("<IHHI", 0x4D4E5352, 2, mtype, len(body))


def verbs_seeds():
    h = "verbs_handshake"
    handle = struct.pack("<IHHBBH", 0x314E5352, 2, 128, 4, 0, 41234) + bytes([10, 0, 0, 1]) + bytes(12)
    handle += struct.pack("<QQ", 0x1122334455667788, 0)
    write(h, "handle_v4", b"\x00" + handle + bytes(128 - len(handle)))
    h6 = struct.pack("<IHHBBH", 0x314E5352, 2, 128, 6, 0, 5000) + b"\xfe\x80" + bytes(13) + b"\x01"
    h6 += struct.pack("<QQ", 7, 99)
    write(h, "handle_v6", b"\x00" + h6 + bytes(128 - len(h6)))
    eth = device("rxe0", "vethA", 2, GID_V4, 3, 3, 0x1234)
    ib = device("mlx5_0", "", 1, GID_LL, 1, 5, 0x99)
    hello = struct.pack("<Q", 0x1122334455667788) + end("nodeA", [eth], [])
    reply = b"\x00" + end("nodeB", [eth, eth], [0x11, 0x12, 0x13, 0x14], eager=0)
    reject = b"\x01" + end("nodeB", [ib], [0xFFFFFF])
    qpns = struct.pack("<H", 2) + struct.pack("<II", 0x21, 0x22)
    ready = b"\x00"
    for name, mtype, body in [("hello", 1, hello), ("reply", 2, reply), ("reply_reject", 2, reject),
                              ("qpns", 3, qpns), ("ready", 4, ready)]:
        write(h, "msg_" + name, b"\x01" + vheader(mtype, body) + body)
        write(h, "body_" + name, bytes([mtype + 1]) + body)


# --- verbs failover notices (plugin/net/verbs/failover/failover_message.h): byte 0 the QP count - 1,
# byte 1 the target (0 decode, 1 ledger, 2 plan)
def notice(kind, epoch, qps, next_seq=0, held=()):
    out = struct.pack("<BBIQ", 2, kind, epoch, qps)
    if kind in (2, 4):
        out += struct.pack("<Q", next_seq)
    if kind == 2:
        out += struct.pack("<H", len(held))
        out += b"".join(struct.pack("<HIQ", t, seq, parts) for t, seq, parts in held)
    return out


def failover_seeds():
    h = "verbs_failover"
    write(h, "move", bytes([3, 0]) + notice(1, 1, 0b0101))
    write(h, "held", bytes([3, 0]) + notice(2, 1, 0b0101, 42, [(3, 7, 0b10), (9, 8, 0)]))
    write(h, "probe", bytes([1, 0]) + notice(3, 2, 0b10))
    write(h, "restored", bytes([1, 0]) + notice(4, 2, 0b10))
    write(h, "restored_answer", bytes([1, 0]) + notice(4, 2, 0b10, 17))
    # expect target 5 seq 11 in 3 parts, parts 0 and 2 by QP, part 1 by a replayed immediate
    ledger = (b"\x00" + struct.pack("<HI", 5, 11) + b"\x03" + b"\x01" + struct.pack("<H", 5) + b"\x00" +
              b"\x01" + struct.pack("<H", 5) + b"\x02" + b"\x02" + struct.pack("<H", 0) +
              struct.pack("<I", 0x40010005))
    write(h, "ledger", bytes([3, 1]) + ledger)
    flight = struct.pack("<Q", 0b0101) + b"\x02" + struct.pack("<H", 3) + b"\x07\x04" + struct.pack("<H", 9) + b"\x08\x04"
    write(h, "plan", bytes([3, 2]) + flight + notice(2, 1, 0b0101, 42, [(3, 3, 0b10), (9, 0, 0)]))


# --- verbs eager ring: control, limit, seq, previous message's end, immediate (offset in cache
# lines), ring size delta (cache lines), header, scattered writes
def eager_seeds():
    h = "verbs_eager"

    def seed(control, limit, seq, prev, imm, lines, hseq, size, tag, kind, req, writes=b""):
        lim = struct.pack("<I", limit) if control & 1 else struct.pack("<H", limit)
        return (bytes([control]) + lim + struct.pack("<QIHb", seq, prev, imm, lines) +
                struct.pack("<QIiIIQ", hseq, size, tag, kind, req, 1) + writes)

    ring = 32768  # ring_bytes(4096)
    write(h, "data", seed(0, 4096, 1, 0, 0, 0, 1, 100, 5, 1, 0, struct.pack("<H", 1) + b"payload!"))
    write(h, "data_full", seed(0, 4096, 64, 640, 10, 0, 64, 4096, -1, 1, 0))
    write(h, "data_wraps", seed(0, 4096, 70, 3 * ring - 64, 0, 0, 70, 100, 3, 1, 0))
    write(h, "rts", seed(0, 4096, 65, 128, 2, 0, 65, 1 << 20, 7, 2, 31))
    write(h, "hostile_rewrite", seed(2, 256, 130, 0, 0, 0, 130, 256, 1, 1, 0, struct.pack("<H", 4) + b"\xff" * 8))
    write(h, "ring_short", seed(0, 1024, 3, 0, 0, -1, 3, 10, 0, 1, 0))
    write(h, "limit_too_big", seed(1, 70000, 1, 0, 0, 0, 1, 10, 0, 1, 0))
    write(h, "no_eager", seed(0, 0, 2, 64, 1, 0, 2, 1, 0, 2, 0))


# --- TCP wire (fixed offsets, host = little-endian)
def fnv1a(b):
    x = 2166136261
    for c in b:
        x = ((x ^ c) * 16777619) & 0xFFFFFFFF
    return x


def tcp_seeds():
    h = "tcp_wire"
    for name, fam, addr in [("handle_v4", 4, bytes([192, 168, 1, 2]) + bytes(12)),
                            ("handle_v6", 6, b"\xfd\x00" + bytes(13) + b"\x02")]:
        b = bytearray(128)
        struct.pack_into("<IHHH", b, 0, 0x31545352, 1, fam, 41000)
        b[12:28] = addr
        struct.pack_into("<Q", b, 28, 0xDEADBEEF01)
        struct.pack_into("<I", b, 36, fnv1a(bytes(b[:36])))
        struct.pack_into("<Q", b, 40, 5)
        write(h, name, b"\x00" + bytes(b))
    for name, role, idx, n in [("hello_control", 0, 0, 4), ("hello_data", 1, 3, 4)]:
        b = bytearray(64)
        struct.pack_into("<IHHQQHHHHII", b, 0, 0x48545352, 1, role, 0xDEADBEEF01, 77, idx, n, 16, 0,
                         65536, 4096)
        b[40:45] = b"nodeA"
        write(h, name, b"\x01" + bytes(b))
    for code in range(3):
        write(h, "ack_%d" % code, b"\x02" + struct.pack("<IHH", 0x41545352, 1, code) + bytes(8))
    write(h, "header", b"\x03" + struct.pack("<QiI", 1 << 20, 7, 3))
    for name, size, socks, chunk, seq in [("plan_small", 100, 3, 65536, 1), ("plan_big", 1 << 30, 63, 65536, 12345),
                                          ("plan_even", 4 << 20, 15, 512, 2), ("plan_none", 0, 0x85, 0, 0)]:
        write(h, name, b"\x04" + struct.pack("<QBIQ", size, socks, chunk, seq))


# --- tuner config: 22 bytes of communicator and call, then the text
def call(ranks, nodes, coll, nbytes, nics=0x24, pipe=1, reg=0, mask=0x1FFFFF, shape=20):
    return (struct.pack("<HHBBBBQBB", ranks, nodes, 0, 0, nics, coll, nbytes, pipe, reg) +
            struct.pack("<I", mask)[:3] + bytes([shape]))


TUNER_DOC = """node nics=8 nic_gbps=400 link_layer=infiniband
rule coll=allreduce bytes=..64K nodes=2.. algo=tree proto=ll
rule coll=allgather,reducescatter bytes=1G.. proto=simple channels=32 chunk=1M
measure coll=allreduce algo=ring proto=simple nodes=16 lat_us=45 busbw_gbps=370
"""
TUNER_CSV = """# NCCL example tuner CSV
allreduce,0,65536,tree,ll,-1,-1,-1
allreduce,65537,-1,ring,simple,16,2,16,-1,-1
broadcast,0,1048576,ring,ll128,4,-1,-1,1
"""
TUNER_MIXED = """node intra=pcie intra_gbps=24.5 nics=2 nic_gbps=100 link_layer=ethernet
rule coll=* ranks=16 regbuff=1 algo=ring   # comment
measure coll=allgather,reducescatter algo=pat proto=simple nodes=4 lat_us=12.5 busbw_gbps=40
rule coll=broadcast bytes=4K..8M pipeops=2.. proto=ll128
reducescatter,0,-1,pat,simple,-1,4,4
"""


def tuner_seeds():
    h = "tuner_config"
    write(h, "doc_example", call(128, 16, 4, 32768) + TUNER_DOC.encode())
    write(h, "nccl_csv", call(16, 2, 4, 1 << 20, pipe=3, reg=2) + TUNER_CSV.encode())
    write(h, "mixed", call(4, 4, 2, 1 << 26, nics=0x1A) + TUNER_MIXED.encode())
    write(h, "env", call(8, 1, 4, 4096) + TUNER_DOC.encode() + b"\0ring,tree\0^LL128")
    write(h, "env_per_coll", call(64, 8, 0, 1 << 30) + b"rule coll=broadcast channels=8\0allreduce:tree;broadcast:ring\0ll")
    write(h, "errors", call(2, 2, 3, 0) + b"rule coll=allreduce algo=nvls proto=ll\nmeasure coll=x\nnode nics=-1\nbogus\nallreduce,1,0,ring,ll,1,1,1\n")


# --- report: profile lines; a form feed starts the baseline
HEADER = ('{"type":"header","schema":"railscope.profile","version":1,"railscope_version":"0.1.0",'
          '"hostname":"%s","pid":4242,"start_unix_ns":1764470000000000000,"tag":"%s","net":"","net_plugin":"railscope"}')
COMM = '{"type":"comm","comm":"0x1a2b","name":"","rank":%d,"nranks":2,"nnodes":2,"abi":5,"mask":222,"unix_ns":1764470000100000000}'
COLL = ('{"type":"coll","comm":"0x1a2b","rank":%d,"nranks":2,"nnodes":2,"seq":%d,"op":"AllReduce","dtype":"ncclFloat32",'
        '"count":1048576,"bytes":%d,"root":-1,"algo":"RING","proto":"SIMPLE","channels":2,"graph":false,'
        '"start_unix_ns":%d,"end_unix_ns":%d,"time_us":%s,"timing":"gpu","algbw_gbs":20.97,"busbw_gbs":%s,'
        '"complete":true,"waits":[{"ch":0,"peer":%d,"dir":"send","steps":8,"bytes":2097152,"peer_wait_us":12.5,'
        '"net_us":80.0,"gpu_wait_us":3.1}],"waits_dropped":0}')
P2P = ('{"type":"p2p","comm":"0x1a2b","rank":0,"nranks":2,"seq":9,"op":"Send","peer":1,"bytes":4096,'
       '"start_unix_ns":1,"end_unix_ns":2,"time_us":1.0,"complete":false}')
DIAG = ('{"type":"diag","id":"net.stall","severity":"warning","comm":"0x1a2b","rank":1,"op":"AllReduce","seq":3,'
        '"detail":"rank 1 waited","fix":"check the link","unix_ns":1764470000300000000}')
SUMMARY = '{"type":"summary","comm":"0x1a2b","rank":0,"colls":4,"incomplete":0,"dropped":{"coll":0,"net":3},"unix_ns":1}'


def profile(host, tag, times):
    lines = [HEADER % (host, tag)]
    for rank in range(2):
        lines.append(COMM % rank)
        for seq, (t, bw) in enumerate(times):
            start = 1764470000200000000 + seq * 1000000 + rank * 5000
            lines.append(COLL % (rank, seq, 4194304 >> seq, start, start + 210000, t, bw, 1 - rank))
    return "\n".join(lines) + "\n"


def report_seeds():
    h = "report"
    run = profile("n1", "", [("200.0", "36.7"), ("120.5", "20.1"), ("80.0", "11.0")])
    write(h, "run", run + DIAG + "\n" + SUMMARY + "\n")
    write(h, "run_baseline", run + "\f" + profile("n2", "ib", [("150.0", "48.9"), ("100.0", "25.0")]))
    write(h, "mixed_bad_lines", HEADER % ("n3", "x") + "\nnot json\n" + P2P + "\n" + DIAG + "\n{\"type\":\"coll\"}\n"
          + '{"type":"header","schema":"other","version":7}\n')
    # A run file whose name is not UTF-8 (after the second form feed), with a line that is skipped: the
    # problem names the file, and the JSON output must still be UTF-8.
    write(h, "name_not_utf8", (run + "not json\n\f" + profile("n2", "ib", [("150.0", "48.9")]) + "\f").encode()
          + b"n1-\xff\xc3(-4242")


# --- preflight: byte 0 the reader (low 3 bits: 0 report, 1 step, 2 results, 3 verdict sealed by the
# other end; 4 a raw frame, 5 a raw hello), bit 3 no job secret, bits 4-7 a bit to flip in the sealed
# frame; byte 1 the step, byte 2 the most results, then a frame's JSON or raw bytes
# (tools/preflight/frame_auth.h, node_report.h, link_plan.h, verdict.h)
NIC = {"device": "mlx5_0", "port": 1, "state": "ACTIVE", "link_layer": "Ethernet", "netdev": "eth2",
       "active_mtu": 4096, "speed_mbps": 400000, "fw_ver": "28.39.1002", "gid_type": "RoCE v2",
       "gid_family": "AF_INET", "ipv4": "10.0.0.7", "subnet": "10.0.0.0/24"}
REPORT = {"schema": "railscope.preflight.node/1", "rank": 1, "host": "node07",
          "nics": [NIC, dict(NIC, device="mlx5_1", netdev="eth3", ipv4="10.0.1.7", subnet="10.0.1.0/24")],
          "nccl_env": {"NCCL_IB_HCA": "=mlx5_0,mlx5_1", "NCCL_IB_GID_INDEX": "3"},
          "findings": [{"id": "node.pfc_off", "severity": "warning", "detail": "eth2: PFC off on priority 3"}],
          "doctor_exit": 1}
TASK = {"rail": 0, "server": True, "dev": "mlx5_0", "port": 1, "netdev": "eth2", "oob_host": "10.0.0.7",
        "oob_port": 29501, "measure": "bandwidth"}
COUNTERS = {"port": "mlx5_0:1", "readable": True, "infiniband": False, "seconds": 1.5,
            "deltas": [{"name": "out_of_sequence", "source": "hw_counters", "delta": 412}]}


def preflight_seeds():
    import json
    h = "preflight_wire"
    frame = lambda reader, step, most, body: bytes([reader, step, most]) + json.dumps(body).encode()
    write(h, "report", frame(0, 0, 0, REPORT))
    write(h, "report_ib", frame(0, 0, 0, dict(REPORT, nics=[dict(NIC, link_layer="InfiniBand", netdev="",
                                                                      gid_type="IB", gid_family="", ipv4="")])))
    write(h, "step", frame(1, 2, 0, {"schema": "railscope.preflight.step/1", "step": 2,
                                     "tasks": [TASK, dict(TASK, rail=1, server=False, measure="latency")]}))
    write(h, "results", frame(2, 2, 2, {"schema": "railscope.preflight.results/2", "step": 2, "results": [
        {"rail": 0, "ok": True, "gbs": 48.5, "lat_us": 0, "error": "", "counters": COUNTERS},
        {"rail": 1, "ok": False, "gbs": 0, "lat_us": 0, "error": "netbench client: exit status 2"}]}))
    # An earlier rank's results: version 1, bandwidth "GBps".
    write(h, "results_v1", frame(2, 2, 2, {"schema": "railscope.preflight.results/1", "step": 2, "results": [
        {"rail": 0, "ok": True, "GBps": 48.5, "lat_us": 0, "error": ""}]}))
    write(h, "verdict", frame(3, 0, 0, {"schema": "railscope.preflight.verdict/1", "exit_code": 1, "findings": 3,
                                        "joined": 2, "world": 2, "mine": ["[node.pfc_off] node07: eth2"]}))
    write(h, "report_unauthenticated", frame(0x08, 0, 0, REPORT))
    write(h, "report_tampered", frame(0x30, 0, 40, REPORT))
    body = json.dumps(dict(REPORT, rank=1)).encode()
    raw = lambda typ, rank, payload: struct.pack(">IIII", 0x52535033, typ, rank, len(payload)) + payload
    write(h, "raw_report_untagged", bytes([0x0c, 0, 0]) + raw(1, 1, body))
    write(h, "raw_report_forged_tag", bytes([4, 0, 0]) + raw(1, 1, body) + bytes(32))
    write(h, "raw_hello", bytes([5, 0, 0]) + raw(5, 1, b"\x01" + bytes(range(32))))
    write(h, "raw_old_magic", bytes([4, 0, 0]) + struct.pack(">III", 0x52535046, 1, len(body)) + body)


# --- socket frames (tests/fuzz/socket_frames.cpp): max body / 4, write sizes, then 'F', u32 LE length, body
def socket_frame(body):
    return b"F" + struct.pack("<I", len(body)) + body


def socket_frames_seeds():
    h = "socket_frames"
    write(h, "two_frames", bytes([64, 3]) + socket_frame(b"hello") + socket_frame(b""))
    write(h, "cut_in_body", bytes([64, 1]) + socket_frame(b"0123456789")[:9])
    write(h, "over_the_maximum", bytes([1, 7]) + b"F" + struct.pack("<I", 5) + b"12345")
    write(h, "huge_length", bytes([255, 60]) + b"F" + struct.pack("<I", 0xFFFFFFFF))
    write(h, "bad_magic_after_a_frame", bytes([16, 2]) + socket_frame(b"ok") + b"GET / HTTP/1.0\r\n")


if __name__ == "__main__":
    verbs_seeds()
    failover_seeds()
    eager_seeds()
    tcp_seeds()
    tuner_seeds()
    report_seeds()
    preflight_seeds()
    socket_frames_seeds()
