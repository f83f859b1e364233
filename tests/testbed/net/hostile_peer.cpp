// SPDX-License-Identifier: Apache-2.0
// Test-bed program: a hostile peer against the real plugin. The victim loads the net plugin through its
// ABI as NCCL does; the hostile end is railscope's own verbs engine linked in, which speaks the
// handshake correctly and then uses the connection's QP to RDMA-write where the protocol lets the
// peer write, with values no honest peer sends:
//   ring-held   the victim's eager ring headers rewritten (size 1 MiB, other request index) after the
//               victim took the messages in and holds them for receives not posted yet. The victim's
//               later receives must get the bytes that were sent, with their sizes.
//   ring-early  the same rewrite before the victim looked at the ring: the victim must refuse the
//               messages with peer.bad_handshake, and nothing else (no crash, no wrong byte, no hang).
//   mailbox     the victim sends a large message (request-to-send) and the hostile receiver answers
//               with forged clear-to-sends (a target out of range): the victim's send fails with
//               peer.bad_handshake.
//   ahead       before the victim sends, the hostile receiver fills the entries where an honest one
//               writes clear-to-sends ahead of its receives (eager.h) with forged ones for the victim's
//               first send (its tag, ordinal 1, a target out of range): the victim's send fails with
//               peer.bad_handshake at once.
//   replay      the receiver-driven protocol over a virtual NIC (rxe0+rxe1 at both ends): the victim
//               posts a receive, and the hostile sender answers its clear-to-send with the immediate a
//               failover's replay ends with (receiver_driven_targets.h, kReplayImm | slot) when no
//               failover took place: the victim's receive fails with peer.bad_handshake naming it, and
//               not one byte lands in its buffer.
// usage: hostile_peer victim MODE DIR | hostile MODE DIR   (DIR: files the two processes meet through)
#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "abi/plugin_loader.h"
#include "check.h"
#include "plugin/net/verbs/eager/eager.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven.h"
#include "plugin/net/verbs/receiver_driven/receiver_driven_targets.h"
#include "plugin/net/verbs/recv_comm.h"
#include "plugin/net/verbs/send_comm.h"
#include "plugin/net/verbs/verbs_engine.h"
#include "railscope/nccl/net.h"

using namespace railscope;
using namespace railscope::abi_test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kMessages = 8;
constexpr int kHeldTagBase = 40;
constexpr size_t kBig = 1u << 20;  // the size a rewritten header claims, and each receive's capacity

size_t message_size(int i) { return 100 + 37 * static_cast<size_t>(i); }
uint8_t pattern(int i, size_t k) { return static_cast<uint8_t>(i * 31 + k * 7 + 1); }

void touch(const std::string& path) { std::ofstream(path) << "1"; }
bool wait_file(const std::string& path, int seconds = 90) {
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (!std::filesystem::exists(path)) {
    if (Clock::now() > deadline) {
      std::fprintf(stderr, "no %s within %d s\n", path.c_str(), seconds);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// ---------------------------------------------------------------- the victim: the plugin through its ABI
struct Plugin {
  LoadedPlugin plugin;
  const ncclNet_v11_t* t = nullptr;
  void* ctx = nullptr;
  bool open() {
    plugin = load(PluginKind::Net, built_plugin_path(PluginKind::Net), NcclRelease::V2_28_9);
    if (!plugin) return std::fprintf(stderr, "cannot load the plugin: %s\n", plugin.error.c_str()), false;
    t = static_cast<const ncclNet_v11_t*>(plugin.table);
    ncclNetCommConfig_v11_t config{-1};
    return t->init(&ctx, 0xabc, &config, CapturedLog::logger, nullptr) == ncclSuccess;
  }
  int device(const char* name) const {
    int n = 0;
    t->devices(&n);
    for (int d = 0; d < n; ++d) {
      ncclNetProperties_v11_t p{};
      if (t->getProperties(d, &p) == ncclSuccess && std::strcmp(p.name, name) == 0) return d;
    }
    return -1;
  }
};

// Listens on dev, leaves the handle in DIR for the other process and accepts its connection.
bool listen_and_accept(const Plugin& net, int dev, const std::string& dir, void** lc, void** rc) {
  std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
  if (net.t->listen(net.ctx, dev, handle.data(), lc) != ncclSuccess) return false;
  std::ofstream(dir + "/handle.tmp", std::ios::binary)
      .write(reinterpret_cast<const char*>(handle.data()), static_cast<std::streamsize>(handle.size()));
  std::filesystem::rename(dir + "/handle.tmp", dir + "/handle");
  ncclNetDeviceHandle_v11_t* dh = nullptr;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (*rc == nullptr)
    if (net.t->accept(*lc, rc, &dh) != ncclSuccess || Clock::now() > deadline) return false;
  return true;
}

// Tests req until done or failed; returns the test() result (ncclSuccess with *done when finished).
ncclResult_t wait_req(const ncclNet_v11_t* t, void* req, int* size, int seconds = 60) {
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  int done = 0;
  while (!done) {
    if (ncclResult_t r = t->test(req, &done, size); r != ncclSuccess) return r;
    if (!done && Clock::now() > deadline) return ncclInternalError;
  }
  return ncclSuccess;
}

bool logged(const char* id) {
  for (const auto& l : CapturedLog::lines())
    if (l.text.find(id) != std::string::npos) return true;
  return false;
}

// Receives the hostile sender's messages. ring-held: first a receive with a tag nobody sends, tested a
// few times, so the messages arrive and are held; then, once the headers were rewritten, the receives
// for them.
int victim_receiver(const std::string& mode, const std::string& dir) {
  Plugin net;
  if (!net.open()) return 1;
  const int dev = net.device("rxe1");
  CHECK(dev >= 0, "no rxe1");
  void* lc = nullptr;
  void* rc = nullptr;
  if (!listen_and_accept(net, dev, dir, &lc, &rc)) return 1;
  std::vector<uint8_t> buf(kBig * (kMessages + 1), 0xee);
  void* mr = nullptr;
  CHECK(net.t->regMr(rc, buf.data(), buf.size(), NCCL_PTR_HOST, &mr) == ncclSuccess, "regMr");
  if (!wait_file(dir + "/sent")) return 1;
  if (mode == "ring-held") {
    // A receive no message matches: testing it polls the CQ, so every message arrives and is held.
    void* idle = nullptr;
    void* data = buf.data() + kBig * kMessages;
    size_t cap = kBig;
    int tag = 999;
    while (idle == nullptr)
      CHECK(net.t->irecv(rc, 1, &data, &cap, &tag, &mr, nullptr, &idle) == ncclSuccess, "irecv");
    for (int i = 0; i < 2000; ++i) {
      int done = 0, size = 0;
      CHECK(net.t->test(idle, &done, &size) == ncclSuccess && !done, "the idle receive");
    }
    touch(dir + "/held");
    if (!wait_file(dir + "/forged")) return 1;
  }
  int failed = 0;
  for (int i = 0; i < kMessages; ++i) {
    void* req = nullptr;
    void* data = buf.data() + kBig * static_cast<size_t>(i);
    size_t cap = kBig;
    int tag = kHeldTagBase + i;
    ncclResult_t r = ncclSuccess;
    const auto post_deadline = Clock::now() + std::chrono::seconds(30);
    while (req == nullptr && r == ncclSuccess && Clock::now() < post_deadline)
      r = net.t->irecv(rc, 1, &data, &cap, &tag, &mr, nullptr, &req);
    int got = -1;
    if (r == ncclSuccess && req != nullptr) r = wait_req(net.t, req, &got, 30);
    if (r != ncclSuccess) {
      ++failed;
      break;  // the connection failed: every later call reports the same
    }
    CHECK(got == static_cast<int>(message_size(i)), "message %d: %d bytes received, %zu sent", i, got,
          message_size(i));
    bool same = got == static_cast<int>(message_size(i));
    for (size_t k = 0; same && k < message_size(i); ++k) same = buf[kBig * i + k] == pattern(i, k);
    CHECK(same, "message %d: bytes differ from what was sent", i);
    CHECK(buf[kBig * i + message_size(i)] == 0xee, "message %d: byte after the message overwritten", i);
  }
  if (mode == "ring-held") {
    CHECK(failed == 0, "ring-held: the receives failed (the checked header copies should be used)");
  } else {
    CHECK(failed == 1, "ring-early: the forged messages were not refused");
    CHECK(logged("peer.bad_handshake") && logged("malformed ring message"),
          "ring-early: no peer.bad_handshake naming the malformed ring message");
  }
  touch(dir + "/done");
  net.t->closeRecv(rc);
  net.t->closeListen(lc);
  std::printf("victim %s: %s\n", mode.c_str(), g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

// A virtual NIC of rxe0 and rxe1 through the ABI (makeVDevice), as NCCL fuses a node's NICs.
int vdevice(const Plugin& net) {
  ncclNetVDeviceProps_v11_t vp{};
  vp.ndevs = 2;
  vp.devs[0] = net.device("rxe0");
  vp.devs[1] = net.device("rxe1");
  int vd = -1;
  if (vp.devs[0] < 0 || vp.devs[1] < 0 || net.t->makeVDevice(&vd, &vp) != ncclSuccess) return -1;
  return vd;
}

// replay: one receive, answered by a replayed immediate no failover asked for.
int victim_replay(const std::string& dir) {
  Plugin net;
  if (!net.open()) return 1;
  const int dev = vdevice(net);
  CHECK(dev >= 0, "no virtual NIC of rxe0 and rxe1");
  if (dev < 0) return 1;
  void* lc = nullptr;
  void* rc = nullptr;
  if (!listen_and_accept(net, dev, dir, &lc, &rc)) return 1;
  std::vector<uint8_t> buf(kBig, 0xee);
  void* mr = nullptr;
  CHECK(net.t->regMr(rc, buf.data(), buf.size(), NCCL_PTR_HOST, &mr) == ncclSuccess, "regMr");
  void* req = nullptr;
  void* data = buf.data();
  size_t cap = kBig;
  int tag = 1;
  ncclResult_t r = ncclSuccess;
  while (req == nullptr && r == ncclSuccess) r = net.t->irecv(rc, 1, &data, &cap, &tag, &mr, nullptr, &req);
  CHECK(r == ncclSuccess && req != nullptr, "irecv");
  touch(dir + "/posted");
  int size = -1;
  if (req != nullptr) r = wait_req(net.t, req, &size, 60);
  CHECK(r != ncclSuccess, "replay: a receive answered by a replayed immediate alone completed (%d bytes)",
        size);
  CHECK(logged("peer.bad_handshake") && logged("replayed immediate"),
        "replay: no peer.bad_handshake naming the replayed immediate");
  for (const auto& l : CapturedLog::lines())
    if (l.text.find("peer.bad_handshake") != std::string::npos) std::printf("victim: %s\n", l.text.c_str());
  bool untouched = true;
  for (uint8_t b : buf) untouched = untouched && b == 0xee;
  CHECK(untouched, "replay: bytes landed in the receive buffer");
  touch(dir + "/done");
  net.t->closeRecv(rc);
  net.t->closeListen(lc);
  std::printf("victim replay: %s\n", g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

// Sends a large message to the hostile receiver, whose clear-to-sends are forged: the send must fail.
int victim_sender(const std::string& mode, const std::string& dir) {
  Plugin net;
  if (!net.open()) return 1;
  const int dev = net.device("rxe0");
  std::array<std::byte, NCCL_NET_HANDLE_MAXSIZE> handle{};
  if (!wait_file(dir + "/handle")) return 1;
  std::ifstream(dir + "/handle", std::ios::binary)
      .read(reinterpret_cast<char*>(handle.data()), static_cast<std::streamsize>(handle.size()));
  void* sc = nullptr;
  ncclNetDeviceHandle_v11_t* dh = nullptr;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (sc == nullptr)
    if (net.t->connect(net.ctx, dev, handle.data(), &sc, &dh) != ncclSuccess || Clock::now() > deadline)
      return 1;
  std::vector<uint8_t> buf(kBig, 0x5a);
  void* mr = nullptr;
  CHECK(net.t->regMr(sc, buf.data(), buf.size(), NCCL_PTR_HOST, &mr) == ncclSuccess, "regMr");
  if (mode == "ahead" && !wait_file(dir + "/forged")) return 1;
  void* req = nullptr;
  ncclResult_t r = ncclSuccess;
  while (req == nullptr && r == ncclSuccess) r = net.t->isend(sc, buf.data(), kBig, 1, mr, nullptr, &req);
  touch(dir + "/sent");
  int size = 0;
  if (r == ncclSuccess) r = wait_req(net.t, req, &size, 60);
  CHECK(r != ncclSuccess, "%s: a send answered by a forged clear-to-send completed", mode.c_str());
  CHECK(logged("peer.bad_handshake") && logged("clear-to-send with status"),
        "%s: no peer.bad_handshake naming the forged clear-to-send", mode.c_str());
  touch(dir + "/done");
  net.t->closeSend(sc);
  std::printf("victim %s: %s\n", mode.c_str(), g_failures == 0 ? "PASS" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

// ---------------------------------------------------------------- the hostile end: the engine linked in
int device_index(net::Engine& e, const char* name) {
  int n = 0;
  (void)e.devices(&n);
  for (int d = 0; d < n; ++d) {
    net::DeviceProps p;
    if (e.properties(d, &p).ok() && std::strcmp(p.name, name) == 0) return d;
  }
  return -1;
}

// One signalled RDMA write of `bytes` from src (registered in `mr` on every lane) to the peer's
// address `remote` on the connection's QP 0, waited for on that lane's CQ.
bool raw_write(net::verbs::Connection& c, const void* src, uint32_t bytes, uint32_t lkey, uint64_t remote,
               uint32_t rkey) {
  const auto& ql = c.qps()[0];
  ibv_sge sge{reinterpret_cast<uint64_t>(src), bytes, lkey};
  ibv_send_wr wr{};
  wr.wr_id = 0xbad;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(ql.qp.get(), &wr, &bad) != 0) return false;
  ibv_cq* cq = c.lanes()[static_cast<size_t>(ql.lane)].cq.get();
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    ibv_wc wc{};
    if (ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 0xbad) return wc.status == IBV_WC_SUCCESS;
  }
  return false;
}

// Connects to the victim through the handle it left in DIR; null when that fails.
net::SendComm* connect_to_victim(net::Engine& engine, int dev, const std::string& dir) {
  std::array<std::byte, net::kHandleSize> handle{};
  if (!wait_file(dir + "/handle")) return nullptr;
  std::ifstream(dir + "/handle", std::ios::binary)
      .read(reinterpret_cast<char*>(handle.data()), static_cast<std::streamsize>(handle.size()));
  net::SendComm* sc = nullptr;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (sc == nullptr)
    if (!engine.connect(dev, {}, net::HandleBytes(handle), &sc).ok() || Clock::now() > deadline)
      return nullptr;
  return sc;
}

int hostile_sender(const std::string& mode, const std::string& dir) {
  net::Status st;
  auto engine = net::verbs::VerbsEngine::create({}, &st);
  if (!engine) return std::fprintf(stderr, "engine: %s\n", diag::one_line(st.finding()).c_str()), 1;
  const int dev = device_index(*engine, "rxe0");
  net::SendComm* sc = connect_to_victim(*engine, dev, dir);
  if (sc == nullptr) return 1;
  auto& c = *static_cast<net::verbs::VerbsSendComm*>(sc);
  CHECK(c.eager_max() > 0, "the eager protocol was not agreed");
  // NCCL's isend reaches the protocol directly (transport.h SendFn), not through the engine.
  CHECK(sc->sender != nullptr, "the eager protocol set no sender");
  std::vector<uint8_t> payload(4096 * kMessages);
  net::MemHandle* mr = nullptr;
  CHECK(engine->reg_mr(sc, payload.data(), payload.size(), NCCL_PTR_HOST, &mr).ok(), "reg_mr");
  for (int i = 0; i < kMessages; ++i) {
    uint8_t* p = payload.data() + 4096 * static_cast<size_t>(i);
    for (size_t k = 0; k < message_size(i); ++k) p[k] = pattern(i, k);
    net::Request* req = nullptr;
    while (req == nullptr)
      CHECK(sc->sender(sc, p, message_size(i), kHeldTagBase + i, mr, nullptr, &req) == ncclSuccess, "isend");
    int done = 0, size = 0;
    while (!done) CHECK(net::test(req, &done, &size) == ncclSuccess, "test");
  }
  if (mode == "ring-held") {  // the victim takes the messages in and holds them, then we rewrite
    touch(dir + "/sent");
    if (!wait_file(dir + "/held")) return 1;
  }
  // Rewrite every message's header in the victim's ring: 1 MiB claimed, another request index.
  net::verbs::RegisteredBuffer forged;
  CHECK(c.register_buffer(4096, IBV_ACCESS_LOCAL_WRITE, &forged).ok(), "register_buffer");
  const auto rkey = c.remote().devs[static_cast<size_t>(c.qps()[0].remote_dev)].rkey;
  const size_t ring = net::verbs::eager::ring_bytes(c.eager_max());
  uint64_t end = 0;  // where the previous message ended: the messages lie one after the other
  for (int i = 0; i < kMessages; ++i) {
    const uint64_t seq = static_cast<uint64_t>(i) + 1;
    const auto place =
        net::verbs::eager::place_after(end, net::verbs::eager::message_stride(message_size(i)), ring);
    end = place.end;
    net::verbs::eager::Header h{seq, kBig, kHeldTagBase + i, net::verbs::eager::kData, 7777, 0};
    auto* at = static_cast<char*>(forged.get()) + 64 * static_cast<size_t>(i);
    std::memcpy(at, &h, sizeof h);
    CHECK(raw_write(c, at, sizeof h, forged.mrs[0]->lkey, c.remote().addr + place.offset(ring), rkey),
          "rewrite of ring message %d", i);
  }
  touch(dir + (mode == "ring-held" ? "/forged" : "/sent"));  // ring-early: the victim looks only now
  wait_file(dir + "/done");
  (void)engine->dereg_mr(sc, mr);
  (void)engine->close_send(sc);
  std::printf("hostile %s: %s\n", mode.c_str(), g_failures == 0 ? "done" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

// replay: connects over its own virtual NIC of rxe0 and rxe1 and, once the victim posted its receive,
// writes nothing but the replayed immediate of slot 0 (zero bytes: no address is needed) on QP 0.
int hostile_replay(const std::string& dir) {
  net::Status st;
  auto engine = net::verbs::VerbsEngine::create({}, &st);
  if (!engine) return std::fprintf(stderr, "engine: %s\n", diag::one_line(st.finding()).c_str()), 1;
  const int physical[2] = {device_index(*engine, "rxe0"), device_index(*engine, "rxe1")};
  int dev = -1;
  CHECK(physical[0] >= 0 && physical[1] >= 0 && engine->make_vdevice(physical, &dev).ok(), "make_vdevice");
  net::SendComm* sc = connect_to_victim(*engine, dev, dir);
  if (sc == nullptr) return 1;
  auto& c = *static_cast<net::verbs::VerbsSendComm*>(sc);
  CHECK(c.eager_max() == 0, "the receiver-driven protocol was not agreed (RAILSCOPE_NET_EAGER_MAX=0)");
  CHECK(c.qps().size() >= 2, "%zu QPs: the virtual NIC was not used", c.qps().size());
  if (!wait_file(dir + "/posted")) return 1;
  const auto& ql = c.qps()[0];
  ibv_send_wr wr{};
  wr.wr_id = 0xbad;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(net::verbs::kReplayImm | 0u);
  ibv_send_wr* bad = nullptr;
  CHECK(ibv_post_send(ql.qp.get(), &wr, &bad) == 0, "post of the replayed immediate");
  ibv_cq* cq = c.lanes()[static_cast<size_t>(ql.lane)].cq.get();
  bool sent = false;
  const auto write_deadline = Clock::now() + std::chrono::seconds(30);
  while (!sent && Clock::now() < write_deadline) {
    ibv_wc wc{};
    if (ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 0xbad) {
      CHECK(wc.status == IBV_WC_SUCCESS, "the replayed immediate's write: status %d", wc.status);
      sent = true;
    }
  }
  CHECK(sent, "the replayed immediate's write did not complete");
  wait_file(dir + "/done");
  (void)engine->close_send(sc);
  std::printf("hostile replay: %s\n", g_failures == 0 ? "done" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

// Accepts the victim's connection; mailbox: waits for its request-to-send and answers every mailbox
// entry with a forged clear-to-send (status accept, target out of range); ahead: writes such
// clear-to-sends into every entry ahead, for the victim's first send with tag 1, before it sends.
int hostile_receiver(const std::string& mode, const std::string& dir) {
  net::Status st;
  auto engine = net::verbs::VerbsEngine::create({}, &st);
  if (!engine) return 1;
  const int dev = device_index(*engine, "rxe1");
  std::array<std::byte, net::kHandleSize> handle{};
  net::ListenComm* lc = nullptr;
  if (!engine->listen(dev, nullptr, net::HandleBytes(handle), &lc).ok()) return 1;
  std::ofstream(dir + "/handle.tmp", std::ios::binary)
      .write(reinterpret_cast<const char*>(handle.data()), static_cast<std::streamsize>(handle.size()));
  std::filesystem::rename(dir + "/handle.tmp", dir + "/handle");
  net::RecvComm* rc = nullptr;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (rc == nullptr)
    if (!engine->accept(lc, &rc).ok() || Clock::now() > deadline) return 1;
  auto& c = *static_cast<net::verbs::VerbsRecvComm*>(rc);
  CHECK(c.eager_max() > 0, "the eager protocol was not agreed");
  CHECK(rc->receiver != nullptr, "the eager protocol set no receiver");
  const bool ahead = mode == "ahead";
  if (!ahead && !wait_file(dir + "/sent")) return 1;
  // Every mailbox entry: a clear-to-send for the first request-to-send (ring seq 1), target invalid;
  // ahead: every entry for the first send of tag 1.
  constexpr size_t kEntries = net::verbs::eager::kMailboxEntries;
  static_assert(net::verbs::eager::kAheadEntries == kEntries);
  net::verbs::RegisteredBuffer forged;
  CHECK(c.register_buffer(sizeof(net::verbs::eager::ClearToSend) * kEntries, IBV_ACCESS_LOCAL_WRITE, &forged)
            .ok(),
        "register_buffer");
  auto* entries = static_cast<net::verbs::eager::ClearToSend*>(forged.get());
  for (size_t i = 0; i < kEntries; ++i) {
    entries[i] = net::verbs::eager::ClearToSend{};
    entries[i].addr = 0x1000;
    entries[i].size = ~0ull;
    entries[i].target = 0xfffffff0u;
    entries[i].status = net::verbs::eager::kAccept;
    entries[i].seq = ahead ? i + 1 : 1;
    entries[i].tag = ahead ? 1 : 0;
    entries[i].ordinal = ahead ? 1 : 0;
  }
  const auto rkey = c.remote().devs[static_cast<size_t>(c.qps()[0].remote_dev)].rkey;
  // An eager sender's region starts with its mailbox; the entries ahead follow its credit word.
  const uint64_t at = c.remote().addr + (ahead ? net::verbs::eager::kAheadOffset : 0);
  CHECK(raw_write(c, entries, static_cast<uint32_t>(sizeof(net::verbs::eager::ClearToSend) * kEntries),
                  forged.mrs[0]->lkey, at, rkey),
        "forged clear-to-send write");
  if (ahead) touch(dir + "/forged");
  wait_file(dir + "/done");
  (void)engine->close_recv(rc);
  (void)engine->close_listen(lc);
  std::printf("hostile %s: %s\n", mode.c_str(), g_failures == 0 ? "done" : "FAIL");
  return g_failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s victim|hostile ring-held|ring-early|mailbox|ahead|replay DIR\n", argv[0]);
    return 2;
  }
  const std::string role = argv[1], mode = argv[2], dir = argv[3];
  if (mode != "ring-held" && mode != "ring-early" && mode != "mailbox" && mode != "ahead" && mode != "replay")
    return 2;
  if (mode == "replay")
    return role == "victim" ? victim_replay(dir) : role == "hostile" ? hostile_replay(dir) : 2;
  const bool receiver_forges = mode == "mailbox" || mode == "ahead";
  if (role == "victim") return receiver_forges ? victim_sender(mode, dir) : victim_receiver(mode, dir);
  if (role == "hostile") return receiver_forges ? hostile_receiver(mode, dir) : hostile_sender(mode, dir);
  return 2;
}
